"""Swarm shapes: each generated run draws its own bounds, most of them
small, and the drivers reach real runtimes' sizes (issue 8, point 2)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Role
from prunecheck.model.policies import BUILTINS, ContextView, FunctionPolicy, Policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.sim.drivers.search import SearchResult, random_walk, search
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.drivers.swarm import narrow, persisted_history, random_draw
from prunecheck.sim.subjects.loader import model_system

SAFE = BUILTINS["unit_safe"]()


def test_each_run_draws_its_own_bounds_mostly_small_reaching_every_bound() -> None:
    shape = Shape.for_budget(32_000)
    draw = random_draw(random.Random(7))
    runs = [narrow(shape, draw) for _ in range(2000)]
    assert max(r.max_calls for r in runs) == shape.max_calls >= 8
    assert max(r.max_users for r in runs) == shape.max_users >= 10
    assert max(r.max_resume for r in runs) == shape.max_resume >= 16
    assert any(r.crashed for r in runs) and not all(r.crashed for r in runs if r.max_resume)
    assert statistics.median(r.max_calls for r in runs) <= 3  # most runs are small
    assert statistics.median(r.max_resume for r in runs) <= 2
    assert not any(r.swarm for r in runs)


def test_a_narrowed_shape_without_swarm_is_the_shape_itself() -> None:
    small = Shape.small()
    assert narrow(small, random_draw(random.Random(1))) == small


def test_a_resumed_history_is_long_and_a_crash_leaves_calls_unanswered() -> None:
    shape = Shape.for_budget(32_000)
    state = initial_state(RuntimeConfig(), SAFE, record=False)
    for event in persisted_history(shape, rounds=16, crashed=True):
        apply(state, event)
    assert len(state.context) >= 60 and state.turn >= 16
    assert state.pending and all(state.calls[c].chunks == 0 for c in state.pending)
    assert state.context.used <= state.config.budget  # it was a real, fitting history
    fresh = persisted_history(shape, rounds=0, crashed=False)
    assert [e.kind for e in fresh] == ["system", "user"]


def _recorder() -> tuple[dict[str, float], FunctionPolicy]:
    seen: dict[str, float] = {"calls": 0, "messages": 0, "streams": 0, "turn": 0, "largest": 0}

    def select(view: ContextView, need: int) -> Any:
        msgs = view.messages
        seen["calls"] = max(seen["calls"], max((len(m.tool_calls) for m in msgs), default=0))
        seen["messages"] = max(seen["messages"], len(msgs))
        seen["streams"] = max(
            seen["streams"], sum(1 for m in msgs if m.role is Role.TOOL and not m.closed)
        )
        seen["turn"] = max(seen["turn"], view.turn)
        seen["largest"] = max(seen["largest"], max(m.tokens for m in msgs) / view.budget)
        return SAFE.select(view, need)

    return seen, FunctionPolicy(select, "recorder")


@pytest.mark.slow
def test_search_and_random_walk_reach_real_runtimes_sizes() -> None:
    """What the policy is shown over one default search (and one walk):
    wide batches, long contexts, outputs over the budget, several streams
    at once, late turns."""
    runs: tuple[Callable[[Policy], SearchResult], ...] = (
        lambda p: search(model_system("recorder", p), RuntimeConfig(), seed=0),
        lambda p: random_walk(model_system("recorder", p), RuntimeConfig(), seed=0, max_runs=300),
    )
    for run in runs:
        seen, policy = _recorder()
        assert not run(policy).found
        assert seen["calls"] >= 6 and seen["messages"] >= 60 and seen["turn"] >= 10
        assert seen["largest"] > 1.0 and seen["streams"] >= 3
