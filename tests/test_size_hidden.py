"""Policies whose only bug needs a realistic size: a batch of 4+ calls,
more than 16 messages, one output over half the budget, two results
streaming at once, turn 6 or later (issue 8, acceptance 2).  The search
alone finds each with its default shape; ``prunecheck check POLICY`` with
no flags finds each in under 2 minutes (slow)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Event, IssueBatch, ResultChunk, UserMessage
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.search import search
from prunecheck.sim.subjects.loader import load_system

FILE = Path(__file__).resolve().parent / "policies" / "size_hidden.py"
NAMES = ["wide_batch", "long_context", "giant_output", "concurrent_streams", "late_turn"]
BUDGET = RuntimeConfig().budget


def _open_streams(events: tuple[Event, ...]) -> int:
    open_now: set[str] = set()
    most = 0
    for e in events:
        if isinstance(e, ResultChunk):
            (open_now.discard if e.last else open_now.add)(e.call)
            most = max(most, len(open_now))
    return most


#: What the counterexample must show: the size the bug needs.
NEEDS = {
    "wide_batch": lambda ev: any(isinstance(e, IssueBatch) and len(e.calls) >= 4 for e in ev),
    "long_context": lambda ev: len(ev) > 16,
    "giant_output": lambda ev: any(getattr(e, "tokens", 0) > BUDGET // 2 for e in ev),
    "concurrent_streams": lambda ev: _open_streams(ev) >= 2,
    "late_turn": lambda ev: sum(isinstance(e, UserMessage) for e in ev) >= 6,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_default_search_finds_a_bug_that_needs_a_real_size(name: str) -> None:
    result = search(load_system(f"{FILE}:{name}"), RuntimeConfig(), seed=0)
    assert result.found and result.trace is not None
    assert [e.kind for e in result.trace.events[:2]] == ["system", "user"]
    assert "invalid_prune" in result.trace.meta["expect"]["violations"]
    assert NEEDS[name](result.trace.events)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_check_with_no_flags_catches_it_in_under_two_minutes(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main(["check", f"{FILE}:{name}"]) == 1
    assert time.monotonic() - started < 120  # the acceptance bound, on 2 shared cores
    assert "UNSAFE" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("name, status", [("unit_safe", 0), ("lowest_salience", 1), ("recency", 1)])
def test_builtins_keep_their_results_with_no_flags(
    name: str, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", name, "--quiet"]) == status
