"""The report's page (prunecheck.sim.reports.html_report): the verdict
chart and its table, every plot by a relative link, every bundle, the
summary's tables."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_rows import data

from prunecheck.sim.reports.html_report import bundles_in, index_html, write_index
from prunecheck.sim.reports.writer import PLOTS


@pytest.fixture(scope="module")
def report(rows_report: tuple[Path, list[Path]]) -> tuple[Path, list[Path]]:
    """``write_report`` of the rows into a folder of its own (drawn once per
    worker: tests/conftest.py, shared with the browser tests)."""
    return rows_report


def test_the_page_links_every_plot_and_shows_the_verdicts(
    report: tuple[Path, list[Path]],
) -> None:
    tmp_path, files = report
    assert [f.name for f in files][-2:] == ["summary.md", "index.html"]
    html = (tmp_path / "index.html").read_text(encoding="utf-8")
    images = re.findall(r'<img src="([^"]+)"', html)
    assert images == [f.name for f in files[:-2]]
    assert set(images) <= set(PLOTS) and "verdicts.png" in images
    assert all((tmp_path / name).is_file() for name in images)  # relative links that resolve
    assert 'id="verdict-chart"' in html
    assert (
        '<span class="violation">UNSAFE<br>median not reached<br>18 of 80 sessions</span>' in html
    )
    assert "<th>session rate of any violation</th>" in html or "<table>" in html
    assert "Session rates and time to first violation, per policy and gate" in html
    assert "No reproduction bundle in this folder" in html
    assert "http://" not in html and "https://" not in html and "<script" not in html


def test_the_page_links_every_bundle_under_the_folder(tmp_path: Path) -> None:
    corpus = Path(__file__).parent / "corpus" / "orphan_in_flight_batch.json"
    for name in ("b", "a/deeper"):
        (tmp_path / "bundles" / name).mkdir(parents=True)
        shutil.copy(corpus, tmp_path / "bundles" / name / "trace.json")
    (tmp_path / "bundles" / "b" / "index.html").write_text("<p>x</p>")
    assert bundles_in(tmp_path) == [tmp_path / "bundles/a/deeper", tmp_path / "bundles/b"]
    html = index_html(data(), tmp_path, ["verdicts.png"])
    assert re.findall(r'class="bundle" href="([^"]+)"', html) == [
        "bundles/a/deeper/narrative.md",  # no page in it: its narrative
        "bundles/b/index.html",
    ]


def test_the_page_is_the_same_for_the_same_rows(report: tuple[Path, list[Path]]) -> None:
    out, _ = report
    written = (out / "index.html").read_text(encoding="utf-8")
    assert index_html(data(), out, [n for n in PLOTS if (out / n).is_file()]) == written


class _Links(HTMLParser):
    """Every ``a href`` and ``img src`` of a page, and every element ``id``."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        target = found.get("href") if tag == "a" else found.get("src") if tag == "img" else None
        if target:
            self.links.append(target)


def _links(page: Path) -> tuple[set[str], list[str]]:
    """The files a page links (relative paths, as resolved beside it), after
    checking that every link is relative, stays in the page's folder, and
    resolves: to a file there, or to an ``id`` of the page."""
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    files: set[str] = set()
    for link in parser.links:
        if link.startswith("#"):
            assert link[1:] in parser.ids, f"{page.name}: no element with id {link}"
            continue
        assert "://" not in link and not link.startswith("/"), link  # relative: a copied folder
        target = (page.parent / unquote(link.split("#", 1)[0])).resolve()
        assert target.is_relative_to(page.parent.resolve()), link
        assert target.is_file(), f"{page.name} links {link}, which is not a file beside it"
        files.add(target.relative_to(page.parent.resolve()).as_posix())
    return files, parser.links


def _needed(folder: Path, files: list[str]) -> set[str]:
    """What a reader of ``folder``'s page must reach from it: every file but
    the page itself, and of a bundle (a folder holding ``trace.json``) its
    page (or its narrative), which links the rest."""
    bundles = {p.parent.relative_to(folder).as_posix() for p in folder.rglob("trace.json")}
    needed = set()
    for name in files:
        bundle = next((b for b in bundles if name.startswith(b + "/")), None)
        if name == "index.html":
            continue
        if bundle is None:
            needed.add(name)
        else:
            entry = "index.html" if (folder / bundle / "index.html").is_file() else "narrative.md"
            needed.add(f"{bundle}/{entry}")
    return needed


def test_the_page_links_every_page_script_and_bundle_beside_it(
    report: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    _, files = report
    for f in files[:-1]:  # the plots and summary.md, not the page
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "results.jsonl").write_text("")
    for name in ("frameworks.md", "loops.md", "bench.md", "notes.md"):
        (tmp_path / name).write_text(f"# {name}\n")
    for name in ("loops/a-agent-cancel.py", "loops/a-agent-cancel.json", "frameworks/b.py",
                 "frameworks/deeper/c.py", "loops/__pycache__/x.pyc", "loops/.hidden"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    corpus = Path(__file__).parent / "corpus" / "orphan_in_flight_batch.json"
    (tmp_path / "bundles" / "one").mkdir(parents=True)
    shutil.copy(corpus, tmp_path / "bundles" / "one" / "trace.json")
    (tmp_path / "bundles" / "one" / "narrative.md").write_text("x")
    page = write_index(data(), tmp_path, [f.name for f in files[:-2]])
    linked, links = _links(page)
    present = [
        p.relative_to(tmp_path).as_posix()
        for p in tmp_path.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    ]
    assert _needed(tmp_path, present) - linked == set()
    assert "loops/__pycache__/x.pyc" not in linked and "loops/.hidden" not in linked
    assert "bundles/one/trace.json" not in linked  # the bundle's own page links it
    html = page.read_text(encoding="utf-8")
    assert "its schedule" in html and "#other" in links  # a script with its schedule


def test_the_committed_page_links_every_committed_file_of_reports() -> None:
    """``reports/index.html`` as committed: every link resolves, and every
    file of ``reports/`` in git (``loops.md``, each script and schedule, every
    plot...) is reachable from it."""
    root = Path(__file__).resolve().parent.parent
    try:
        listed = subprocess.run(
            ["git", "ls-files", "reports"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the committed files are unknown")
    files = [name.removeprefix("reports/") for name in listed]
    assert {"loops.md", "frameworks.md", "summary.md", "results.jsonl"} <= set(files)
    linked, _ = _links(root / "reports" / "index.html")
    assert _needed(root / "reports", files) - linked == set()
