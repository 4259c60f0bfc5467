"""The LangChain v1 / LangGraph reproductions in reports/loops (issue 30): each
is at most 80 lines, what the adapter writes today, and run alone from a folder
outside the repository it exits 1 showing the bundle's broken request or the
call that vanished (tests/repro_check.py).  One cell per violation kind runs in
the fast suite, the rest in ``make test-all``."""

from __future__ import annotations

from pathlib import Path

import pytest
import repro_check
from repro_check import Cell

CELLS = repro_check.cells("langgraph_")
#: One cell per violation kind the LangGraph cells show (fast); the rest are slow.
FAST = {
    "langgraph_plain-agent-tool_timeout",  # silent_loss
    "langgraph_plain-persistent-crash_new_message",  # provider_rejection, unanswered_call
    "langgraph_trim-agent-trim",  # invalid_prune, orphaned_result
}


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langgraph.checkpoint.sqlite.aio")


def test_the_fast_cells_cover_every_violation_kind_of_the_langgraph_cells() -> None:
    every = {kind for cell in CELLS for kind in cell.data["expect"]}
    fast = {kind for cell in CELLS if str(cell) in FAST for kind in cell.data["expect"]}
    assert {str(c) for c in CELLS} >= FAST
    assert fast == every


@pytest.mark.parametrize(
    "cell",
    [c if str(c) in FAST else pytest.param(c, marks=pytest.mark.slow) for c in CELLS],
    ids=str,
)
def test_the_reproduction_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    repro_check.check_reproduces(cell, tmp_path)


def test_a_reproduction_found_on_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    repro_check.check_other_version_exits_2(CELLS[0], tmp_path)
