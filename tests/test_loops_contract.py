"""The loop contract (sim/subjects/loops/contract.py) and the schedule
vocabulary (sim/subjects/loops/steps.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from prunecheck.sim.subjects.loops import (
    Adapter,
    Capability,
    Harness,
    Loop,
    Reply,
    ToolCall,
    ToolSpec,
)
from prunecheck.sim.subjects.loops.steps import (
    SCHEDULE_FORMAT,
    Advance,
    Approve,
    Cancel,
    Complete,
    Crash,
    Fail,
    NewMessage,
    ReplyStep,
    Resume,
    ScheduleError,
    Step,
    Timeout,
    User,
    schedule_from_json,
    schedule_to_json,
    step_from_json,
)


class _Harness:
    store = Path(".")

    async def model(self, request: Mapping[str, object], *, aside: bool | None = None) -> Reply:
        return Reply("done")

    async def tool(self, call: ToolCall) -> str:
        return "out"

    def now(self) -> float:
        return 0.0

    def awaiting_approval(self, call_id: str) -> None:
        return None

    def holds(self, messages: Sequence[Mapping[str, object]]) -> None:
        return None


class _Loop:
    async def send(self, text: str) -> None:
        return None

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        return None

    async def resume(self) -> None:
        return None

    async def approve(self, call_id: str, approved: bool) -> None:
        return None

    def history(self) -> list[dict[str, object]]:
        return []

    def abandon(self) -> None:
        return None


def test_the_protocols_recognise_implementations_and_reject_others() -> None:
    assert isinstance(_Harness(), Harness)
    assert isinstance(_Loop(), Loop)
    assert not isinstance(object(), Loop)
    assert not isinstance(_Loop(), Adapter)


def test_records_are_frozen_values() -> None:
    call = ToolCall("call_1", "read", '{"path": "a"}')
    assert Reply(calls=(call,)) == Reply("", (call,), 1)
    with pytest.raises(AttributeError):
        call.id = "x"  # type: ignore[misc]
    assert ToolSpec("read", "", {"type": "object"}).parameters == {"type": "object"}
    assert {c.value for c in Capability} >= {"cancel", "crash_resume", "interrupt"}


_EVERY_STEP: list[Step] = [
    User("hi"),
    ReplyStep("", (ToolCall("call_1", "read", "{}"), ToolCall("call_2", "write", '{"x": 1}'))),
    Complete("call_1", "42"),
    Fail("call_2", "disk full"),
    Timeout("call_2"),
    Advance(2.5),
    Cancel(),
    Crash(),
    Resume(),
    NewMessage("again"),
    Approve("call_1", approved=False),
]


def test_a_schedule_round_trips_through_json_byte_for_byte() -> None:
    text = schedule_to_json(_EVERY_STEP, target="a.py:agent", framework="fake", seed=3)
    assert json.loads(text)["format"] == SCHEDULE_FORMAT
    assert schedule_from_json(text) == _EVERY_STEP
    assert schedule_to_json(schedule_from_json(text), target="a.py:agent", framework="fake",
                            seed=3) == text  # fmt: skip


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"kind": "jump"}, "unknown step kind 'jump'"),
        ({"kind": "complete", "call": "c1"}, "needs the field(s) ['output']"),
        ({"kind": "complete", "call": 1, "output": ""}, "field 'call' must be a str"),
        ({"kind": "cancel", "why": "x"}, "unknown field(s) ['why']"),
        ({"kind": "reply", "calls": [{"id": "c"}]}, "a call is an object"),
        ([], "must be a JSON object"),
    ],
)
def test_a_malformed_step_names_where_and_the_rule(data: object, words: str) -> None:
    with pytest.raises(ScheduleError, match=r"steps\.3") as info:
        step_from_json(data, "steps.3")
    assert words in str(info.value)


def test_a_document_that_is_no_schedule_is_refused() -> None:
    with pytest.raises(ScheduleError, match="not a loop schedule"):
        schedule_from_json('{"steps": []}')
    with pytest.raises(ScheduleError, match="not JSON"):
        schedule_from_json("{")
