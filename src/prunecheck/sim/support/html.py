"""Self-contained HTML pages: escaping, a markdown subset and the page shell.

The report's ``index.html`` and each reproduction bundle's ``index.html``
are written with these.  A page needs nothing from the network: its style
is inline, its pictures are files beside it (relative links) and it runs no
script.  The markdown subset is what prunecheck itself writes: headings,
paragraphs, ``-`` and ``1.`` lists, ``>`` quotes, pipe tables, indented
code, and inline ``code``, **bold**, *italic* and [links](target).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

__all__ = ["STYLE", "escape", "inline", "markdown", "page", "slug", "table"]

#: The pages' style sheet (inline: no network, no CDN).
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1500px; padding: 0 24px 48px; color: #1d1d1f; line-height: 1.45; }
h1 { font-size: 1.7em; margin-top: 0.8em; }
h2 { border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 10px 0 18px; font-size: 0.92em; }
th, td { border: 1px solid #d0d0d0; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 8px 12px; overflow-x: auto; white-space: pre-wrap; }
blockquote { border-left: 4px solid #ccc; margin: 8px 0; padding: 2px 12px; color: #444; }
figure { margin: 18px 0 30px; }
figure img { max-width: 100%; border: 1px solid #e3e3e3; }
figcaption { color: #555; font-size: 0.92em; }
nav a { margin-right: 14px; }
.violation { color: #a31515; font-weight: 600; }
.cost { color: #8a5a00; }
.safe { color: #1f6b1f; }
.step { border: 1px solid #e0e0e0; border-radius: 6px; margin: 10px 0; padding: 6px 12px; }
.step.bad { border-color: #e08080; background: #fff6f6; }
.step h3 { margin: 4px 0; font-size: 1em; }
.gone { text-decoration: line-through; color: #888; }
"""

_STARTS = re.compile(r"(#{1,4} |\||> |    |- |\d+\. )")
_INLINE = re.compile(r"\*\*(.+?)\*\*|\*(?!\s)(.+?)\*|\[([^\]]+)\]\(([^)\s]+)\)")


def escape(text: object) -> str:
    """``text`` as HTML text (quotes escaped too).

    >>> escape('<a href="x">')
    '&lt;a href=&quot;x&quot;&gt;'
    """
    return html.escape(str(text), quote=True)


def slug(text: str) -> str:
    """An id for a heading.

    >>> slug("Claim 1: structure-blind pruning")
    'claim-1-structure-blind-pruning'
    """
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _emphasis(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return f"<strong>{m.group(1)}</strong>"
        if m.group(2) is not None:
            return f"<em>{m.group(2)}</em>"
        return f'<a href="{m.group(4)}">{m.group(3)}</a>'

    return _INLINE.sub(one, text)


def inline(text: str) -> str:
    """One line of markdown as HTML: code spans are kept verbatim.

    >>> inline("a `<b>` and **c** [d](d.png)")
    'a <code>&lt;b&gt;</code> and <strong>c</strong> <a href="d.png">d</a>'
    """
    parts = text.split("`")
    out = []
    for i, part in enumerate(parts):
        if i % 2 and i < len(parts) - 1:
            out.append(f"<code>{escape(part)}</code>")
        else:
            out.append(_emphasis(escape(part if i % 2 == 0 else "`" + part)))
    return "".join(out)


def table(head: Sequence[str], body: Iterable[Sequence[str]], *, raw: bool = False) -> str:
    """An HTML table; cells are markdown inline text unless ``raw`` (HTML)."""
    cell = (lambda c: c) if raw else inline
    rows = ["<tr>" + "".join(f"<th>{cell(h)}</th>" for h in head) + "</tr>"]
    rows += ["<tr>" + "".join(f"<td>{cell(c)}</td>" for c in line) + "</tr>" for line in body]
    return "<table>\n" + "\n".join(rows) + "\n</table>"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown(text: str) -> str:
    """The markdown subset prunecheck writes, as HTML."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = re.match(r"(#{1,4}) (.*)", line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            out.append(f'<h{level} id="{slug(title)}">{inline(title)}</h{level}>')
            i += 1
            continue
        block: list[str] = []
        if line.startswith("|"):
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            body = [_cells(b) for b in block[2:]] if len(block) > 1 else []
            out.append(table(_cells(block[0]), body))
            continue
        for prefix, kind in (("> ", "blockquote"), ("    ", "pre")):
            if line.startswith(prefix):
                while i < len(lines) and lines[i].startswith(prefix):
                    block.append(lines[i][len(prefix) :])
                    i += 1
                inner = escape("\n".join(block)) if kind == "pre" else inline(" ".join(block))
                out.append(f"<{kind}>{inner}</{kind}>")
                break
        else:
            listed = re.match(r"(- |\d+\. )", line)
            if listed:
                tag = "ul" if listed.group(1) == "- " else "ol"
                pattern = r"- " if tag == "ul" else r"\d+\. "
                while i < len(lines) and re.match(pattern, lines[i]):
                    block.append(re.sub("^" + pattern, "", lines[i]))
                    i += 1
                items = "".join(f"<li>{inline(b)}</li>" for b in block)
                out.append(f"<{tag}>{items}</{tag}>")
                continue
            block.append(line)
            i += 1
            while i < len(lines) and lines[i].strip() and not _STARTS.match(lines[i]):
                block.append(lines[i])
                i += 1
            out.append(f"<p>{inline(' '.join(block))}</p>")
    return "\n".join(out)


def page(title: str, body: str) -> str:
    """A whole HTML document: ``body`` (HTML) under ``title``, inline style, no script."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        '<link rel="icon" href="data:,">\n'
        f"<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
