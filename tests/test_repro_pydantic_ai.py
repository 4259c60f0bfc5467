"""The pydantic-ai reproductions of ``reports/loops/`` (issue 30), held to
:mod:`repro_check`: at most 80 lines, what the adapter writes today, exit 1
from a folder outside the repository with pydantic-ai alone, a kind the
bundle shows; told another version, exit 2 naming both.

One cell per violation kind runs in the fast suite (each costs about 1.5 s
of CPU in a child process, most of it importing pydantic-ai), the rest are
``slow``."""

from __future__ import annotations

from pathlib import Path

import pytest
from repro_check import Cell, cells, check_other_version_exits_2, check_reproduces

PREFIX = "pydantic_ai_"
CELLS = cells(PREFIX)


def _kind(cell: Cell) -> str:
    expect = cell.data["expect"]
    assert isinstance(expect, list) and expect, cell
    return str(expect[0])


def _cheapest_first(cell: Cell) -> tuple[bool, bool, str]:
    """pydantic-ai's default loop before a trimming one, a guarded one last."""
    name = str(cell)
    return "guarded" in name, "plain" not in name, name


def _params() -> list[object]:
    """Each cell: one of each violation kind fast (the cheapest), the others slow."""
    seen: set[str] = set()
    fast: set[str] = set()
    for cell in sorted(CELLS, key=_cheapest_first):
        if _kind(cell) not in seen:
            seen.add(_kind(cell))
            fast.add(str(cell))
    marks = {False: (pytest.mark.slow,), True: ()}
    return [pytest.param(c, id=str(c), marks=marks[str(c) in fast]) for c in CELLS]


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("pydantic_ai")


def test_there_are_cells_of_both_kinds() -> None:
    """The table's pydantic-ai cells: a resume that reruns a finished tool, and
    a crash and new message that lose one (so each kind has a fast test)."""
    assert {_kind(c) for c in CELLS} == {"duplicated_side_effect", "silent_loss"}


@pytest.mark.parametrize("cell", _params())
def test_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    check_reproduces(cell, tmp_path)


def test_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    check_other_version_exits_2(CELLS[0], tmp_path)
