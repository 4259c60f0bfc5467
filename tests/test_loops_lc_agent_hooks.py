"""A LangChain middleware rewriting the thread at ``before_agent``, ``after_agent`` or
``after_model`` is the configuration's trimming.

Such a hook returns a state update (``RemoveMessage(id=...)``, new messages) that the
checkpointer stores; the next turn's request is built from it.  The adapter saw only
``before_model`` and ``wrap_model_call`` as trimming: an ``after_agent`` that removed the
tool results but kept the ``AIMessage`` calling them left the trimming class n/a, and the
plain agent of a module-level graph kept the hook, so the unanswered call it causes on the
next user message was called the framework's.  Now every such hook puts the class in play,
the plain agent is built (or, for a graph the module compiled, run) without it, and the
class's schedules reach the next user message after a call, its result and an answer.

The agents below are user-style apps written for these tests: one unsafe (results dropped,
calls kept), one safe (whole call-and-result exchanges dropped, which OpenAI accepts) and
one that never changes anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.api.loop_api import check_loop
from prunecheck.sim.api.loop_owner import Owner
from prunecheck.sim.api.loop_verdict import CellVerdict
from prunecheck.sim.subjects.loops.contract import Capability

#: A module-level graph on a provider string (LangChain's quick start) whose async
#: ``@after_agent`` clears the turn's tool results to keep the thread small, but leaves
#: the assistant messages that called them.
RESULTS_DROPPED = '''\
from langchain.agents import create_agent
from langchain.agents.middleware import after_agent
from langchain.messages import RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver


@after_agent
async def forget_tool_output(state, runtime):
    """Tool output is bulky and the answer already says what mattered: drop it."""
    stale = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.id]
    if not stale:
        return None
    return {"messages": [RemoveMessage(id=m.id) for m in stale]}


def look_up_invoice(invoice_id: str) -> str:
    """Read an invoice."""
    return f"invoice {invoice_id}: 120.00 EUR, paid"


agent = create_agent(
    "openai:gpt-4.1-mini",
    tools=[look_up_invoice],
    middleware=[forget_tool_output],
    checkpointer=InMemorySaver(),
)
'''

#: A factory whose middleware (a subclass, sync ``after_agent``) drops every finished
#: tool exchange: each assistant message with calls and the tool messages answering it.
EXCHANGES_DROPPED = '''\
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain.messages import AIMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver


class DropToolExchanges(AgentMiddleware):
    """Between turns only the conversation is kept: questions and answers."""

    def after_agent(self, state, runtime):
        removed = [m for m in state["messages"]
                   if m.id and (isinstance(m, ToolMessage)
                                or (isinstance(m, AIMessage) and m.tool_calls))]
        if not removed:
            return None
        return {"messages": [RemoveMessage(id=m.id) for m in removed]}


def read_ticket(ticket_id: str) -> str:
    """Read a support ticket."""
    return f"ticket {ticket_id}: open"


def agent(model):
    return create_agent(model, tools=[read_ticket], middleware=[DropToolExchanges()],
                        checkpointer=InMemorySaver())
'''

#: A factory whose middleware (a subclass, async ``abefore_agent``) only looks.
NOTHING_CHANGED = '''\
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langgraph.checkpoint.memory import InMemorySaver

SEEN = []


class CountTurns(AgentMiddleware):
    """Counts the turns; the thread is left as it is."""

    async def abefore_agent(self, state, runtime):
        SEEN.append(len(state["messages"]))
        return None


def read_ticket(ticket_id: str) -> str:
    """Read a support ticket."""
    return f"ticket {ticket_id}: open"


def agent(model):
    return create_agent(model, tools=[read_ticket], middleware=[CountTurns()],
                        checkpointer=InMemorySaver())
'''


@pytest.fixture(autouse=True)
def _needs_langchain() -> None:
    pytest.importorskip("langchain.agents.middleware")


def _spec(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return f"loop:{path}:agent"


def _trim_cell(spec: str, **options: Any) -> Any:
    result = check_loop(spec, seed=0, scenarios=["trim"], failures=False, **options)
    (cell,) = result.cells
    return cell


def test_an_after_agent_dropping_results_is_the_configurations_unanswered_call(
    tmp_path: Path,
) -> None:
    cell = _trim_cell(_spec(tmp_path, "lc_forget_tool_output", RESULTS_DROPPED))
    assert cell.verdict is CellVerdict.UNSAFE, cell.note
    mine = [f for f in cell.findings if f.owner is Owner.CONFIGURATION]
    assert mine and "unanswered_call" in mine[0].kinds, [(f.kinds, f.why) for f in cell.findings]
    steps = [s.kind for s in mine[0].outcome.steps]
    # a call, its result, an answer, then the next user message sends the call alone
    assert steps[0] == "user" and steps[-1] == "user" and "complete" in steps, steps
    assert steps.count("user") == 2, steps


def test_an_after_agent_dropping_whole_exchanges_is_safe_and_exercised(tmp_path: Path) -> None:
    cell = _trim_cell(_spec(tmp_path, "lc_drop_tool_exchanges", EXCHANGES_DROPPED))
    assert cell.verdict is CellVerdict.SAFE, cell.note
    assert cell.figures is not None and cell.figures.fired, cell.note


def test_a_before_agent_that_changes_nothing_is_checked_and_found_vacuous(
    tmp_path: Path,
) -> None:
    # fewer schedules: every rung of the ladder is climbed before it is called vacuous
    cell = _trim_cell(_spec(tmp_path, "lc_count_turns", NOTHING_CHANGED), max_examples=24)
    assert cell.verdict is CellVerdict.VACUOUS, cell.note  # not n/a: the hook is looked at
    assert cell.figures is not None and cell.figures.trims and not cell.figures.fired


#: A factory whose middleware overrides one hook (named by ``{hook}``), changing nothing.
HOOKED = """\
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ToolCallLimitMiddleware


def read_ticket(ticket_id: str) -> str:
    \"\"\"Read a support ticket.\"\"\"
    return ""


class Hooked(AgentMiddleware):
    {body}


def agent(model):
    return create_agent(model, tools=[read_ticket],
                        middleware=[Hooked(), ToolCallLimitMiddleware(run_limit=5)])
"""


@pytest.mark.parametrize(
    "hook",
    ["before_agent", "abefore_agent", "after_model", "aafter_model", "after_agent",
     "aafter_agent"],
)  # fmt: skip
def test_each_state_hook_is_a_trim_hook_and_left_off_the_plain_agent(
    tmp_path: Path, hook: str
) -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
    from prunecheck.sim.subjects.loops.scheduler import LoopRun
    from prunecheck.sim.subjects.loops.target import load_target

    asynchronous = hook.startswith(("abefore", "aafter"))
    body = f"{'async ' if asynchronous else ''}def {hook}(self, state, runtime): return None"
    target = load_target(_spec(tmp_path, f"lc_hooked_{hook}", HOOKED.format(body=body)))
    assert Capability.TRIM_HOOK in target.adapter.capabilities(target.target)
    # LangChain's own limit at after_model trims nothing: not the trimming, though the
    # plain agent is built without it as before
    trimming = [cls.__name__ for cls in LangGraphAdapter()._trimming(target.target)]
    assert trimming == ["Hooked"]
    node = "Hooked." + (hook[1:] if asynchronous else hook)
    for plain, present in ((False, True), (True, False)):
        with LoopRun(LangGraphAdapter(plain=plain), target.target) as run:
            run._open()
            graph = run.loop._graph  # type: ignore[union-attr]
            assert (node in graph.nodes) is present, (plain, list(graph.nodes))
