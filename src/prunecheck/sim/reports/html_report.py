"""``index.html`` of the failure-rate report: the verdict chart and its
cells as a table, every plot, links to every reproduction bundle in the
report's folder, and the summary's tables.

The page is self-contained: its style is inline, it runs no script, and it
shows the plots through relative links to the PNGs beside it, so it works
from a clean clone or a copied folder without a network.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.reports.summary import summary_text
from prunecheck.sim.reports.verdict_chart import Verdict, verdict_cells
from prunecheck.sim.support.html import escape, markdown, page, slug, table
from prunecheck.sim.support.outputs import write_text

__all__ = [
    "CAPTIONS",
    "FOLDERS",
    "PAGES",
    "bundles_in",
    "files_to_link",
    "index_html",
    "write_index",
]

#: What each plot shows, for the page's captions.
CAPTIONS = {
    "verdicts.png": "Verdicts at a glance: policy × gate × where the budget check fires.",
    "survival.png": "Time to the first violation (Kaplan–Meier), for the gates that saw one.",
    "failure-vs-load.png": "Sessions per 1,000 with an incident, against load: a panel per "
    "gate × class that saw one; the others are named in the figure's title.",
    "failure-vs-tightness.png": "The same against budget tightness, at one load level.",
    "failures-by-gate.png": "What no gate costs: broken and aborted sessions per 1,000 sessions.",
    "cost-of-safety.png": "What the gates cost: overruns, spills and re-injections per 1,000 "
    "model invocations.",
    "runtime-knobs.png": "Runtime knobs: when the check fires and what a retry does; the "
    "note under each panel says which configurations differ.",
}


def bundles_in(out: Path) -> list[Path]:
    """Every reproduction bundle under ``out`` (a folder holding ``trace.json``), sorted."""
    return sorted(p.parent for p in out.rglob("trace.json") if p.is_file())


def _verdict_table(data: ReportData) -> str:
    cells = verdict_cells(data)
    if not cells:
        return ""
    head = ["policy", *(f"gate {c.gate.value}, checks {c.check_at.value}" for c in cells[0])]
    body = []
    for line in cells:
        row = [escape(line[0].policy)]
        for c in line:
            css = {Verdict.UNSAFE: "violation", Verdict.SAFE: "safe"}.get(c.verdict, "")
            row.append(f'<span class="{css}">{escape(c.text()).replace(chr(10), "<br>")}</span>')
        body.append(row)
    return table(head, body, raw=True)


def _bundles(out: Path) -> str:  # the folder's name is not written: same rows, same bytes
    found = bundles_in(out)
    if not found:
        return (
            "<p>No reproduction bundle in this folder. <code>prunecheck check POLICY --out "
            "DIR/bundles/NAME</code>, with DIR this folder (or search or explore with "
            "<code>--out</code>), writes one here, and the next report links it.</p>"
        )
    items = []
    for folder in found:
        rel = folder.relative_to(out).as_posix()
        target = f"{rel}/index.html" if (folder / "index.html").is_file() else f"{rel}/narrative.md"
        items.append(f'<li><a class="bundle" href="{escape(target)}">{escape(rel)}</a></li>')
    return "<ul>" + "".join(items) + "</ul>"


#: What each page beside the report is, for its link (a page not named here is
#: linked by its name alone).
PAGES = {
    "frameworks.md": "framework trimmers: a verdict per check placement, with a "
    "standalone reproduction of each unsafe one (make frameworks)",
    "loops.md": "real agent loops under test: a verdict per scenario class, with a "
    "standalone reproduction of each unsafe cell (make loops)",
    "known-bugs.md": "the frameworks' own historical context bugs: a ground truth and "
    "check's verdict on the buggy and the fixed release of each (make known-bugs)",
    "known-bugs.json": "the same, machine-readable",
    "bench.md": "benchmarks of this code (make bench)",
}
#: What each folder of scripts beside the report holds.
FOLDERS = {
    "frameworks": "standalone reproduction scripts of framework trimmers (frameworks.md)",
    "loops": "standalone reproduction scripts of real agent loops (loops.md), each with its "
    "schedule",
}
#: Files of the folder that the page links elsewhere (its navigation and plots).
_LINKED_ELSEWHERE = {"index.html", "summary.md", "results.jsonl"}


def _linkable(path: Path, out: Path, bundles: Sequence[Path]) -> bool:
    """A file a reader needs: not hidden, not a bytecode cache, not inside a
    bundle (the bundle's own page links its files)."""
    parts = path.relative_to(out).parts
    return (
        path.is_file()
        and not any(p.startswith(".") or p == "__pycache__" for p in parts)
        and not any(path.is_relative_to(b) for b in bundles)
    )


def files_to_link(out: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The pages (top-level ``*.md`` but the summary, and ``*.json``) and, per folder, the
    files in it (not inside a bundle, whose own page links them) that the
    page links in its "Other reports" section, as relative POSIX paths.

    A reader of the page reaches every file of the folder from it: these,
    the plots, ``summary.md``, ``results.jsonl`` and each bundle's page.
    """
    bundles = bundles_in(out)
    pages = sorted(
        p.name
        for pattern in ("*.md", "*.json")
        for p in out.glob(pattern)
        if p.is_file() and p.name not in _LINKED_ELSEWHERE
    )
    pages.sort(key=lambda n: (n not in PAGES, list(PAGES).index(n) if n in PAGES else 0, n))
    folders: dict[str, list[str]] = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found = sorted(
            f.relative_to(out).as_posix() for f in folder.rglob("*") if _linkable(f, out, bundles)
        )
        if found:
            folders[folder.name] = found
    return pages, folders


def _file_items(files: Sequence[str]) -> list[str]:
    """A list item per file; a script's schedule (``x.json`` beside ``x.py``)
    shares its script's item."""
    present = set(files)
    items = []
    for name in files:
        stem = name.rsplit(".", 1)[0]
        if name.endswith(".json") and f"{stem}.py" in present:
            continue  # linked with its script
        link = f'<a href="{escape(name)}">{escape(name.rsplit("/", 1)[-1])}</a>'
        if name.endswith(".py") and f"{stem}.json" in present:
            schedule = f"{stem}.json"
            link += (
                f' (its schedule: <a href="{escape(schedule)}">'
                f"{escape(schedule.rsplit('/', 1)[-1])}</a>)"
            )
        items.append(f"<li>{link}</li>")
    return items


def _other_files(out: Path) -> str:
    """Links to the other reports that live beside this one (framework
    verdicts, real agent loops, benchmarks) and to every script in the
    folders beside it, when present."""
    pages, folders = files_to_link(out)
    if not pages and not folders:
        return ""
    parts = ['<h2 id="other">Other reports in this folder</h2>']
    if pages:
        parts.append(
            "<ul>"
            + "".join(
                f'<li><a href="{escape(p)}">{escape(p)}</a>'
                + (f": {escape(PAGES[p])}" if p in PAGES else "")
                + "</li>"
                for p in pages
            )
            + "</ul>"
        )
    for folder, files in folders.items():
        what = FOLDERS.get(folder, "files")
        parts.append(
            f'<h3 id="folder-{escape(slug(folder))}"><code>{escape(folder)}/</code>: '
            f"{escape(what)}</h3><ul>" + "".join(_file_items(files)) + "</ul>"
        )
    return "\n".join(parts)


def index_html(data: ReportData, out: Path, plots: Sequence[str]) -> str:
    """The report page for the folder ``out`` holding ``plots``."""
    figures = "\n".join(
        f'<figure id="{escape(p.removesuffix(".png"))}"><img src="{escape(p)}" '
        f'alt="{escape(CAPTIONS.get(p, p))}"><figcaption>{escape(CAPTIONS.get(p, p))}'
        "</figcaption></figure>"
        for p in plots
        if p != "verdicts.png"
    )
    chart = (
        '<figure id="verdict-chart"><img src="verdicts.png" alt="verdict chart: policy × gate × '
        f'check placement"><figcaption>{escape(CAPTIONS["verdicts.png"])}</figcaption></figure>'
        if "verdicts.png" in plots
        else ""
    )
    summary = summary_text(data, plots).split("\n", 1)[1]  # the page has its own title
    other = _other_files(out)
    body = [
        "<h1>prunecheck failure-rate report</h1>",
        "<nav><a href='#verdicts'>Verdicts</a><a href='#figures'>Plots</a>"
        "<a href='#bundles'>Reproduction bundles</a>"
        + ("<a href='#other'>Other reports</a>" if other else "")
        + "<a href='#summary'>Tables</a>"
        "<a href='summary.md'>summary.md</a><a href='results.jsonl'>results.jsonl</a></nav>",
        f"<p>Generated by <code>{escape(data.command)}</code>. Every picture and number is "
        "computed from this folder's <code>results.jsonl</code>.</p>",
        '<h2 id="verdicts">Verdicts</h2>',
        chart,
        _verdict_table(data),
        '<h2 id="figures">Plots</h2>',
        figures,
        '<h2 id="bundles">Reproduction bundles</h2>',
        _bundles(out),
        other,
        '<h2 id="summary">Tables (summary.md)</h2>',
        markdown(summary),
    ]
    return page("prunecheck failure-rate report", "\n".join(b for b in body if b))


def write_index(data: ReportData, out: Path, plots: Sequence[str]) -> Path:
    """Write ``out/index.html``; return its path."""
    path = out / "index.html"
    write_text(path, index_html(data, out, plots))
    return path
