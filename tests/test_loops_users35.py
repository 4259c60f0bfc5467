"""Issue 31, the gaps round 35's held-back agents found: a Strands hook callback
that edits ``agent.messages`` is the user's trim hook (not the default window
manager); a LangGraph ``StateGraph`` compiled at module level, its models built
at module level, is driven (its summarizer's call a fault to inject, its
``RemoveMessage`` cut the trim); an Agent Framework history provider of the
user's own class that cuts on load is the user's trimming, and the plain agent
loads with the framework's class.

Each drives an agent of its kind written the way users write them
(``tests/user_agents/``, not the held-back ones) a few steps;
``tests/test_user_agents_r35.py`` (slow) holds the held-back agents to their
whole verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.reach import budget_of
from prunecheck.sim.subjects.loops.steps import Complete, ModelError, ReplyStep, Step, User
from prunecheck.sim.subjects.loops.target import load_target

AGENTS = Path(__file__).parent / "user_agents"


def _target(name: str, attr: str) -> Any:
    return load_target(f"loop:{AGENTS / name}:{attr}").target


def _roles(run: Any) -> list[str]:
    """The roles of the last request the loop sent."""
    messages = cast(list[dict[str, Any]], run.ledger.requests[-1].body["messages"])
    return [str(m["role"]) for m in messages]


def _drive(adapter: Any, agent: Any, steps: list[Step]) -> tuple[list[str], set[str], int]:
    """The last request's roles, the incidents' kinds and the times the user's code
    changed the history, after ``steps``."""
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    with LoopRun(adapter, agent) as run:
        for step in steps:
            run.apply(step)
        return _roles(run), {str(i.kind) for i in run.incidents}, run.watch.changed


_BROKEN = {str(IncidentKind.ORPHANED_RESULT), str(IncidentKind.PROVIDER_REJECTION)}


# ------------------------------------------------ Strands: a hook callback that trims
def test_a_strands_hook_editing_the_messages_is_the_trim_hook_with_its_modules_budget() -> None:
    pytest.importorskip("strands")
    from prunecheck.sim.subjects.loops.frameworks.strands import StrandsAdapter, user_hooks

    agent = _target("st_hook_char_budget.py", "agent")
    assert [e.__name__ for e, _ in user_hooks(agent)] == ["BeforeModelCallEvent"]
    adapter = StrandsAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(agent)
    # the hook's budget, not the default SlidingWindowConversationManager(window_size=40)'s
    budget = budget_of(adapter, agent)
    assert budget is not None and (budget.amount, budget.unit) == (30_000, "characters")
    assert budget.where.startswith("module constant MAX_CONTEXT_CHARS")
    plain = adapter.without_trimming()
    assert Capability.TRIM_HOOK not in plain.capabilities(agent)
    assert "MAX_CONTEXT_CHARS" not in str(budget_of(plain, agent))


def test_the_strands_hook_runs_in_the_users_agent_and_not_in_the_plain_one() -> None:
    pytest.importorskip("strands")
    from prunecheck.sim.subjects.loops.frameworks.strands import StrandsAdapter

    agent = _target("st_hook_char_budget.py", "agent")
    steps = _st_steps()
    roles, kinds, changed = _drive(StrandsAdapter(), agent, steps)
    assert roles == ["system", "tool"] and kinds >= _BROKEN and changed == 1
    roles, kinds, changed = _drive(StrandsAdapter().without_trimming(), agent, steps)
    assert roles == ["system", "user", "assistant", "tool"] and not kinds and changed == 0


def _st_steps() -> list[Step]:
    return [
        User("why is checkout down"),
        ReplyStep("", (ToolCall("call_1", "read_log", '{"service": "checkout"}'),)),
        Complete("call_1", "x" * 40_000),  # over MAX_CONTEXT_CHARS: the hook pops from the front
    ]


def test_the_strands_script_registers_the_users_hooks_only_when_it_has_some() -> None:
    from prunecheck.sim.subjects.loops.frameworks.strands_repro import script_text
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    schedule = schedule_to_json(_st_steps(), target="m:a", framework="strands", seed=1)
    hooked = script_text("m:a", schedule, hooks=("BeforeModelCallEvent",))
    plain = script_text("m:a", schedule)
    assert "_registered_callbacks" in hooked and "_registered_callbacks" not in plain
    assert "'BeforeModelCallEvent'" in hooked
    compile(hooked, "repro.py", "exec")


@pytest.mark.slow
def test_the_strands_hooks_script_replays_the_rejection_with_strands_alone(tmp_path: Path) -> None:
    pytest.importorskip("strands")
    from prunecheck.sim.reports.alone import run_alone
    from prunecheck.sim.subjects.loops.frameworks.strands import StrandsAdapter
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    spec = f"{AGENTS / 'st_hook_char_budget.py'}:agent"
    schedule = schedule_to_json(_st_steps(), target=spec, framework="strands", seed=1)
    script = tmp_path / "repro.py"
    script.write_text(StrandsAdapter().script(spec, schedule, folder=tmp_path))
    proc = run_alone(script, "strands", tmp_path, keep_guard=False, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == (
        "reproduced: provider_rejection: the conversation starts with the tool's message"
    )


# ---------------------------------- LangGraph: a StateGraph compiled at module level
def _lg_steps() -> list[Step]:
    batch = (ToolCall("call_1", "lookup_order", '{"order_id": "1"}'),
             ToolCall("call_2", "lookup_order", '{"order_id": "2"}'))  # fmt: skip
    return [
        User("hi"), ReplyStep("hello"), User("orders 1 and 2?"), ReplyStep("", batch),
        Complete("call_1", "shipped"), Complete("call_2", "packed"), ReplyStep("1 shipped"),
    ]  # fmt: skip  # 7 messages: the summarize node asks its own model next


def test_a_module_level_state_graph_is_driven_its_models_pointed_at_the_double() -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter, module_graph

    loaded = load_target(f"loop:{AGENTS / 'lg_module_graph_summary.py'}:graph")
    assert isinstance(loaded.adapter, LangGraphAdapter)  # not refused: exit 2 before
    found = module_graph(loaded.target)
    assert found is not None and len(found._slots) == 2  # `llm` (tools bound), `summarizer`
    assert module_graph(loaded.target) is found  # read once, as the module built it
    adapter = LangGraphAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(loaded.target)
    assert adapter.untimed_faults(loaded.target)  # its own node calls the model once


def test_the_module_graphs_remove_message_cut_is_the_users_and_the_plain_agent_keeps_all() -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    graph = _target("lg_module_graph_summary.py", "graph")
    steps = [*_lg_steps(), ReplyStep("a summary"), User("and 3?")]
    plain = LangGraphAdapter().without_trimming()
    roles, kinds, changed = _drive(plain, graph, steps)  # first: it leaves the nodes wrapped
    assert roles == ["user", "assistant", "user", "assistant", "tool", "tool", "assistant",
                     "user"] and not kinds and changed == 0  # fmt: skip
    roles, kinds, changed = _drive(LangGraphAdapter(), graph, steps)
    assert roles == ["tool", "tool", "assistant", "user"] and kinds >= _BROKEN and changed == 1


def test_the_module_graphs_summarizer_may_fail_in_the_trimming_class() -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass, enabled_kinds
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    graph = _target("lg_module_graph_summary.py", "graph")
    trim = SCENARIOS[ScenarioClass.TRIM]
    with LoopRun(LangGraphAdapter(), graph) as run:
        for step in _lg_steps():
            run.apply(step)
        assert run.side_request()  # the summarizer's prompt offers no tools
        assert "tools" not in run.ledger.requests[-1].body
        # no clock steps in the trimming class: offered all the same (no retry waits)
        assert "model_error" in enabled_kinds(run, trim, frozenset({"user", "reply"}))
        run.apply(ModelError("429 Too Many Requests (injected)"))
        assert run.watch.faults == 1 and not run.turn_running


# ----------------------- Agent Framework: a history provider subclass that cuts on load
def test_an_agent_framework_history_provider_subclass_is_the_trim_hook() -> None:
    pytest.importorskip("agent_framework")
    from agent_framework import InMemoryHistoryProvider

    from prunecheck.sim.subjects.loops.frameworks.maf import (
        MAFAdapter,
        _as_framework,
        own_history,
    )

    agent = _target("maf_history_last_messages.py", "agent")
    (own,) = own_history(agent)
    assert type(own).__name__ == "NewestMessages"
    assert type(_as_framework(own)) is InMemoryHistoryProvider  # the plain agent's
    assert type(own).__name__ == "NewestMessages"  # the user's object as it was
    adapter = MAFAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(agent)
    assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(agent)
    budget = budget_of(adapter, agent)
    assert budget is not None and (budget.amount, budget.unit) == (4, "messages")


def test_the_history_providers_cut_is_the_users_and_the_plain_agent_loads_everything() -> None:
    pytest.importorskip("agent_framework")
    from prunecheck.sim.subjects.loops.frameworks.maf import MAFAdapter

    agent = _target("maf_history_last_messages.py", "agent")
    steps: list[Step] = [
        User("invoice 7?"),
        ReplyStep("", (ToolCall("call_1", "find_invoice", '{"number": "7"}'),)),
        Complete("call_1", "paid"),
        ReplyStep("7 is paid"),
        User("thanks"),
        ReplyStep("welcome"),
        User("and 8?"),  # 6 stored: the newest 4 start with the tool result
    ]
    roles, kinds, changed = _drive(MAFAdapter(), agent, steps)
    assert roles == ["system", "tool", "assistant", "user", "assistant", "user"]
    assert kinds >= _BROKEN and changed == 1
    # the plain agent (before the fix: the user's subclass kept, the same orphan) loads all
    roles, kinds, changed = _drive(MAFAdapter().without_trimming(), agent, steps)
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                     "user"] and not kinds and changed == 0  # fmt: skip


def test_a_store_of_the_users_own_is_not_a_trim() -> None:
    pytest.importorskip("agent_framework")
    from agent_framework import Agent, HistoryProvider, Message

    from prunecheck.sim.subjects.loops.frameworks.maf import own_history

    class ListStore(HistoryProvider):  # the abstract base: get_messages is the store's own
        def __init__(self) -> None:
            super().__init__("list_store")
            self.kept: list[Message] = []

        async def get_messages(self, session_id: str | None, **kwargs: Any) -> list[Message]:
            return list(self.kept)

        async def save_messages(self, session_id: str | None, messages: Any, **kwargs: Any) -> None:
            self.kept.extend(messages)

    agent = _target("maf_history_last_messages.py", "agent")
    store = Agent(client=agent.client, name="store", context_providers=[ListStore()])
    assert own_history(store) == []


@pytest.mark.slow
def test_the_module_graphs_script_replays_the_orphan_with_langchain_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")
    from prunecheck.sim.reports.alone import run_alone
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")  # the module builds a ChatOpenAI
    spec = f"{AGENTS / 'lg_module_graph_summary.py'}:graph"
    steps = [*_lg_steps(), ReplyStep("a summary"), User("and 3?")]
    schedule = schedule_to_json(steps, target=spec, framework="langgraph", seed=1)
    script = tmp_path / "repro.py"
    script.write_text(LangGraphAdapter().script(spec, schedule, folder=tmp_path))
    proc = run_alone(script, "langgraph", tmp_path, keep_guard=False, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == (
        "reproduced: orphaned_result: request #5 sends the result of call_1 without its call"
    )
