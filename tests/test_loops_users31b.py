"""Issue 31's remaining kinds of user code (round 34): a trim inside the user's
own graph node, a session's own item limit, a budget stated as a module
constant, a trim that empties the conversation, a summarizer that is a second
agent on its own provider string.

Each is a cheap check of the mechanism; ``tests/test_user_agents.py`` (slow)
holds the user agents of these kinds to their verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.subjects.loops.judge import ANTHROPIC_NO_MESSAGES, judge_request
from prunecheck.sim.subjects.loops.ladder import ladder
from prunecheck.sim.subjects.loops.ledger import Ledger
from prunecheck.sim.subjects.loops.reach import Budget, module_budget
from prunecheck.sim.subjects.user_code import find_object

AGENTS = Path(__file__).parent / "user_agents"


# ------------------------------------------------------------ an emptying trim
def test_a_request_emptied_to_the_system_prompt_is_refused_with_anthropics_text() -> None:
    body = {"messages": [{"role": "system", "content": "You are helpful."}]}
    found = judge_request(body, Ledger(), 4, trims=True)
    assert [(i.kind, i.reason, i.text) for i in found] == [
        (IncidentKind.PROVIDER_REJECTION, "anthropic:no_messages", ANTHROPIC_NO_MESSAGES)
    ]
    assert "only 1 system message(s) and no conversation" in found[0].detail
    nothing = judge_request({"messages": []}, Ledger(), 4, trims=True)
    assert [i.reason for i in nothing] == ["anthropic:no_messages"]
    assert "no message at all" in nothing[0].detail


def test_a_request_with_a_conversation_is_not_called_empty() -> None:
    body = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}
    assert judge_request(body, Ledger(), 1, trims=True) == []


# ------------------------------------------------------ a budget as a constant
def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "budget_agent.py"
    path.write_text(text)
    return str(path)


def test_a_module_constant_states_the_budget_by_its_name(tmp_path: Path) -> None:
    where = _write(tmp_path, "MAX_RETRIES = 3\nCONTEXT_TOKENS = 6_000\nKEEP = 4\n"
                             "def agent(model):\n    return model\n")  # fmt: skip
    factory = find_object(where, "agent", "test")
    assert module_budget(factory) == Budget(
        6_000, "tokens", "module constant CONTEXT_TOKENS = 6,000; its name says"
    )
    # the ladder's outputs are then aimed at it: an output as large as the budget on the first rung
    assert 6_000 in ladder(module_budget(factory))[0].shape.sizes


def test_an_object_of_the_users_file_finds_its_module_and_none_without_a_constant(
    tmp_path: Path,
) -> None:
    where = _write(tmp_path, "MAX_MESSAGES = 24\nclass A:\n    pass\nagent = A()\n")
    assert module_budget(find_object(where, "agent", "t")) == Budget(
        24, "messages", "module constant MAX_MESSAGES = 24; its name says"
    )
    bare = tmp_path / "bare.py"
    bare.write_text("DEBUG = True\nNAME = 'x'\ndef agent(model):\n    return model\n")
    assert module_budget(find_object(str(bare), "agent", "t")) is None
    assert module_budget(object()) is None  # no user module holds it


# ------------------------------------------- the Agents SDK session's own limit
def test_a_sessions_own_item_limit_is_a_trim_hook_with_its_budget() -> None:
    pytest.importorskip("agents")
    from prunecheck.sim.subjects.loops.contract import Capability
    from prunecheck.sim.subjects.loops.frameworks.openai_agents import OpenAIAgentsAdapter

    app = find_object(str(AGENTS / "oa_session_settings.py"), "app", "t")
    adapter = OpenAIAgentsAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(app)
    assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(app)
    assert adapter.budget(app) == Budget(
        6, "messages", "SQLiteSession(session_settings=SessionSettings(limit=6))"
    )


# --------------------------------------------- a trim inside the user's graph node
@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")  # the user's API
def test_a_hand_built_graphs_own_node_is_the_trim_hook() -> None:
    pytest.importorskip("langgraph")
    from prunecheck.sim.subjects.loops.contract import Capability
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    graph = find_object(str(AGENTS / "lg_sync_graph.py"), "agent", "t")
    adapter = LangGraphAdapter()
    assert adapter._shape_of(graph).own_nodes == ("chatbot",)
    assert Capability.TRIM_HOOK in adapter.capabilities(graph)
    assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(graph)
    react = find_object(str(AGENTS / "lg_react_pre_model_hook.py"), "agent", "t")
    assert adapter._shape_of(react).own_nodes == ()  # the prebuilt's node; its hook is its own


def test_a_middlewares_hook_node_is_not_an_own_node_and_its_plain_agent_opens() -> None:
    """``create_agent`` runs each middleware's hook as a node (``Name.before_model``)
    whose function is a method of the middleware, the user's class or the guard's:
    it is the middleware trim hook, not an own node; the plain agent, built without
    it, opened on that node's name (KeyError: 'CommitGuardMiddleware.before_model')."""
    pytest.importorskip("langchain.agents")
    from prunecheck.sim.subjects.loops.contract import Capability
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    examples = Path(__file__).parent.parent / "examples" / "loops"
    guarded = find_object(str(examples / "langgraph_guarded.py"), "agent", "t")
    adapter = LangGraphAdapter()
    assert adapter._shape_of(guarded).own_nodes == ()
    assert Capability.TRIM_HOOK in adapter.capabilities(guarded)
    run = LoopRun(adapter.without_trimming(), guarded)  # raised LoopError (the KeyError)
    run.close()


def test_the_plain_agent_sends_the_whole_state_the_users_node_was_called_with() -> None:
    pytest.importorskip("langgraph")
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from prunecheck.sim.subjects.loops.frameworks.lc_doubles import HarnessChatModel, whole_state

    sent: list[list[Any]] = []
    plain, configured = HarnessChatModel(whole_state=True), HarnessChatModel()

    def node(state: dict[str, list[Any]]) -> None:  # the user's node: the last message only
        cut = [SystemMessage("s"), *state["messages"][-1:]]
        sent.extend([plain._sent(cut), configured._sent(cut)])

    history = [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]
    whole_state(node)({"messages": history})
    assert [[m.content for m in s] for s in sent] == [["s", "a", "b", "c"], ["s", "c"]]
    assert plain._sent([HumanMessage("x")])[0].content == "x"  # outside a node: as given


# ------------------------------------- a summarizer that is a second agent (pydantic-ai)
def test_a_summarizer_agent_on_its_own_provider_string_asks_the_harness_and_may_fail() -> None:
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import PydanticAIAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun
    from prunecheck.sim.subjects.loops.steps import ModelError, ReplyStep, User
    from prunecheck.sim.subjects.loops.target import load_target

    target = load_target(f"loop:{AGENTS / 'pa_summarizer_docs.py'}:agent")
    with LoopRun(PydanticAIAdapter(), target.target) as run:
        for n in range(6):  # 12 messages: the processor hands the oldest 10 to its summarizer
            run.apply(User(f"question {n}"))
            if run.side_request():
                break
            run.apply(ReplyStep(f"answer {n}"))
        assert run.side_request()  # the summarizer's call waits on the schedule, offline
        aside = run.ledger.requests[-1].body
        assert "tools" not in aside and "Summarize this conversation" in str(aside)
        run.apply(ModelError("503 Service Unavailable (injected)"))
        assert run.watch.faults == 1
