"""The event algebra's JSON form: every event round-trips; malformed events
are a TraceError naming where they are."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import Scenario, scenarios

from prunecheck.model.errors import TraceError
from prunecheck.model.events import (
    EVENT_TYPES,
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    ClearToolUses,
    Compaction,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
    event_from_json,
    event_to_json,
)

EXAMPLES: list[tuple[Event, dict[str, object]]] = [
    (SystemPrompt(10, "be brief"), {"kind": "system", "tokens": 10, "text": "be brief"}),
    (UserMessage(12), {"kind": "user", "tokens": 12}),
    (AssistantChunk(5, last=False), {"kind": "assistant", "tokens": 5, "last": False}),
    (
        IssueBatch(
            (
                CallSpec("read_file", "a.py"),
                CallSpec("write_file", "b.py", Effect.WRITE),
                CallSpec("watch", background=True),
            ),
            30,
        ),
        {
            "kind": "batch",
            "calls": [
                {"tool": "read_file", "path": "a.py"},
                {"tool": "write_file", "path": "b.py", "effect": "write"},
                {"tool": "watch", "background": True},
            ],
            "tokens": 30,
        },
    ),
    (
        ResultChunk("c2", 40, last=False),
        {"kind": "result", "call": "c2", "tokens": 40, "last": False},
    ),
    (
        ToolFailure("c1", FailureReason.TIMEOUT),
        {"kind": "failure", "call": "c1", "reason": "timeout"},
    ),
    (BudgetCheck(), {"kind": "check"}),
    (Invoke(), {"kind": "invoke"}),
    (Retry(), {"kind": "retry"}),
    (ExternalWrite("a.py"), {"kind": "write", "path": "a.py"}),
    (NewSession(), {"kind": "session"}),
    (Invoke(chained=True), {"kind": "invoke", "chained": True}),
    (Compaction(120), {"kind": "compaction", "tokens": 120}),
    (
        ClearToolUses(trigger=500, keep=1, exclude_tools=("memory",), clear_tool_inputs=True),
        {
            "kind": "clear_tool_uses",
            "trigger": 500,
            "keep": 1,
            "exclude_tools": ["memory"],
            "clear_tool_inputs": True,
        },
    ),
]


def test_every_event_kind_has_an_example() -> None:
    assert {e.kind for e, _ in EXAMPLES} == set(EVENT_TYPES)


@pytest.mark.parametrize("event, data", EXAMPLES, ids=[e.kind for e, _ in EXAMPLES])
def test_json_form(event: Event, data: dict[str, object]) -> None:
    assert event_to_json(event) == data
    assert event_from_json(data) == event


@given(scenarios())
def test_generated_events_round_trip(scenario: Scenario) -> None:
    for event in scenario.events:
        assert event_from_json(event_to_json(event)) == event


@pytest.mark.parametrize(
    "data, rule",
    [
        ([], "an event must be a JSON object, not list."),
        ({"tokens": 3}, "unknown event kind None."),
        ({"kind": "shout"}, "unknown event kind 'shout'."),
        (
            {"kind": "user", "tokens": 3, "mood": "calm"},
            "event 'user' has unknown field(s) ['mood'].",
        ),
        ({"kind": "user"}, "event 'user' is missing field(s) ['tokens']."),
        ({"kind": "result", "tokens": 1}, "event 'result' is missing field(s) ['call']."),
        (
            {"kind": "user", "tokens": "3"},
            "field 'tokens' must be a non-negative integer, got '3'.",
        ),
        (
            {"kind": "user", "tokens": True},
            "field 'tokens' must be a non-negative integer, got True.",
        ),
        (
            {"kind": "assistant", "tokens": 3, "last": "yes"},
            "field 'last' must be true or false, got 'yes'.",
        ),
        ({"kind": "result", "call": 3, "tokens": 1}, "field 'call' must be a string, got 3."),
        (
            {"kind": "failure", "call": "c1", "reason": "bored"},
            "field 'reason' must be one of error, timeout, got 'bored'.",
        ),
        (
            {"kind": "batch", "calls": [], "tokens": 1},
            "field 'calls' must be a non-empty list of calls.",
        ),
    ],
)
def test_malformed_events(data: object, rule: str) -> None:
    with pytest.raises(TraceError) as info:
        event_from_json(data, "trace.json: events[3]")
    assert info.value.subject == "trace.json: events[3]"
    assert info.value.rule == rule


@pytest.mark.parametrize(
    "call, subject, rule",
    [
        ("read_file", "e.calls[0]", "a call must be an object with a string 'tool'."),
        ({"path": "a"}, "e.calls[0]", "a call must be an object with a string 'tool'."),
        ({"tool": "t", "mode": "x"}, "e.calls[0]", "unknown call field(s) ['mode']."),
        (
            {"tool": "t", "effect": "delete"},
            "e.calls[0]",
            "field 'effect' must be one of read, write, got 'delete'.",
        ),
    ],
)
def test_malformed_calls(call: object, subject: str, rule: str) -> None:
    with pytest.raises(TraceError) as info:
        event_from_json({"kind": "batch", "calls": [call], "tokens": 1}, "e")
    assert (info.value.subject, info.value.rule) == (subject, rule)


@given(st.integers(0, 10**6), st.text(max_size=20), st.booleans())
def test_chunk_fields_round_trip(tokens: int, text: str, last: bool) -> None:
    event = AssistantChunk(tokens, last, text)
    assert event_from_json(event_to_json(event)) == event
