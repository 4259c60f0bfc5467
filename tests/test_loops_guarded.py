"""prunecheck's own guard inside the real agent loops (issue 21).

The four integrations, each driven through its framework's own loop by the
harness: the LangChain middleware (``examples/loops/langgraph_guarded.py``),
the AutoGen context wrapper (``autogen_guarded.py``), ``ListGuard`` in a
pydantic-ai history processor (``pydantic_ai_guarded.py``) and in an Agents
SDK input filter (``openai_agents_guarded.py``).  Where the guard applies no
request breaks, and what it removes is whole, closed units (the ledger's
trims); what breaks after a cancel, a crash, a failed or a timed-out tool
breaks the same way without any trim (outside what a trimming guard can
prevent); and a trimmer without the guard is caught, so these tests can
fail.  pydantic-ai 2.68 repairs
every history before a request (orphaned results dropped, dangling calls
answered with invented results), so its docs' keep-last-5 trim alone
leaves only whole units behind; its control trims to the first 2 and the
last 3 messages, which that repair answers with invented results.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from loops_play import call, load_example, play, roles

from prunecheck.sim.api.loop_verdict import CellVerdict, check_loop
from prunecheck.sim.drivers.action_search import search
from prunecheck.sim.reports.loops import OUTSIDE_THE_TRIM
from prunecheck.sim.subjects.loops.contract import Adapter, ToolCall
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.steps import Complete, Crash, NewMessage, ReplyStep, Step, User
from prunecheck.sim.subjects.loops.story import retell
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import load_target

#: Violations that a trim that cuts a unit causes.
PAIRING = {"provider_rejection", "orphaned_result", "unanswered_call", "invalid_prune"}


def _langgraph_untrimmed() -> object:
    """``langgraph_guarded``'s agent without its trimming middleware."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    search: Any = load_example("langgraph_guarded", "search")
    send_email: Any = load_example("langgraph_guarded", "send_email")

    def agent(model: Any, checkpointer: Any = None) -> Any:
        return create_agent(
            model,
            tools=[search, send_email],
            system_prompt="You are a support agent.",
            middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_email": True})],
            checkpointer=checkpointer,
        )

    return agent


def _autogen_untrimmed() -> object:
    """``autogen_guarded``'s agent with AutoGen's default (unbounded) context."""
    from autogen_agentchat.agents import AssistantAgent

    search: Any = load_example("autogen_guarded", "search")
    send_email: Any = load_example("autogen_guarded", "send_email")

    def agent(model_client: Any) -> AssistantAgent:
        return AssistantAgent(
            "support",
            model_client=model_client,
            tools=[search, send_email],
            system_message="You are a support agent.",
            reflect_on_tool_use=True,
        )

    return agent


def _pydantic_first_and_last(guarded: bool) -> Callable[[], object]:
    """``pydantic_ai_guarded``'s agent trimming to the first 2 and the last 3
    messages, behind the guard or not."""
    from pydantic_ai import Agent, DeferredToolRequests
    from pydantic_ai.capabilities import ProcessHistory

    tools: Any = load_example("pydantic_ai_guarded", "TOOLS")
    behind: Any = load_example("pydantic_ai_guarded", "guarded_history")

    # annotated Any: pydantic-ai resolves a processor's annotations at run time
    def first_and_last(messages: list[Any]) -> list[Any]:
        return messages[:2] + messages[-3:] if len(messages) > 5 else messages

    async def plain(messages: list[Any]) -> list[Any]:
        return first_and_last(messages)

    def agent() -> object:
        processor = behind(300, first_and_last) if guarded else ProcessHistory(plain)
        return Agent("openai:gpt-5.2", instructions="You are a coding assistant.",
                     output_type=[str, DeferredToolRequests], tools=tools,
                     capabilities=[processor], defer_model_check=True)  # fmt: skip

    return agent


def _search(n: int) -> ToolCall:
    return ToolCall(f"call_{n}", "search", f'{{"query": "q{n}"}}')


@dataclass(frozen=True, slots=True)
class Case:
    """One framework's guarded example, its unguarded trimmer, its loop without a trim."""

    package: str
    adapter: str
    guarded: tuple[str, str]
    unguarded: Callable[[], object]
    untrimmed: Callable[[], object]
    call: Callable[[int], ToolCall]
    big: str
    batches_per_turn: int = 3


CASES = {
    "pydantic-ai": Case(
        "pydantic_ai",
        "prunecheck.sim.subjects.loops.frameworks.pydantic_ai:PydanticAIAdapter",
        ("pydantic_ai_guarded", "agent"),
        lambda: _pydantic_first_and_last(guarded=False),
        lambda: load_example("pydantic_ai_keep_last", "plain_agent"),
        call,
        "x" * 800,
    ),
    "openai-agents": Case(
        "agents",
        "prunecheck.sim.subjects.loops.frameworks.openai_agents:OpenAIAgentsAdapter",
        ("openai_agents_guarded", "app"),
        lambda: load_example("openai_agents_keep_last", "app"),
        lambda: load_example("openai_agents_keep_last", "agent"),
        call,
        "x" * 800,
    ),
    "langgraph": Case(
        "langchain.agents",
        "prunecheck.sim.subjects.loops.frameworks.langgraph:LangGraphAdapter",
        ("langgraph_guarded", "agent"),
        lambda: load_example("langgraph_trim", "agent"),
        _langgraph_untrimmed,
        _search,
        " lorem ipsum" * 40,
    ),
    "autogen": Case(
        "autogen_agentchat",
        "prunecheck.sim.subjects.loops.frameworks.autogen:AutoGenAdapter",
        ("autogen_guarded", "agent"),
        lambda: load_example("autogen_token_limited", "agent"),
        _autogen_untrimmed,
        _search,
        "x" * 300,
        batches_per_turn=1,  # one tool iteration, then the reflection on it
    ),
}


