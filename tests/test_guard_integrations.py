"""The guard's integrations (LangChain middleware, AutoGen context, the
plain list wrapper) and their runnable examples.  Framework tests skip
cleanly when the extra is not installed."""

from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(name: str) -> dict[str, Any]:
    return runpy.run_path(str(EXAMPLES / name), run_name="example")


def test_langchain_middleware_keeps_units_whole_in_before_model() -> None:
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import (
        AIMessage,
        AnyMessage,
        HumanMessage,
        ToolMessage,
        trim_messages,
    )
    from langgraph.runtime import Runtime

    from prunecheck.guard.langchain import CommitGuardMiddleware

    def words(messages: Any) -> int:
        items = messages if isinstance(messages, list) else [messages]
        return sum(len(str(m.content).split()) + 1 for m in items)

    call = AIMessage(
        "",
        tool_calls=[
            {"name": "read_file", "args": {"path": "a"}, "id": "t1"},
            {"name": "read_file", "args": {"path": "b"}, "id": "t2"},
        ],
    )
    history: list[AnyMessage] = [
        HumanMessage("x " * 80),
        call,
        ToolMessage("a " * 40, tool_call_id="t1"),
        ToolMessage("b " * 40, tool_call_id="t2"),
        HumanMessage("go on"),
    ]
    middleware = CommitGuardMiddleware(
        trim_messages, budget=60, hard_ceiling=500, token_counter=words
    )
    update = middleware.before_model({"messages": history}, Runtime())
    assert update is not None
    remove_all, *kept = update["messages"]
    assert remove_all.type == "remove"
    # trim_messages (strategy=last) keeps t2's result and drops its call: the guard
    # drops the whole unit instead, never a result without its call
    assert kept == [history[4]]
    pending: list[AnyMessage] = [
        HumanMessage("x " * 80),
        call,
        ToolMessage("a " * 40, tool_call_id="t1"),
    ]
    assert middleware.before_model({"messages": pending}, Runtime()) is None  # t2 pending: defer


def test_langchain_example_runs_offline() -> None:
    pytest.importorskip("langchain.agents")
    sent = _example("langchain_middleware.py")["main"]()
    assert len(sent) == 2
    second = [m.type for m in sent[1]]
    assert second == ["human", "ai", "tool", "tool"]  # the background went, the unit stayed


def test_autogen_context_defers_then_prunes_whole_units() -> None:
    pytest.importorskip("autogen_core")
    seen = asyncio.run(_example("autogen_context.py")["main"]())
    names = [[type(m).__name__ for m in step] for step in seen]
    assert names[0] == ["SystemMessage", "UserMessage", "UserMessage", "AssistantMessage"]
    assert names[1] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "FunctionExecutionResultMessage",
    ]
    assert names[2] == ["SystemMessage", "AssistantMessage", "UserMessage"]


def test_autogen_messages_round_trip_through_the_spill_store() -> None:
    pytest.importorskip("autogen_core")
    from autogen_core import FunctionCall
    from autogen_core.models import AssistantMessage

    from prunecheck.guard.autogen import decode_message, encode_message

    message = AssistantMessage(
        content=[FunctionCall(id="c1", name="f", arguments="{}")], source="agent"
    )
    assert decode_message(encode_message(message)) == message


def test_the_plain_list_wrapper_example(capsys: pytest.CaptureFixture[str]) -> None:
    _example("openai_list_guard.py")["main"]()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("keep_last alone keeps: ['system', 'c2'")  # a result, no call
    assert "deferred: pending_call" in out[1]
    assert out[3].startswith("over the ceiling") and "('c4',)" in out[3]


def test_the_asyncio_loop_example(capsys: pytest.CaptureFixture[str]) -> None:
    _example("agent_loop.py")["main"]()
    out = capsys.readouterr().out
    assert "NaiveLoop: 7 violation(s)" in out and "GuardedLoop: 0 violation(s)" in out
    assert json.dumps("duplicated side effect")[1:-1] in out


def test_langchain_threads_of_one_agent_keep_their_own_conversations() -> None:
    """One middleware serves every LangGraph thread of an agent: each
    thread id gets its own guard and conversation in the shared store."""
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
    from langchain_core.runnables import RunnableLambda
    from langgraph.runtime import Runtime

    from prunecheck.guard.langchain import CommitGuardMiddleware

    middleware = CommitGuardMiddleware(lambda m: m, budget=50, store=":memory:")

    def before_model(state: Any) -> dict[str, Any] | None:
        return middleware.before_model(state, Runtime())

    step: RunnableLambda[Any, dict[str, Any] | None] = RunnableLambda(before_model)

    def call(cid: str) -> AIMessage:
        return AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a.txt"}, "id": cid}])

    one: list[AnyMessage] = [HumanMessage("x " * 400), HumanMessage("go on"), call("t1")]
    step.invoke({"messages": one}, config={"configurable": {"thread_id": "one"}})
    first, second = middleware.guard_for("one"), middleware.guard_for("two")
    assert first is not second and first.conversation != second.conversation
    assert first.spilled and first.conversation.endswith(":one")  # the long message went
    two: list[AnyMessage] = [HumanMessage("hi"), call("t9")]
    step.invoke({"messages": two}, config={"configurable": {"thread_id": "two"}})
    assert second.spilled == () and middleware.guard.spilled == ()


def test_langchain_middleware_trimmer_assigned_later_reaches_every_thread() -> None:
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import AnyMessage, HumanMessage

    from prunecheck.guard.langchain import CommitGuardMiddleware

    def keep_all(messages: list[AnyMessage]) -> list[AnyMessage]:
        return messages

    def keep_last(messages: list[AnyMessage]) -> list[AnyMessage]:
        return messages[-1:]

    middleware = CommitGuardMiddleware(keep_all, budget=20, hard_ceiling=1_000)
    thread = middleware.guard_for("t1")
    middleware.trimmer = keep_last
    assert middleware.trimmer is keep_last
    history: list[AnyMessage] = [
        HumanMessage("x " * 50),
        HumanMessage("y " * 50),
        HumanMessage("z"),
    ]
    for guard in (middleware.guard, thread, middleware.guard_for("t2")):
        assert guard.trimmer is keep_last
        assert guard(history) == history[-1:]  # keep_last asked (keep_all would keep all)
    with pytest.raises(TypeError, match="is not a trimmer"):
        middleware.trimmer = 42
    assert middleware.trimmer is keep_last and thread.trimmer is keep_last  # nothing changed
