"""The Google ADK reproductions in reports/loops (issue 30): each is at most 80
lines, what the adapter writes today, and run alone from a folder outside the
repository it exits 1 showing the bundle's broken request (tests/repro_check.py).
Every check loads the example agent (ADK costs about 1.3 s of CPU to import), so
all are slow (``make test-all``); tests/test_loops_adk.py's fast test checks the
script's text (80 lines, no prunecheck import) without ADK."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import repro_check
from repro_check import Cell

CELLS = repro_check.cells("adk_")

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL")]


@pytest.fixture(autouse=True)
def _framework() -> None:
    if importlib.util.find_spec("google.adk") is None:
        pytest.skip("google-adk is not installed")


def test_there_are_adk_cells() -> None:
    assert CELLS, "no reports/loops/adk_*.json: run make loops ONLY='*adk_*'"


@pytest.mark.parametrize("cell", CELLS, ids=str)
def test_the_reproduction_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    repro_check.check_reproduces(cell, tmp_path)


def test_a_reproduction_found_on_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    repro_check.check_other_version_exits_2(CELLS[0], tmp_path)


def test_a_failing_framework_import_is_could_not_run(tmp_path: Path) -> None:
    repro_check.check_a_failing_import_exits_2(CELLS[0], "google.adk.runners", tmp_path)
