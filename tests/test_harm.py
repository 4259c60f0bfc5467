"""Reproductions run past the violation to the harm (sim/evidence/harm.py)."""

from __future__ import annotations

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    CallSpec,
    Effect,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import Trace
from prunecheck.sim.evidence.bundle import _request
from prunecheck.sim.evidence.harm import extend_to_harm

SMALL = RuntimeConfig(budget=1000, hard_ceiling=2000)


def _policy(name: str = "lowest_salience") -> ModelSystem:
    policy = builtin_policy(name)
    assert policy is not None
    return ModelSystem(policy)


def test_an_orphaning_prune_runs_on_to_the_rejection_and_the_retry() -> None:
    events = (
        SystemPrompt(100),
        UserMessage(100),
        IssueBatch((CallSpec("read_file", "a"), CallSpec("write_file", "b", Effect.WRITE)), 100),
        ResultChunk("c1", 900),
    )
    trace = Trace("lowest_salience", SMALL, events)
    longer = extend_to_harm(trace, _policy())
    assert longer.events[:4] == events
    added = longer.events[4:]
    assert isinstance(added[0], ResultChunk) and added[0].call == "c2"  # the pending one
    assert [type(e) for e in added[1:]] == [Invoke, Retry, Invoke]
    kinds = {i.kind.value for i in incidents_of(longer, _policy()) if i.step >= 4}
    assert {"provider_rejection", "duplicated_side_effect"} <= kinds  # the write ran twice
    assert longer.meta["harm"] == {
        "violation_at": 4,
        "added": 4,
        "kinds": ["duplicated_side_effect", "provider_rejection"],
    }
    request, _ = _request(longer, _policy())  # the bundle shows the 400, not an HTTP 200
    assert request.origin == "rejected" and request.errors


def test_a_trace_without_violation_or_new_harm_is_left_as_it_is() -> None:
    clean = Trace("unit_safe", SMALL, (SystemPrompt(10), UserMessage(10)))
    assert extend_to_harm(clean, _policy("unit_safe")) is clean
    rejected = Trace(
        "lowest_salience",
        SMALL,
        (
            SystemPrompt(100),
            UserMessage(100),
            IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 100),
            ResultChunk("c1", 900),
            ResultChunk("c2", 10),
            Invoke(),
            Retry(),
            Invoke(),
        ),
    )
    # the rejection and the retry are already there: nothing new to show
    assert extend_to_harm(rejected, _policy()) is rejected


def test_times_go_on_after_the_last_event() -> None:
    events = (
        SystemPrompt(100),
        UserMessage(100),
        IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 100),
        ResultChunk("c1", 900),
    )
    trace = Trace("lowest_salience", SMALL, events, times=(0.0, 1.0, 2.0, 9.5))
    longer = extend_to_harm(trace, _policy())
    assert longer.times is not None and len(longer.times) == len(longer.events)
    assert list(longer.times[3:]) == [9.5, 10.5, 11.5, 12.5, 13.5]
