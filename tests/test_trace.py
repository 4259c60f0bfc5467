"""Traces: versioned, deterministic JSON; replay and its errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import Scenario, scenarios

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import TraceError
from prunecheck.model.events import BudgetCheck, CallSpec, IssueBatch, ResultChunk, UserMessage
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import BUILTINS, builtin_policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.model.system import incidents_of, replay
from prunecheck.model.trace import (
    FORMAT,
    VERSION,
    Trace,
    dumps,
    loads,
    trace_from_json,
    trace_to_json,
)


def _trace(scenario: Scenario, seed: int = 0, times: tuple[float, ...] | None = None) -> Trace:
    return Trace(
        scenario.policy,
        scenario.config,
        scenario.events,
        seed,
        times,
        {"title": "generated", "expect": {"violations": []}},
    )


@given(scenarios(), st.integers(0, 2**32), st.booleans())
def test_dumps_loads_round_trip_and_is_deterministic(
    scenario: Scenario, seed: int, timed: bool
) -> None:
    times = tuple(0.5 * i for i in range(len(scenario.events))) if timed else None
    trace = _trace(scenario, seed, times)
    text = dumps(trace)
    assert loads(text) == trace
    assert dumps(loads(text)) == text
    assert json.loads(text) == trace_to_json(trace)
    event_lines = [
        line.strip().rstrip(",") for line in text.splitlines() if line.startswith('    {"kind"')
    ]
    assert [json.loads(line) for line in event_lines] == trace_to_json(trace)["events"]


@given(scenarios())
def test_replay_equals_applying_the_events(scenario: Scenario) -> None:
    trace = _trace(scenario)
    policy = builtin_policy(scenario.policy)
    assert policy is not None
    state = scenario.run_state(record=True)
    expected = [apply(state, e) for e in scenario.events]
    got = [
        (item.index, item.event, item.at, item.result)
        for item, _ in replay(trace, ModelSystem(policy))
    ]
    assert got == [
        (i, e, float(i), r) for i, (e, r) in enumerate(zip(scenario.events, expected, strict=True))
    ]
    assert incidents_of(trace, ModelSystem(policy)) == [i for r in expected for i in r.incidents]


def test_times_set_the_clock() -> None:
    trace = Trace("recency", RuntimeConfig(), (UserMessage(5), BudgetCheck()), times=(3.0, 7.5))
    policy = builtin_policy("recency")
    assert policy is not None
    steps = [(item.at, state.now) for item, state in replay(trace, ModelSystem(policy))]
    assert steps == [(3.0, 3.0), (7.5, 7.5)]
    assert trace.with_events([UserMessage(1)]).times is None


def test_replay_names_the_impossible_event() -> None:
    trace = Trace(
        "recency",
        RuntimeConfig(),
        (IssueBatch((CallSpec("grep"),), 5), ResultChunk("c1", 5), ResultChunk("c1", 5)),
    )
    policy = builtin_policy("recency")
    assert policy is not None
    with pytest.raises(TraceError) as info:
        list(replay(trace, ModelSystem(policy)))
    assert info.value.subject == "events[2] (result)"
    assert "whose result is already complete" in info.value.rule


GOOD = {
    "format": FORMAT,
    "version": VERSION,
    "policy": "recency",
    "config": {},
    "events": [{"kind": "user", "tokens": 5}],
}


@pytest.mark.parametrize(
    "change, rule",
    [
        ({"format": "other"}, "'format' must be 'prunecheck-trace', got 'other'."),
        (
            {"version": 3},
            "trace version 3 is not supported (this prunecheck reads versions 1 and 2).",
        ),
        ({"policy": ""}, "'policy' must be a policy spec string."),
        ({"policy": None}, "'policy' must be a policy spec string."),
        ({"seed": "1"}, "'seed' must be an integer, got '1'."),
        ({"seed": False}, "'seed' must be an integer, got False."),
        ({"events": {}}, "'events' must be a list of events."),
        ({"times": [1.0, 2.0]}, "'times' must be a list of finite numbers, one per event."),
        ({"times": ["1"]}, "'times' must be a list of finite numbers, one per event."),
        ({"meta": []}, "'meta' must be a JSON object."),
    ],
)
def test_malformed_traces(change: dict[str, object], rule: str) -> None:
    with pytest.raises(TraceError) as info:
        trace_from_json({**GOOD, **change}, "t.json")
    assert (info.value.subject, info.value.rule) == ("t.json", rule)


def test_malformed_config_and_events_name_the_file() -> None:
    with pytest.raises(TraceError) as info:
        trace_from_json({**GOOD, "config": {"gate": "maybe"}}, "t.json")
    assert info.value.subject == "t.json: config.gate"
    with pytest.raises(TraceError) as info:
        trace_from_json(
            {**GOOD, "events": [{"kind": "user", "tokens": 1}, {"kind": "zap"}]}, "t.json"
        )
    assert info.value.subject == "t.json: events[1]"
    with pytest.raises(TraceError) as info:
        loads("[", "t.json")
    assert info.value.subject == "t.json" and info.value.rule.startswith("is not JSON")
    with pytest.raises(TraceError, match="must be a JSON object"):
        loads("3", "t.json")


def test_defaults_fill_in() -> None:
    trace = trace_from_json(GOOD)
    assert (trace.seed, trace.config, trace.times, trace.meta) == (0, RuntimeConfig(), None, {})
    state = initial_state(trace.config, BUILTINS["recency"]())
    assert apply(state, trace.events[0]).incidents == ()


def test_with_events_keeps_every_other_field_and_copies_meta() -> None:
    from dataclasses import fields

    trace = Trace("recency", RuntimeConfig(budget=77), (UserMessage(5),), 9, (0.0,), {"agent": 2})
    shorter = trace.with_events([])
    assert shorter.events == () and shorter.times is None
    kept = {f.name for f in fields(Trace)} - {"events", "times"}
    assert all(getattr(shorter, name) == getattr(trace, name) for name in kept), kept
    assert shorter.meta is not trace.meta


def test_no_module_rebuilds_a_trace_field_by_field() -> None:
    """Copies go through dataclasses.replace: a field added to Trace is then
    carried by every copy instead of silently dropped by one."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    rebuild = re.compile(r"\bTrace\(\s*(\w+)\.policy\b")
    found = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("model", "sim")
        for path in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if rebuild.search(line)
    ]
    assert found == []
