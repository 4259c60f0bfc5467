"""CommitGuard agrees with the model's ``spill`` gate (the reference
semantics): fed the same events, with a budget check wherever the model's
runtime checks (after every append), it keeps exactly the messages the
model keeps, defers when the model defers, and spills and re-injects the
same units.

Policies that read absolute times or message text (lowest_salience,
similarity) are left out: the guard's clock counts its events and it keeps
no text, so their scores differ by design, not their gating."""

from __future__ import annotations

import random

import pytest

from prunecheck.guard import CommitGuard, HardCeilingExceeded, Plan, SpillStore
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    Event,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.policies import builtin_policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import CallStatus, RuntimeState, initial_state
from prunecheck.sim.drivers.shape import Shape, Usage, enabled_events

POLICIES = (
    "recency",
    "turn_window",
    "token_span",
    "clear_old_results",
    "summarize_prefix",
    "unit_safe",
)


def _feed(
    guard: CommitGuard,
    state: RuntimeState,
    event: Event,
    next_message: int,
    next_call: int,
    stream: str | None,
) -> Plan | None:
    """Tell the guard what ``event`` did to the model; check where the model did."""
    mid = f"m{next_message}"
    if isinstance(event, SystemPrompt | UserMessage):
        guard.message(mid, "system" if isinstance(event, SystemPrompt) else "user", event.tokens)
    elif isinstance(event, AssistantChunk):
        if stream is None and event.last:
            guard.message(mid, "assistant", event.tokens)
        elif stream is None:
            guard.stream_opened(mid, "assistant", event.tokens)
        elif event.last:
            guard.stream_closed(stream, event.tokens)
        else:
            guard.stream_chunk(stream, event.tokens)
    elif isinstance(event, IssueBatch):
        ids = [f"c{next_call + k}" for k in range(len(event.calls))]
        batch = state.calls[ids[0]].batch
        guard.calls(batch, ids, event.tokens, resources=[c.path for c in event.calls if c.path])
    elif isinstance(event, ResultChunk | ToolFailure):
        record = state.calls[event.call]
        if isinstance(event, ToolFailure) or record.status is CallStatus.FAILED:
            if record.status is not CallStatus.FAILED or record.target is None:
                return None
            if record.target in guard.tracker.ctx:  # applied just now
                return None
            old = guard.tracker.result_of.get(event.call)
            if old is not None and old in guard.tracker.ctx:
                guard.removed([old])
            guard.result_complete(
                event.call,
                state.context[record.target].tokens
                if record.target in state.context
                else event.tokens,
                record.target,
            )
        else:
            target = record.target
            assert target is not None
            if event.call not in guard.tracker.result_of:
                guard.result_chunk(event.call, event.tokens, target)
            else:
                guard.result_chunk(event.call, event.tokens)
            if event.last:
                guard.result_complete(event.call)
    elif not isinstance(event, BudgetCheck):
        return None
    try:
        return guard.check()
    except HardCeilingExceeded as exc:
        return exc.plan


def _ids(ids: list[str]) -> list[str]:
    return [m for m in ids if not m.startswith("summary:")]


@pytest.mark.parametrize(
    ("name", "seeds"),  # 10 random runs of each policy in make test, 25 in make test-all
    [(name, 10) for name in POLICIES]
    + [pytest.param(name, 25, marks=pytest.mark.slow) for name in POLICIES],
)
def test_guard_keeps_what_the_spill_gate_keeps(name: str, seeds: int) -> None:
    policy = builtin_policy(name)
    assert policy is not None
    config = RuntimeConfig(budget=1000, hard_ceiling=1500, gate=Gate.SPILL)
    shape = Shape.for_budget(1000)
    compared = deferred = spills = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        state = initial_state(config, policy, record=False)
        guard = CommitGuard(policy, budget=1000, hard_ceiling=1500, store=SpillStore(":memory:"))
        usage = Usage()
        for _ in range(40):
            event = rng.choice(enabled_events(state, usage, shape))
            stream = state.assistant_stream.batch if state.assistant_stream else None
            before = (state.next_message, state.next_call)
            usage = usage.after(event, state)
            apply(state, event)
            plan = _feed(guard, state, event, *before, stream)
            model_ids = [m.id for m in state.context if not m.is_summary]
            assert _ids([m.id for m in guard.tracker.ctx]) == model_ids, (seed, event)
            model_spilled = tuple("S" if ms[0].is_summary else u for u, ms in state.spilled.items())
            guard_spilled = tuple("S" if u.startswith("summary:") else u for u in guard.spilled)
            assert guard_spilled == model_spilled, (seed, event)
            if plan is not None:
                assert (plan.deferred is not None) == state.deferred, (seed, event)
                deferred += state.deferred
            compared += 1
        spills += state.count("spills")
    assert compared == seeds * 40 and deferred > 0 and spills > 0
