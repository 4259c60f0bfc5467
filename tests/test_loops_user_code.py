"""The user's LangGraph code as written (issue 31): a module-level graph, the app's own
checkpointer subclass.

``tests/user_agents/lc_provider_string.py`` compiles ``create_agent("openai:gpt-4o")``
at import (no factory); ``tests/user_agents/held_back/lc_capped_saver.py`` builds its
agent on an ``InMemorySaver`` subclass that caps what it stores.
"""

from __future__ import annotations

import importlib

import pytest

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.scheduler import LoopRun


@pytest.fixture(autouse=True)
def _needs_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")  # the module builds a ChatOpenAI


def test_a_module_level_graph_is_reopened_on_the_double_with_the_tools_as_built() -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter, module_graph
    from prunecheck.sim.subjects.loops.frameworks.lc_doubles import HarnessChatModel

    graph = importlib.import_module("tests.user_agents.lc_provider_string").agent
    assert module_graph(graph) is not None
    adapter = LangGraphAdapter()
    assert adapter.accepts(graph)
    names = {t.name for t in adapter.tools(graph)}
    assert names == {"get_weather", "get_time"}
    for _ in range(2):  # each open fakes the tools as built, never a fake of a fake
        with LoopRun(adapter, graph) as run:
            tools = graph.nodes["tools"].bound.tools_by_name
            assert {t.name for t in tools.values()} == names
            assert all(type(t).__name__ != "StructuredTool" for t in tools.values())
            func = graph.nodes["model"].bound.func
            held = dict(zip(func.__code__.co_freevars, func.__closure__ or (), strict=True))
            assert type(held["model"].cell_contents) is HarnessChatModel  # not the ChatOpenAI
            assert run.loop is not None


def test_the_apps_own_checkpointer_subclass_is_kept_and_trims() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    module = importlib.import_module("tests.user_agents.held_back.lc_capped_saver")
    adapter = LangGraphAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(module.agent)
    with LoopRun(adapter, module.agent) as run:
        saver = run.loop._graph.checkpointer  # type: ignore[union-attr]
        assert type(saver) is module.CappedSaver
    plain = adapter.without_trimming()
    assert Capability.TRIM_HOOK not in plain.capabilities(module.agent)
    with LoopRun(plain, module.agent) as run:
        assert type(run.loop._graph.checkpointer) is InMemorySaver  # type: ignore[union-attr]


def test_an_outputs_start_and_a_note_is_a_truncated_copy_not_an_invented_result() -> None:
    """A trimmer that keeps a long output's first characters and writes a note
    (``held_back/pa_truncate_outputs.py``'s) shows a truncated copy: truncated_payload,
    the narrative saying whether the note says so; a placeholder naming the call is not."""
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.judge import judge_request
    from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd, Ledger

    call = ToolCall("call_1", "read_logs", '{"service": "api"}')
    output = "read_logs result for call_1 " + "lorem ipsum " * 200
    led = Ledger()
    led.issue((call,), 1)
    led.bodies.append(Body("call_1", 1, BodyEnd.OK, 2, output))

    def found(text: str) -> list[tuple[str, str]]:
        body = {"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1",
             "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": text},
        ]}  # fmt: skip
        return [(i.kind.value, i.detail) for i in judge_request(body, led, 3, trims=True)]

    said = found(output[:2000] + "\n...[truncated]")
    assert [k for k, _ in said] == ["truncated_payload"], said
    assert "first 2000 of" in said[0][1] and "it says so" in said[0][1]
    silent = found(output[:300] + " and more words the tool never wrote")
    assert [k for k, _ in silent] == ["truncated_payload"] and "nothing says so" in silent[0][1]
    assert found("[output of read_logs for call_1 cleared to save context]") == []