def _adapter(case: Case) -> Adapter:
    pytest.importorskip(case.package)
    module, _, name = case.adapter.partition(":")
    made = getattr(importlib.import_module(module), name)()
    assert isinstance(made, Adapter)
    return made


def _spec(example: tuple[str, str]) -> str:
    return f"loop:examples/loops/{example[0]}.py:{example[1]}"


def _kinds(run: Any) -> list[tuple[str, tuple[str, ...]]]:
    return [(i.kind.value, i.ids) for i in run.incidents]


def _pressure(case: Case) -> list[Step]:
    """Three parallel batches with large results, then one more turn: over
    every guard's budget (a turn holds ``batches_per_turn`` of them)."""
    c = case.call
    steps: list[Step] = []
    for k in range(3):
        if k % case.batches_per_turn == 0:
            steps += [ReplyStep("found")] if steps else []
            steps.append(User(f"look these up ({k + 1})"))
        first, second = c(2 * k + 1), c(2 * k + 2)
        steps += [ReplyStep("", (first, second)), Complete(second.id, case.big),
                  Complete(first.id, case.big)]  # fmt: skip
    steps += [ReplyStep("done"), User("and one more"), ReplyStep("", (c(9),))]
    return [*steps, Complete("call_9", case.big), ReplyStep("ok")]


def _violations(adapter: Adapter, target: object, steps: tuple[Step, ...]) -> set[object]:
    story = retell(adapter, target, steps)
    assert story.refused is None
    return {(i.kind.value, i.ids) for i in story.incidents if i.is_violation}


@pytest.mark.parametrize("framework", list(CASES))
def test_the_guard_trims_whole_units_and_breaks_no_request(framework: str) -> None:
    """Under pressure the guard removes whole, closed units (the ledger's
    trims) and every request is valid; the unguarded trimmer breaks on the
    same schedule."""
    case = CASES[framework]
    adapter = _adapter(case)
    steps = _pressure(case)
    with play(adapter, load_example(*case.guarded), steps) as run:
        assert _kinds(run) == []
        assert run.ledger.trims, "the guard never trimmed: the schedule exerts no pressure"
        assert roles(run)[-2:] == ["A(call_9)", "T(call_9)"]
    with play(adapter, case.unguarded(), steps) as run:
        assert {kind for kind, _ in _kinds(run)} & (PAIRING | {"synthesized_result"})


@pytest.mark.slow
@pytest.mark.parametrize("framework", list(CASES))
def test_the_guard_breaks_nothing_in_any_scenario_where_it_applies(framework: str) -> None:
    """The whole check: the trim class is safe (not vacuous); an unsafe cell's
    minimal reproduction needs a cancel, a crash, a tool failure or a timeout
    (the table marks it outside the trim), and breaks the same way when the
    loop does not trim at all; and the unguarded trimmer is unsafe at the
    trim hook."""
    case = CASES[framework]
    adapter = _adapter(case)
    target = load_target(_spec(case.guarded))
    check = check_loop(target, seed=1)  # check's defaults: the trim class grows to the budget
    cells = {c.scenario.name: c for c in check.cells}
    assert cells[ScenarioClass.TRIM].verdict is CellVerdict.SAFE, check.table()
    for cell in check.unsafe:
        assert cell.found is not None
        kinds = [step.kind for step in cell.found.steps]
        assert OUTSIDE_THE_TRIM & set(kinds), (cell.scenario.name, kinds)
        guarded = _violations(adapter, target.target, cell.found.steps)
        untrimmed = _violations(adapter, case.untrimmed(), cell.found.steps)
        assert guarded and guarded <= untrimmed, (cell.scenario.name, guarded, untrimmed)
    found = search(LoopSystem.of(adapter, case.unguarded(), SCENARIOS[ScenarioClass.TRIM]), seed=1,
                   max_examples=40).found  # fmt: skip
    assert found is not None and found.kinds & (PAIRING | {"synthesized_result"})


def test_a_trim_right_after_a_crash_is_a_trim_of_what_the_store_held() -> None:
    """AutoGen's saved state holds the batch; after the crash the new message
    puts the context over budget and the guard drops the batch in the first
    request: the unit the store held (witnessed on reopening), not a loss."""
    case = CASES["autogen"]
    adapter = _adapter(case)
    steps: list[Step] = [User("look"), ReplyStep("", (_search(1), _search(2))),
                         Complete("call_2", "x" * 400), Complete("call_1", "x" * 400),
                         ReplyStep("found"), Crash(), NewMessage("y" * 400)]  # fmt: skip
    with play(adapter, load_example(*case.guarded), steps) as run:
        assert roles(run) == ["S", "A", "U"]
        assert _kinds(run) == []
        assert run.ledger.trims == [(6, ("call_1", "call_2"))]
