"""The agent loop as a System (sim/subjects/loops/system.py): model events in,
the loop's judge out."""

from __future__ import annotations

import gc

from loops_fake import FakeAdapter, careful, trimming_buggy

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    UserMessage,
)
from prunecheck.model.system import System, incidents_of, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget


def _system(agent: object) -> LoopSystem:
    return LoopSystem(LoopTarget("loop:fake", "fake.py:agent", agent, FakeAdapter()))


EVENTS: tuple[Event, ...] = (
    UserMessage(10, "hi"),
    Invoke(),
    IssueBatch((CallSpec("read_file", "a"), CallSpec("write_file", "b")), 20),
    ResultChunk("c2", 30),
    ResultChunk("c1", 30),
)


def test_a_trace_of_model_events_replays_through_the_loop() -> None:
    system = _system(careful)
    assert isinstance(system, System)
    trace = Trace("loop:fake", RuntimeConfig(), EVENTS)
    assert incidents_of(trace, system) == []
    steps = [state for _, state in replay(trace, system)]
    state = steps[-1]
    assert [s.kind for s in state.steps] == ["user", "reply", "complete", "complete"]
    assert system.truth(state).pending == {}
    assert system.request(state).body["messages"][-1]["role"] == "tool"  # type: ignore[index]
    copied = system.copy(state)
    assert system.key(copied) == system.key(state) != 0
    system.close(copied)
    system.close(state)


def test_the_loop_judge_reports_through_the_system() -> None:
    # the fake's keep-last-3 trim cuts the batch's unit in two on the next turn
    trace = Trace("loop:fake", RuntimeConfig(), (*EVENTS, AssistantChunk(5, text="ok"),
                                                  UserMessage(5, "and?")))  # fmt: skip
    found = incidents_of(trace, _system(trimming_buggy))
    assert "orphaned_result" in {i.kind.value for i in found}


def test_a_systems_states_leave_the_heap_as_they_found_it() -> None:
    # drivers drop a System's states without closing them: a run that froze the
    # heap (gc.freeze, for a cheap collection on close) would leave it frozen
    gc.unfreeze()
    trace = Trace("loop:fake", RuntimeConfig(), EVENTS)
    for _ in replay(trace, _system(careful)):
        assert gc.get_freeze_count() == 0
    assert gc.get_freeze_count() == 0
