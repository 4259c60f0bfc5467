"""The HTML helpers of the pages (prunecheck.sim.support.html)."""

from __future__ import annotations

from prunecheck.sim.support.html import markdown, page


def test_markdown_subset_renders_what_prunecheck_writes() -> None:
    text = "\n".join(
        [
            "# Title",
            "",
            "A **bold** word and `a<b>` and *this*",
            "carried on.",
            "",
            "> “a quote”",
            "",
            "- [x.png](x.png)",
            "- two",
            "",
            "1. first",
            "2. second",
            "",
            "    prunecheck replay trace.json   # a command",
            "",
            "| a | b |",
            "|---|---|",
            "| 1 | `2` |",
        ]
    )
    assert markdown(text).splitlines() == [
        '<h1 id="title">Title</h1>',
        "<p>A <strong>bold</strong> word and <code>a&lt;b&gt;</code> and <em>this</em> "
        "carried on.</p>",
        "<blockquote>“a quote”</blockquote>",
        '<ul><li><a href="x.png">x.png</a></li><li>two</li></ul>',
        "<ol><li>first</li><li>second</li></ol>",
        "<pre>prunecheck replay trace.json   # a command</pre>",
        "<table>",
        "<tr><th>a</th><th>b</th></tr>",
        "<tr><td>1</td><td><code>2</code></td></tr>",
        "</table>",
    ]


def test_a_line_that_only_looks_like_a_block_is_a_paragraph() -> None:
    assert markdown("#hashtag\n-dash") == "<p>#hashtag -dash</p>"


def test_the_page_needs_no_network() -> None:
    html = page("t <x>", "<p>body</p>")
    assert "<title>t &lt;x&gt;</title>" in html
    assert "http" not in html and "<script" not in html
