"""The OpenAI Agents SDK's loop reproductions (``reports/loops/openai_agents_*``)
hold the contract of :mod:`repro_check` (issue 30): each is at most 80 lines,
what the adapter writes today, and, run alone from a folder outside the
repository, exits 1 with a finding the bundle shows and the bundle's broken
request; told it was found on another version, it exits 2 naming both.

One cell per violation kind runs in the fast suite, the others under
``make test-all``."""

from __future__ import annotations

from pathlib import Path

import pytest
from repro_check import Cell, cells, check_other_version_exits_2, check_reproduces

PREFIX = "openai_agents_"

#: One cell per violation kind the scripts report (silent_loss; provider_rejection).
FAST = {"openai_agents_keep_last-agent-cancel", "openai_agents_keep_last-app-parallel"}


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("agents")


def _params() -> list[object]:
    return [
        pytest.param(cell, id=str(cell), marks=() if str(cell) in FAST else pytest.mark.slow)
        for cell in cells(PREFIX)
    ]


def test_every_violation_kind_has_a_fast_cell() -> None:
    found = {str(c) for c in cells(PREFIX)}
    assert found >= FAST, sorted(FAST - found)
    kinds = {k for c in cells(PREFIX) for k in c.data["expect"]}
    fast = {k for c in cells(PREFIX) if str(c) in FAST for k in c.data["expect"]}
    assert kinds == fast, sorted(kinds - fast)


@pytest.mark.parametrize("cell", _params())
def test_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    check_reproduces(cell, tmp_path)


def test_another_version_exits_2(tmp_path: Path) -> None:
    cell = next(c for c in cells(PREFIX) if str(c) == "openai_agents_keep_last-app-parallel")
    check_other_version_exits_2(cell, tmp_path)
