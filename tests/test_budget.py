"""The budget check (model/budget.py): when it fires, what it asks the
policy, and the hard ceiling; the steps moved out of EventWork."""

from __future__ import annotations

import pytest

from prunecheck.model.budget import after_append, budget_check, ceiling
from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.context import Role
from prunecheck.model.engine import EventWork
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import builtin_policy
from prunecheck.model.state import initial_state


def _work(check_at: CheckAt = CheckAt.AFTER_APPEND, gate: Gate = Gate.NONE) -> EventWork:
    policy = builtin_policy("recency")
    assert policy is not None
    config = RuntimeConfig(budget=100, hard_ceiling=150, check_at=check_at, gate=gate)
    return EventWork(initial_state(config, policy))


@pytest.mark.parametrize(
    ("check_at", "unit_done", "checks"),
    [
        (CheckAt.AFTER_APPEND, False, 1),
        (CheckAt.AFTER_APPEND, True, 1),
        (CheckAt.AFTER_BATCH, False, 0),
        (CheckAt.AFTER_BATCH, True, 1),
        (CheckAt.BEFORE_INVOKE, True, 0),
    ],
)
def test_after_append_checks_where_the_runtime_does(
    check_at: CheckAt, unit_done: bool, checks: int
) -> None:
    work = _work(check_at)
    work.plain(Role.USER, 10, "hi")
    after_append(work, unit_done)
    assert work.state.counters.get("checks", 0) == checks


def test_a_check_over_budget_asks_the_policy_and_frees_what_it_needs() -> None:
    work = _work()
    for _ in range(3):
        work.plain(Role.USER, 60, "hello")
    budget_check(work)
    assert work.ctx.used <= 100
    assert work.state.counters["policy_calls"] == 1 and work.state.counters["prunes"] == 1
    assert not work.incidents  # gate none, nothing pending: a plain, valid eviction


def test_a_check_under_budget_calls_no_policy() -> None:
    work = _work()
    work.plain(Role.USER, 60, "hello")
    budget_check(work)
    assert work.state.counters["checks"] == 1 and "policy_calls" not in work.state.counters


def test_the_hard_ceiling_is_reported_once_until_the_context_is_under_it_again() -> None:
    work = _work()
    work.plain(Role.SYSTEM, 200, "a long system prompt")  # protected: nothing can free it
    ceiling(work, "invocation")
    ceiling(work, "invocation")
    overruns = [i for i in work.incidents if i.kind is IncidentKind.HARD_CEILING_OVERRUN]
    assert len(overruns) == 1 and "at invocation" in overruns[0].detail
    assert work.state.over_ceiling
