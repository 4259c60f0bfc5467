"""What the pydantic-ai and Agents SDK adapters share
(``sim/subjects/loops/frameworks/_common.py``): recognizing a target, inline executor work."""

from __future__ import annotations

import asyncio
import threading

from prunecheck.sim.subjects.loops.frameworks._common import (
    InlineExecutor,
    build_target,
    inline_executor,
)

#: This module stands for a framework's package.
PACKAGE = __name__.split(".")[0]


class Agent:
    """An agent of the framework."""


class Tool:
    """Another object of the framework (not an agent)."""


def is_agent(obj: object) -> bool:
    return isinstance(obj, Agent)


def test_a_target_is_an_agent_or_a_factory_taking_no_argument() -> None:
    agent = Agent()
    assert build_target(agent, PACKAGE, is_agent) is agent
    assert build_target(lambda: agent, PACKAGE, is_agent) is agent
    assert build_target(lambda: (agent, "config"), PACKAGE, is_agent) == (agent, "config")
    assert build_target(lambda extra=0: agent, PACKAGE, is_agent) is agent
    assert build_target(lambda needed: agent, PACKAGE, is_agent) is None  # needs an argument
    assert build_target(Tool(), PACKAGE, is_agent) is None  # the framework's, not an agent
    assert build_target(lambda: Tool(), PACKAGE, is_agent) is None
    assert build_target(agent, "pydantic_ai", is_agent) is None  # another framework's
    assert build_target(Agent, PACKAGE, is_agent) is None  # a class is not a factory


def test_executor_work_runs_on_the_loop_thread_before_the_await_yields() -> None:
    where: list[int] = []

    def work() -> int:
        where.append(threading.get_ident())
        return 7

    async def main() -> int:
        inline_executor()
        inline_executor()  # idempotent
        assert isinstance(asyncio.get_running_loop()._default_executor, InlineExecutor)  # type: ignore[attr-defined]
        return await asyncio.to_thread(work)

    assert asyncio.run(main()) == 7
    assert where == [threading.get_ident()]


def test_inline_executor_delivers_exceptions_to_the_awaiting_task() -> None:
    def boom() -> None:
        raise ValueError("disk full")

    future = InlineExecutor(max_workers=1).submit(boom)
    assert isinstance(future.exception(), ValueError)
