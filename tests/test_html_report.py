"""The report's page (prunecheck.sim.reports.html_report): the verdict
chart and its table, every plot by a relative link, every bundle, the
summary's tables."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from report_rows import data

from prunecheck.sim.reports.html_report import bundles_in, index_html
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
    assert '<span class="violation">UNSAFE<br>median not reached<br>18 of 80</span>' in html
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
