"""The handoff executor (sim/subjects/loops/handoff.py): the user's sync code
runs on threads that pass one baton with the loop's thread, so a schedule
decides its order; a sync call into the harness waits for the schedule; a run
that ends leaves no thread behind.  Agents: tests/loops_sync_agents.py."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from loops_sync_agents import PROCESSED, lg_agent, pa_agent

from prunecheck.sim.drivers.action_search import search
from prunecheck.sim.subjects.loops import handoff
from prunecheck.sim.subjects.loops.clock import LoopStuck, VirtualLoop
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User, step_to_json
from prunecheck.sim.subjects.loops.system import LoopSystem

READ = ToolCall("call_1", "read_file", '{"path": "a"}')


def _threads() -> set[int]:
    return {t.ident or 0 for t in threading.enumerate()}


def test_sync_jobs_run_one_at_a_time_in_the_order_they_were_awaited() -> None:
    loop = VirtualLoop()
    seen: list[str] = []

    def job(n: int) -> int:
        seen.append(f"start {n}")
        time.sleep(0.002)  # a free thread pool would interleave the others here
        seen.append(f"end {n}")
        return n

    async def main() -> list[int]:
        return list(await asyncio.gather(*(asyncio.to_thread(job, n) for n in range(4))))

    task = loop.create_task(main())
    loop.settle()
    assert task.result() == [0, 1, 2, 3]
    assert seen == [f"{edge} {n}" for n in range(4) for edge in ("start", "end")]
    loop.discard()


def test_a_sync_call_into_the_harness_waits_for_the_schedule() -> None:
    loop = VirtualLoop()
    reply: asyncio.Future[str] = loop.create_future()

    async def ask() -> str:  # what a model double's request does: wait on the harness
        return await reply

    def node() -> str:  # a sync graph node calling model.invoke
        return "got " + handoff.run_on_loop(ask())

    task = loop.create_task(asyncio.to_thread(node))
    loop.settle()  # quiescent: the node's thread waits on the harness, it is not "busy"
    assert not task.done() and loop.handoff.started == 1
    reply.set_result("the reply")
    loop.settle()
    assert task.result() == "got the reply"
    loop.discard()


def test_anyio_threads_go_to_the_handoff_on_a_virtual_loop_only() -> None:
    anyio = pytest.importorskip("anyio")

    def name() -> str:
        return threading.current_thread().name

    loop = VirtualLoop()
    task = loop.create_task(anyio.to_thread.run_sync(name))
    loop.settle()
    assert task.result() == "prunecheck handoff worker"
    loop.discard()
    assert asyncio.run(anyio.to_thread.run_sync(name)) == "AnyIO worker thread"


def test_a_sync_function_blocked_elsewhere_is_stuck_not_a_hang() -> None:
    loop = VirtualLoop(thread_patience=0.2)
    never = threading.Event()
    loop.create_task(asyncio.to_thread(never.wait))
    with pytest.raises(LoopStuck, match=r"sync function of the agent \(Event.wait\)"):
        loop.settle()
    never.set()
    loop.discard()


def test_a_run_that_ends_wakes_and_joins_workers_waiting_on_the_harness() -> None:
    before = _threads()
    loop = VirtualLoop()
    ended: list[str] = []

    async def forever() -> None:
        await loop.create_future()

    def node() -> None:
        try:
            handoff.run_on_loop(forever())
        except handoff.RunDropped:
            ended.append("dropped")
            raise

    loop.create_task(asyncio.to_thread(node))
    loop.settle()
    assert _threads() - before  # the worker waits on the harness
    loop.discard()
    assert ended == ["dropped"] and _threads() <= before


def test_a_sync_call_into_the_harness_from_the_loops_own_thread_says_why_it_cannot() -> None:
    async def ask() -> None:
        return None

    with pytest.raises(RuntimeError, match="from the event loop's own thread cannot wait"):
        handoff.run_on_loop(ask())


def test_a_sync_pydantic_ai_history_processor_is_deterministic_and_leaves_no_thread() -> None:
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import PydanticAIAdapter

    system = LoopSystem.of(PydanticAIAdapter(), pa_agent)
    before = _threads()
    PROCESSED.clear()
    runs = []
    for _ in range(2):
        out = search(system, seed=3, max_examples=6, shrink_runs=0, polish_runs=0)
        runs.append((out.examples, out.steps, sorted(out.exercised.items())))
    assert runs[0] == runs[1] and runs[0][1] > 0
    assert PROCESSED and set(PROCESSED) == {"prunecheck handoff worker"}
    assert _threads() <= before


def test_a_hand_built_langgraph_graph_with_a_sync_node_is_driven() -> None:
    pytest.importorskip("langgraph")
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    before = _threads()
    with LoopRun(LangGraphAdapter(), lg_agent) as run:
        for step in (User("read a"), ReplyStep("", (READ,)), Complete("call_1", "A"),
                     ReplyStep("done")):  # fmt: skip
            run.apply(step)
        requests = [r.body["messages"] for r in run.ledger.requests]
        outcomes = [text for _, text in run.ledger.outcomes]
    assert len(requests) == 2 and outcomes == ["send returned"]
    last = requests[-1]
    assert isinstance(last, list)
    assert [m["role"] for m in last] == ["user", "assistant", "tool"]
    assert last[-1]["content"] == "A" and run.incidents == []
    assert _threads() <= before
    assert [step_to_json(s)["kind"] for s in run.steps] == ["user", "reply", "complete", "reply"]


def test_a_stuck_function_is_named_through_the_frameworks_wrappers() -> None:
    import contextvars
    import functools

    def keep_last(messages: list[str]) -> list[str]:
        return messages

    def call_with_sync_agent_guard() -> list[str]:  # pydantic-ai's wrapper of a sync callback
        return keep_last([])

    call_with_sync_agent_guard.__module__ = "pydantic_ai._utils"
    wrapped = functools.partial(contextvars.copy_context().run, call_with_sync_agent_guard)
    assert handoff._name(wrapped, ()) == (
        "test_a_stuck_function_is_named_through_the_frameworks_wrappers.<locals>.keep_last"
    )
