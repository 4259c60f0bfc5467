"""LangGraph's older prebuilt API runs as written (issue 31): a
``create_react_agent`` graph loads without LangChain v1's middleware module,
its ``pre_model_hook`` is the trim hook, and a turn runs through its sync hook."""

from __future__ import annotations

import sys

import pytest
from loops_sync_agents import lc_sync_middleware, lg_react

from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("langgraph.prebuilt")


def test_the_pre_model_hook_of_create_react_agent_is_the_trim_hook() -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    caps = LangGraphAdapter().capabilities(lg_react)
    assert {Capability.TRIM_HOOK, Capability.CRASH_RESUME} <= caps


def test_create_react_agent_loads_where_langchain_has_no_middleware_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    monkeypatch.setitem(sys.modules, "langchain.agents.middleware", None)  # an older LangChain
    caps = LangGraphAdapter().capabilities(lg_react)
    assert Capability.TRIM_HOOK in caps


def test_a_turn_of_create_react_agent_runs_through_its_sync_hook() -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    read = [ToolCall(f"call_{n}", "read_file", f'{{"path": "{n}"}}') for n in (1, 2)]
    with LoopRun(LangGraphAdapter(), lg_react) as run:
        for step in (User("read"), ReplyStep("", (read[0],)), Complete("call_1", "one"),
                     ReplyStep("", (read[1],)), Complete("call_2", "two")):  # fmt: skip
            run.apply(step)
        bodies = [r.body["messages"] for r in run.ledger.requests]
        sent = [[m["role"] for m in body] for body in bodies if isinstance(body, list)]
        kinds = {i.kind.value for i in run.incidents}
    # the hook keeps the last 3 messages: the third request starts with call_1's result
    assert sent == [["user"], ["user", "assistant", "tool"], ["tool", "assistant", "tool"]]
    assert "orphaned_result" in kinds


def test_a_sync_only_middleware_runs_the_graph_with_invoke() -> None:
    pytest.importorskip("langchain.agents.middleware")
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    read = [ToolCall(f"call_{n}", "read_file", f'{{"path": "{n}"}}') for n in (1, 2, 3)]
    with LoopRun(LangGraphAdapter(), lc_sync_middleware) as run:
        assert Capability.TRIM_HOOK in run.capabilities
        run.apply(User("read"))
        run.apply(ReplyStep("", tuple(read[:2])))
        assert run.waiting_calls() == ["call_1"]  # the sync ToolNode runs its calls in turn
        run.apply(Complete("call_1", "one"))
        run.apply(Complete("call_2", "two"))
        run.apply(ReplyStep("", (read[2],)))
        run.apply(Complete("call_3", "three"))
        run.apply(ReplyStep("done"))
        bodies = [r.body["messages"] for r in run.ledger.requests]
        sent = [[m["role"] for m in body] for body in bodies if isinstance(body, list)]
        outcomes = [text for _, text in run.ledger.outcomes]
        kinds = {i.kind.value for i in run.incidents}
    assert outcomes == ["send returned"]  # under ainvoke, LangChain refuses the sync hook
    # the middleware's last 3 messages: call_2's result first in the third request
    assert sent == [["user"], ["assistant", "tool", "tool"], ["tool", "assistant", "tool"]]
    assert "orphaned_result" in kinds
