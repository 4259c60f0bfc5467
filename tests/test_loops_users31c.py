"""Issue 31, the gaps round 34's held-back agents found: trim hooks the adapters
did not see (an Agent Framework chat middleware, a pydantic-ai capability's
``before_model_request``), the provider named from the user's client, a module
constant's unit read from its code, an Agents SDK summarizer agent answered
by the harness.

Each drives the user's agent a few steps (cheap); ``tests/test_user_agents*.py``
(slow) holds the same kinds of agents to their whole verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.judge import judge_request
from prunecheck.sim.subjects.loops.ledger import Ledger
from prunecheck.sim.subjects.loops.reach import UNKNOWN_UNIT, Budget, module_budget
from prunecheck.sim.subjects.loops.steps import Complete, ModelError, ReplyStep, User
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.subjects.user_code import find_object

AGENTS = Path(__file__).parent / "user_agents"
R34 = AGENTS / "held_back_r34"


def _target(path: Path, attr: str) -> Any:
    return load_target(f"loop:{path}:{attr}").target


# ------------------------------------------ pydantic-ai: hooks that rewrite requests
def test_a_pydantic_ai_hooks_before_model_request_is_the_trim_hook() -> None:
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import (
        PydanticAIAdapter,
        _capabilities_of,
        request_hooks,
    )

    agent = _target(R34 / "pa_hooks_drop_returns.py", "agent")
    adapter = PydanticAIAdapter()
    assert Capability.TRIM_HOOK in adapter.capabilities(agent)
    assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(agent)
    hooks = [request_hooks(c) for c in _capabilities_of(agent)]
    assert ["before_model_request"] in hooks  # the Hooks; pydantic-ai's own capabilities: none
    assert hooks.count([]) == len(hooks) - 1
    logging_only = _target(AGENTS / "pa_hooks_logging_only.py", "agent")
    assert Capability.TRIM_HOOK not in adapter.capabilities(logging_only)


def _last_sent(run: Any) -> list[dict[str, Any]]:
    """The messages of the last request the loop sent."""
    return cast(list[dict[str, Any]], run.ledger.requests[-1].body["messages"])


def _turns(run: Any, n: int) -> None:
    for k in range(n):
        run.apply(User(f"question {k}"))
        run.apply(ReplyStep(f"answer {k}"))


def test_a_users_own_capability_class_trims_and_the_plain_agent_does_not() -> None:
    pytest.importorskip("pydantic_ai")
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import PydanticAIAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    agent = _target(AGENTS / "pa_capability_last_turns.py", "agent")
    assert Capability.TRIM_HOOK in PydanticAIAdapter().capabilities(agent)
    changed = {}
    for name, adapter in (("user", PydanticAIAdapter()),
                          ("plain", PydanticAIAdapter().without_trimming())):  # fmt: skip
        with LoopRun(adapter, agent) as run:
            _turns(run, 6)  # 12 messages: the capability keeps the first and the newest 6
            changed[name] = run.watch.changed
            sent = _last_sent(run)
        if name == "user":
            assert [m["content"] for m in sent if m["role"] == "user"][:2] == [
                "question 0", "question 3"
            ]  # fmt: skip
    assert changed["user"] >= 1 and changed["plain"] == 0
    # the plain agent's pass-through was put back: the user's method is the class's again
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import _capabilities_of

    capability = next(c for c in _capabilities_of(agent) if type(c).__name__ == "KeepLastTurns")
    assert "before_model_request" not in vars(capability)


# --------------------------------------- Agent Framework: chat middleware that trims
def test_agent_framework_chat_middleware_is_the_trim_hook() -> None:
    pytest.importorskip("agent_framework")
    from prunecheck.sim.subjects.loops.frameworks.maf import MAFAdapter, chat_middleware

    adapter = MAFAdapter()
    decorated = _target(R34 / "maf_chat_middleware_chars.py", "agent")
    subclass = _target(AGENTS / "maf_middleware_drop_old_outputs.py", "agent")
    for agent in (decorated, subclass):
        assert len(chat_middleware(agent)) == 1
        assert Capability.TRIM_HOOK in adapter.capabilities(agent)
        assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(agent)


def test_a_chat_middleware_dropping_a_tool_output_is_judged_and_the_plain_agent_keeps_it() -> None:
    pytest.importorskip("agent_framework")
    from prunecheck.model.incidents import IncidentKind
    from prunecheck.sim.subjects.loops.frameworks.maf import MAFAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    agent = _target(AGENTS / "maf_middleware_drop_old_outputs.py", "agent")
    first = ToolCall("call_1", "search_tickets", '{"query": "refund"}')
    second = ToolCall("call_2", "search_tickets", '{"query": "refund 2024"}')
    kinds = {}
    for name, adapter in (("user", MAFAdapter()), ("plain", MAFAdapter().without_trimming())):
        with LoopRun(adapter, agent) as run:
            run.apply(User("find the refund tickets"))
            run.apply(ReplyStep("", (first,)))
            run.apply(Complete("call_1", "ticket " * 10_000))  # 70,000 characters: 17,500 tokens
            run.apply(ReplyStep("", (second,)))
            run.apply(Complete("call_2", "none"))  # the next request is over PROMPT_TOKENS
            sent = _last_sent(run)
            kinds[name] = {i.kind for i in run.incidents}
            answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
            assert answered == (["call_2"] if name == "user" else ["call_1", "call_2"])
            assert (run.watch.changed >= 1) is (name == "user")
    assert IncidentKind.UNANSWERED_CALL in kinds["user"] and not kinds["plain"]


# ------------------------------------------------- the provider of the user's client
def test_the_provider_is_read_from_the_users_model_client() -> None:
    pytest.importorskip("llama_index.llms.anthropic")
    pytest.importorskip("autogen_ext.models.openai")
    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter
    from prunecheck.sim.subjects.loops.frameworks.llamaindex import LlamaIndexAdapter

    on_anthropic = _target(R34 / "li_drop_tool_outputs_memory.py", "agent")
    assert LlamaIndexAdapter().providers(on_anthropic) == {"anthropic"}
    on_openai = _target(R34 / "ag_summarizing_context.py", "agent")
    assert AutoGenAdapter().providers(on_openai) == {"openai"}
    factory = _target(AGENTS / "ag_buffered_large.py", "agent")  # prunecheck hands it the client
    assert AutoGenAdapter().providers(factory) == frozenset()


_ORPHAN = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                        {"role": "tool", "tool_call_id": "call_1", "content": "out"}]}  # fmt: skip


@pytest.mark.parametrize(
    ("providers", "named"),
    [({"anthropic"}, {"anthropic"}), ({"openai"}, {"openai"}), (set(), {"openai", "anthropic"})],
)
def test_only_the_clients_provider_judges_a_request(providers: set[str], named: set[str]) -> None:
    found = judge_request(_ORPHAN, Ledger(), 3, trims=True, providers=frozenset(providers))
    rejected = {i.reason.split(":")[0] for i in found if i.reason and ":" in i.reason}
    assert rejected == named


def test_an_emptied_request_is_refused_only_by_providers_that_refuse_it() -> None:
    body = {"messages": [{"role": "system", "content": "s"}]}
    for providers, reasons in (({"openai"}, []), ({"anthropic"}, ["anthropic:no_messages"]),
                               (set(), ["anthropic:no_messages"])):  # fmt: skip
        found = judge_request(body, Ledger(), 2, trims=True, providers=frozenset(providers))
        assert [i.reason for i in found] == reasons


# ------------------------------------------------- a module constant's unit, from its code
@pytest.mark.parametrize(
    ("path", "attr", "budget"),
    [
        (R34 / "oa_session_clear_outputs.py", "app", (3, "outputs", "KEEP_OUTPUTS")),
        (R34 / "adk_callback_clear_outputs.py", "root_agent", (2, "responses",
                                                               "KEEP_RECENT_OUTPUTS")),
        (R34 / "pa_hooks_drop_returns.py", "agent", (12_000, "tokens", "TOKEN_BUDGET")),
        (R34 / "maf_chat_middleware_chars.py", "agent", (30_000, "characters",
                                                         "MAX_REQUEST_CHARS")),
        (AGENTS / "pa_capability_last_turns.py", "agent", (6, "messages", "KEEP_LAST_MESSAGES")),
    ],
)  # fmt: skip
def test_a_module_constants_unit_is_what_its_code_counts(
    path: Path, attr: str, budget: tuple[int, str, str]
) -> None:
    found = module_budget(_target(path, attr))
    assert found is not None
    assert (found.amount, found.unit) == budget[:2]
    assert found.where.startswith(f"module constant {budget[2]} = ")
    assert found.where.endswith("its code counts it")


def test_a_constant_nothing_says_the_unit_of_is_unknown_and_never_measured(
    tmp_path: Path,
) -> None:
    from prunecheck.sim.api.loop_reach import Figures
    from prunecheck.sim.subjects.loops.ladder import ladder

    path = tmp_path / "keep_agent.py"
    path.write_text("KEEP_RECENT = 4\n\ndef agent(model):\n    return model\n")
    found = module_budget(find_object(str(path), "agent", "t"))
    assert found == Budget(4, UNKNOWN_UNIT, "module constant KEEP_RECENT = 4; neither its name "
                           "nor its code says what it counts")  # fmt: skip
    assert "4 (unit unknown: module constant KEEP_RECENT" in found.text()
    assert ladder(found) == ladder(None)  # it aims nothing
    figures = Figures(60, 0, True, 3, 17, 900, 225, "estimated", found)
    assert "not measured in the history" in figures.largest()
    assert "against its budget" not in figures.largest()


# --------------------------------------------- the Agents SDK: a summarizer agent
def test_an_agents_sdk_summarizer_agent_asks_the_harness_and_may_fail() -> None:
    pytest.importorskip("agents")
    from prunecheck.sim.subjects.loops.frameworks.openai_agents import OpenAIAgentsAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    app = _target(AGENTS / "late_oa_summarizing_filter.py", "app")
    with LoopRun(OpenAIAgentsAdapter(), app) as run:
        for n in range(10):  # past 14 items the filter runs its summarizer with Runner.run
            run.apply(User(f"question {n}"))
            if run.side_request():
                break
            run.apply(ReplyStep(f"answer {n}"))
        assert run.side_request()  # the summarizer's call waits on the schedule, offline
        aside = run.ledger.requests[-1].body
        assert "tools" not in aside and "Summarize the conversation" in str(aside)
        run.apply(ModelError("503 Service Unavailable (injected)"))
        assert run.watch.faults == 1
