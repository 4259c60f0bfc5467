"""The Strands Agents reproductions in reports/loops (issue 30): each is at
most 80 lines, what the adapter writes today, and run alone from a folder
outside the repository it exits 1 showing the bundle's broken request
(tests/repro_check.py).  One cell per violation kind runs in the fast suite,
the rest in ``make test-all``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import repro_check
from repro_check import Cell

from prunecheck.sim.subjects.loops.frameworks.strands_repro import script_text

CELLS = repro_check.cells("strands_")
#: One cell per violation kind the Strands cells show (fast); the rest are slow.
FAST = {
    "strands_sliding-agent-trim",  # provider_rejection (Bedrock's first-message rule)
    "strands_summarizing-agent-crash_resume",  # duplicated_side_effect
}


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("strands")


def test_the_strands_cells_are_covered_fast_or_slow() -> None:
    every = {kind for cell in CELLS for kind in cell.data["expect"]}
    fast = {kind for cell in CELLS if str(cell) in FAST for kind in cell.data["expect"]}
    assert {str(c) for c in CELLS} >= FAST
    # hang and synthesized_result cells run in make test-all (a hang costs its 2 s wait)
    assert every - fast <= {"hang", "synthesized_result"}, every - fast


@pytest.mark.parametrize(
    "cell",
    [c if str(c) in FAST else pytest.param(c, marks=pytest.mark.slow) for c in CELLS],
    ids=str,
)
def test_the_reproduction_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    repro_check.check_reproduces(cell, tmp_path)


def test_a_reproduction_found_on_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    repro_check.check_other_version_exits_2(CELLS[0], tmp_path)


_STEPS: list[dict[str, object]] = [
    {"kind": "user", "text": "hi"},
    {"kind": "reply", "text": "", "calls": [{"id": "call_1", "name": "search", "arguments": "{}"}]},
    {"kind": "complete", "call": "call_1", "output": "found"},
]


def _schedule(**extra: object) -> str:
    return json.dumps({"format": "prunecheck-loop-schedule/1", "seed": 3, "steps": _STEPS, **extra})


def test_the_script_carries_only_what_its_agent_needs() -> None:
    plain = script_text("m:a", _schedule(expect=["silent_loss"]), bedrock=False)
    assert "FileSessionManager" not in plain and "threading" not in plain
    assert "AWS_DEFAULT_REGION" not in plain and "bedrock says" not in plain
    full = script_text("m:a", _schedule(expect=["silent_loss"]), session=True, summarizing=True)
    assert "FileSessionManager(session_id=" in full and "threading.main_thread()" in full
    assert "AWS_DEFAULT_REGION" in full
    compile(plain, "repro.py", "exec")
    compile(full, "repro.py", "exec")


def test_a_bedrock_rejection_checks_bedrocks_rule_not_openais() -> None:
    text = script_text("m:a", _schedule(expect=["provider_rejection"]), bedrock=True)
    assert "bedrock says" in text and "openai says" not in text
    openai = script_text("m:a", _schedule(expect=["provider_rejection"]), bedrock=False)
    assert "openai says" in openai and "bedrock says" not in openai
