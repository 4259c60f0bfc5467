"""The report's page and a bundle's page in a real headless browser:
Playwright driving Debian's Chromium (``apt-get install chromium``; the
``playwright`` package is in the ``dev`` extra).  Each page must load from
its folder (file://, no server, no network) with no console error, no
failed request and every picture decoded, and show the verdict chart and
the steps.

Without the browser the tests skip with the reason; under CI (``CI=true``)
they fail instead, so a CI machine missing Chromium cannot pass silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_rows import data

from prunecheck.model.trace import loads
from prunecheck.sim.evidence.bundle import write_bundle
from prunecheck.sim.reports.html_report import write_index

CORPUS = Path(__file__).parent / "corpus"
#: Where Debian's chromium package puts the browser.
CHROMIUM = ("chromium", "/usr/bin/chromium")


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run in CI)", pytrace=False)
    pytest.skip(reason)


def _chromium() -> str | None:
    for name in CHROMIUM:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed: pip install -e '.[dev]'")
    path = _chromium()
    if path is None:
        _missing("no chromium on PATH: apt-get update && apt-get install -y chromium")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, rows_report: tuple[Path, list[Path]]) -> Path:
    """A report folder with one reproduction bundle in it: the rows' report
    (drawn once per worker, tests/conftest.py) copied, a bundle written into
    it, and its page written again as ``write_report`` writes it, now with
    the bundle in the folder (the plots and the summary do not read it)."""
    out = tmp_path_factory.mktemp("site")
    shutil.copytree(rows_report[0], out, dirs_exist_ok=True)
    trace = loads((CORPUS / "orphan_in_flight_batch.json").read_text(), "orphan")
    write_bundle(trace, out / "bundles" / "orphan")
    write_index(data(), out, [f.name for f in rows_report[1][:-2]])
    return out


class Visit:
    """A page opened in the browser, with every console error, uncaught
    exception and failed request it produced."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page()
        self.problems: list[str] = []
        self.page.on(
            "console",
            lambda m: (
                self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        self.page.goto(path.resolve().as_uri(), wait_until="load")

    def broken_images(self) -> list[str]:
        found: list[str] = self.page.evaluate(
            "Array.from(document.images)"
            ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
        )
        return found

    def close(self) -> None:
        self.page.close()


def test_the_report_page_loads_clean_and_shows_the_verdict_chart(
    browser: Any, folder: Path
) -> None:
    visit = Visit(browser, folder / "index.html")
    try:
        page = visit.page
        assert page.title() == "prunecheck failure-rate report"
        chart = page.locator("#verdict-chart img")
        assert chart.is_visible()
        assert page.evaluate("document.querySelector('#verdict-chart img').naturalWidth") > 500
        assert page.locator("img").count() >= 5 and not visit.broken_images()
        assert page.locator("#verdicts ~ table").first.is_visible()
        assert "UNSAFE" in page.locator("#verdicts ~ table").first.inner_text()
        assert visit.problems == []
        # the link to the bundle opens its page
        page.locator("a.bundle").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/bundles/orphan/index.html")
        assert page.locator("div.step").count() > 0
    finally:
        visit.close()
    assert visit.problems == []


def test_the_bundle_page_loads_clean_and_shows_the_steps(browser: Any, folder: Path) -> None:
    trace = loads((CORPUS / "orphan_in_flight_batch.json").read_text(), "orphan")
    visit = Visit(browser, folder / "bundles" / "orphan" / "index.html")
    try:
        page = visit.page
        steps = page.locator("div.step")
        assert steps.count() == len(trace.events)
        assert steps.first.is_visible() and steps.last.is_visible()
        assert page.locator("div.step.bad").count() >= 1
        assert "the prune:" in page.locator("#steps ~ div.step").all_inner_texts().__str__()
        assert page.locator("#request").is_visible()
        assert page.locator("img[src='timeline.png']").is_visible()
        assert not visit.broken_images()
    finally:
        visit.close()
    assert visit.problems == []


def test_a_visit_sees_console_errors_and_missing_pictures(browser: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>x</title></head><body>"
        "<img src='missing.png'><script>console.error('boom')</script></body></html>"
    )
    visit = Visit(browser, bad)
    try:
        assert visit.broken_images() and visit.broken_images()[0].endswith("/missing.png")
    finally:
        visit.close()
    assert "console error: boom" in visit.problems


@pytest.mark.parametrize(
    ("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)]
)
def test_a_missing_browser_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="apt-get install -y chromium"):
        _missing("no chromium on PATH: apt-get update && apt-get install -y chromium")
