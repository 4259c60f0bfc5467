"""``prunecheck --help`` lists the commands in the order a user needs them
(issue 36: ``report`` came before ``check``), and the reference page
generated from the parser follows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
FIRST = ["check", "search", "explore", "replay", "import", "shrink"]
LAST = ["sweep", "report"]


def _listed(text: str) -> list[str]:
    """The command names of the --help listing, in order."""
    block = text.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.startswith("    ")]


def test_help_lists_check_first_and_the_sweep_and_report_last(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    listed = _listed(shown)
    assert listed[: len(FIRST)] == FIRST and listed[-len(LAST) :] == LAST
    assert "start with: prunecheck check POLICY" in shown
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    sections = [line[4:-1] for line in page.splitlines() if line.startswith("## `")]
    assert sections == listed
