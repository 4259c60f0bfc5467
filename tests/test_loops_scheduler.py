"""The loop scheduler (sim/subjects/loops/scheduler.py) and its virtual clock
(sim/subjects/loops/clock.py), driven through the fake framework of tests/loops_fake.py."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref

import pytest
from loops_fake import FakeAdapter, FakeAgent, _FakeLoop, buggy, careful

from prunecheck.sim.subjects.loops import clock
from prunecheck.sim.subjects.loops.clock import LoopStuck, VirtualLoop
from prunecheck.sim.subjects.loops.contract import Harness, ToolCall
from prunecheck.sim.subjects.loops.ledger import BodyEnd
from prunecheck.sim.subjects.loops.scheduler import LoopRun, Phase, StepRefused
from prunecheck.sim.subjects.loops.steps import (
    Advance,
    Cancel,
    Complete,
    Crash,
    Fail,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    Timeout,
    User,
)

READ_A = ToolCall("call_1", "read_file", '{"path": "a"}')
READ_B = ToolCall("call_2", "read_file", '{"path": "b"}')


def kinds(run: LoopRun) -> list[tuple[str, tuple[str, ...]]]:
    return [(i.kind.value, i.ids) for i in run.incidents]


def test_the_virtual_clock_fires_timers_only_when_advanced() -> None:
    loop = VirtualLoop()
    seen: list[float] = []

    async def sleeper() -> None:
        await asyncio.sleep(30)
        seen.append(loop.time())

    loop.create_task(sleeper())
    loop.settle()
    assert seen == [] and loop.next_timer() == 30.0
    loop.advance(29)
    assert seen == []
    loop.advance(5)
    assert seen == [30.0] and loop.time() == 34.0
    loop.discard()


def test_settle_waits_for_a_thread_the_run_started() -> None:
    loop = VirtualLoop()
    done: list[str] = []

    def job() -> str:
        time.sleep(0.05)
        return "thread"

    async def worker() -> None:
        done.append(await asyncio.to_thread(job))

    loop.create_task(worker())
    loop.settle()  # returns only once the thread's result has landed
    assert done == ["thread"]
    loop.discard()


def test_a_loop_that_never_waits_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    # a spin is told by a count of iterations, not by time: a small count finds it as surely
    monkeypatch.setattr(clock, "MAX_TICKS", 2_000)
    loop = VirtualLoop()

    async def spin() -> None:
        while True:
            await asyncio.sleep(0)

    loop.create_task(spin())
    with pytest.raises(LoopStuck, match="spins"):
        loop.settle()
    loop.discard()


def test_a_turn_with_a_parallel_batch_is_judged_clean() -> None:
    with LoopRun(FakeAdapter(), careful) as run:
        run.apply(User("hi"))
        assert run.pending_requests() == 1 and run.turn_running
        run.apply(ReplyStep("", (READ_A, READ_B)))
        assert run.waiting_calls() == ["call_1", "call_2"]
        run.apply(Complete("call_2", "B"))  # out of order
        run.apply(Fail("call_1", "disk"))
        run.apply(ReplyStep("done"))
        assert not run.turn_running and run.incidents == []
        assert [b.end for b in run.ledger.bodies] == [BodyEnd.FAILED, BodyEnd.OK]
        last = run.ledger.requests[-1].body["messages"]
        assert isinstance(last, list) and [m["role"] for m in last] == [
            "user", "assistant", "tool", "tool"]  # fmt: skip


def test_a_step_that_is_not_enabled_is_refused() -> None:
    with LoopRun(FakeAdapter(), careful) as run:
        with pytest.raises(StepRefused, match="reply"):
            run.apply(ReplyStep("x"))
        run.apply(User("hi"))
        with pytest.raises(StepRefused, match="user"):
            run.apply(User("again"))
        with pytest.raises(StepRefused, match="resume"):
            run.apply(Resume())


def test_a_crash_before_anything_ran_is_not_enabled_nor_replayed() -> None:
    """A crash needs a running turn or an issued call: before the first message
    it drops nothing, and the resume after it would resume a run that never
    began.  The shrinker's replays go through the same rule, so deleting the
    user message from [user, crash, resume] is not a shorter counterexample
    (it was: AutoGen's crash-then-resume cell shrank to [crash, resume])."""
    from prunecheck.sim.drivers.action_search import rerun
    from prunecheck.sim.subjects.loops.system import LoopSystem

    with LoopRun(FakeAdapter(), careful) as run:
        assert not run.crashable
        with pytest.raises(StepRefused, match="crash"):
            run.apply(Crash())
        run.apply(User("hi"))
        assert run.crashable
        run.apply(Crash())
    assert rerun(LoopSystem.of(FakeAdapter(), careful), [Crash(), Resume()]) is None
    assert rerun(LoopSystem.of(FakeAdapter(), careful), [User("hi"), Crash(), Resume()])


def test_a_crash_drops_the_process_and_a_new_message_opens_it_again() -> None:
    with LoopRun(FakeAdapter(), buggy) as run:
        run.apply(User("hi"))
        run.apply(ReplyStep("", (READ_A, READ_B)))
        run.apply(Complete("call_1", "A"))
        run.apply(Crash())
        assert run.phase is Phase.CRASHED and run.loop is None and run.epoch == 1
        assert run.ledger.bodies[1].end is BodyEnd.DROPPED
        run.apply(NewMessage("again"))
        assert ("unanswered_call", ("call_1",)) in kinds(run)
        assert any(
            i.text.startswith("An assistant message with 'tool_calls'") for i in run.incidents
        )


def test_a_resume_that_reruns_a_finished_tool_duplicates_its_side_effect() -> None:
    with LoopRun(FakeAdapter(), buggy) as run:
        batch = ReplyStep("", (READ_A, READ_B))
        for step in (User("hi"), batch, Complete("call_1", "A"), Crash()):
            run.apply(step)
        # the eager store holds the calls without their results: resume runs both again
        run.apply(Resume())
        run.apply(Complete("call_1", "A"))
        assert ("duplicated_side_effect", ("call_1",)) in kinds(run)


def test_a_cancel_that_forgets_an_executed_tool_is_a_silent_loss() -> None:
    with LoopRun(FakeAdapter(), buggy) as run:
        for step in (
            User("hi"),
            ReplyStep("", (READ_A, READ_B)),
            Complete("call_1", "A"),
            Cancel(),
        ):
            run.apply(step)
        assert not run.turn_running and run.incidents == []
        run.apply(User("and now?"))
        assert kinds(run) == [("silent_loss", ("call_1",))]


def test_a_cancel_that_keeps_what_ran_is_clean() -> None:
    with LoopRun(FakeAdapter(), careful) as run:
        for step in (User("hi"), ReplyStep("", (READ_A, READ_B)), Complete("call_1", "A"),
                     Cancel(), User("and now?")):  # fmt: skip
            run.apply(step)
        assert run.incidents == []
        assert run.ledger.bodies[1].end is BodyEnd.CANCELLED


class _Stubborn(FakeAdapter):
    """A loop whose cancel API does nothing: the turn never returns."""

    def open(self, target: object, harness: Harness) -> _FakeLoop:
        loop = super().open(target, harness)

        async def ignore(turn: asyncio.Task[None]) -> None:
            return None

        loop.cancel = ignore  # type: ignore[method-assign]
        return loop


def test_a_turn_that_ignores_a_cancel_hangs() -> None:
    with LoopRun(_Stubborn(), careful) as run:
        for step in (User("hi"), ReplyStep("", (READ_A,)), Cancel()):
            run.apply(step)
        assert kinds(run) == [("hang", ())]
        assert run.now() == 60.0  # the deadline passed on the virtual clock only


def test_timeouts_and_the_clock_are_steps() -> None:
    with LoopRun(FakeAdapter(), careful) as run:
        for step in (User("hi"), ReplyStep("", (READ_A,)), Timeout("call_1"), Advance(5)):
            run.apply(step)
        assert run.ledger.bodies[0].end is BodyEnd.TIMED_OUT and run.now() == 5.0
        assert run.pending_requests() == 1


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_run_collects_only_what_it_allocated_and_puts_the_heap_back() -> None:
    """Each run ends with a collection (the debris of its event loops); a full
    one walks the whole heap, ~0.5 s with a framework imported, so a run sets
    aside (gc.freeze) what existed before it and puts it back when it closes.
    (One full collection, at the end: in a worker with the frameworks
    imported each costs ~0.3 s.)"""
    assert gc.get_freeze_count() == 0
    old = _Cycle()
    old_ref = weakref.ref(old)
    with LoopRun(FakeAdapter(), careful) as run:
        assert gc.get_freeze_count() > 0
        young = _Cycle()
        young_ref = weakref.ref(young)
        del old, young
        run.apply(User("hi"))
        gc.collect()
        assert young_ref() is None  # what the run made is collected
        assert old_ref() is not None  # what it set aside is not walked
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert old_ref() is None  # back in the heap, collected as usual
    gc.freeze()  # a caller that froze its heap itself keeps it frozen
    try:
        with LoopRun(FakeAdapter(), careful):
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_an_adapter_that_cannot_open_leaves_nothing_set_aside() -> None:
    class Broken(FakeAdapter):
        def open(self, target: object, harness: Harness) -> _FakeLoop:
            raise RuntimeError("no loop today")

    with pytest.raises(Exception, match="no loop today"):
        LoopRun(Broken(), careful)
    assert gc.get_freeze_count() == 0


def test_the_same_schedule_gives_the_same_requests_byte_for_byte() -> None:
    steps: list[Step] = [User("hi"), ReplyStep("", (READ_A, READ_B)), Complete("call_2", "B"),
                         Crash(), NewMessage("again"), ReplyStep("ok")]  # fmt: skip

    def requests() -> list[str]:
        with LoopRun(FakeAdapter(), FakeAgent(persist="eager")) as run:
            for s in steps:
                run.apply(s)
            return [r.to_json() for r in run.ledger.requests]

    assert requests() == requests()
