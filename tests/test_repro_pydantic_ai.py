"""The pydantic-ai reproductions of ``reports/loops/`` (issue 30), held to
:mod:`repro_check`: at most 80 lines, what the adapter writes today, exit 1
from a folder outside the repository with pydantic-ai alone, a kind the
bundle shows; told another version, exit 2 naming both.

One cell per violation kind runs in the fast suite (each costs about 1.2 s
of CPU in a child process, 1.0 s of it importing pydantic-ai), the rest are
``slow``."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest
from repro_check import Cell, cells, check_other_version_exits_2, check_reproduces

from prunecheck.sim.reports.alone import run_alone
from prunecheck.sim.subjects.loops.frameworks.pydantic_ai_repro import DIST

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


def test_the_table_has_pydantic_ai_cells() -> None:
    """A table without them would leave the tests below with nothing to run."""
    assert CELLS, f"no {PREFIX}*.json in reports/loops"


@pytest.mark.parametrize("cell", _params())
def test_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    check_reproduces(cell, tmp_path)


def test_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    check_other_version_exits_2(CELLS[0], tmp_path)


def test_a_missing_distribution_exits_2_naming_it(tmp_path: Path) -> None:
    """The version gate runs before pydantic-ai is imported: a distribution that
    is not installed is named with the version the failure was found on."""
    cell = CELLS[0]
    script = tmp_path / cell.script.name
    text = cell.script.read_text(encoding="utf-8")
    script.write_text(text.replace(f'{{"{DIST}": ', '{"pydantic-ai-gone": ', 1))
    done = run_alone(script, "pydantic-ai", tmp_path, keep_guard=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    found = version(DIST)
    assert done.stdout.strip() == (
        f"could not run: pydantic-ai-gone is not installed (found on pydantic-ai-gone {found})"
    )
