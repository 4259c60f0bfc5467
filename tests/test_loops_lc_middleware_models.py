"""A LangChain middleware's own model, named by a provider string, runs on the double (issue 31).

``SummarizationMiddleware(model="openai:gpt-4o-mini", ...)`` builds its own
``ChatOpenAI`` (``init_chat_model``), apart from the agent's model: left as
built, its summary request went to the provider (refused offline) and was never
counted as the summarizer's call.  Each open points every chat model a
middleware on the graph holds (and the summarizer's ``with_retry`` binding over
it) at the harness's double: the summary prompt asks the harness aside, where
the schedule answers it or fails it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.steps import Complete, ModelError, ReplyStep, User

AGENT = '''\
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain.chat_models import init_chat_model
from langchain_core.tools import tool


@tool
def read_order(order_id: str) -> str:
    """Read an order."""
    raise NotImplementedError


class Auditor(AgentMiddleware):
    """A middleware of the user's own holding models it built (never called here)."""

    def __init__(self) -> None:
        super().__init__()
        self.judge = init_chat_model("openai:gpt-4.1-nano")
        self.panel = [init_chat_model("openai:gpt-4.1-nano"), "not a model"]

    async def aafter_agent(self, state, runtime):
        return None


agent = create_agent(
    "openai:gpt-4o",
    tools=[read_order],
    middleware=[
        SummarizationMiddleware(model="openai:gpt-4o-mini", trigger=("messages", 8),
                                keep=("messages", 4)),
        Auditor(),
    ],
)
'''


@pytest.fixture(autouse=True)
def _needs_langchain() -> None:
    pytest.importorskip("langchain.agents.middleware")


def _target(tmp_path: Path) -> Any:
    from prunecheck.sim.subjects.loops.target import load_target

    path = tmp_path / "lc_own_summary_model.py"
    path.write_text(AGENT, encoding="utf-8")
    return load_target(f"loop:{path}:agent")


def _until_the_summary(run: Any) -> None:
    n = 0
    while not run.side_request():
        n += 1
        assert n < 10, "the summarizer never asked the harness"
        run.apply(User(f"user {n}"))
        if run.side_request():
            return
        call = ToolCall(f"call_{n}", "read_order", '{"order_id": "o"}')
        run.apply(ReplyStep("", (call,)))
        run.apply(Complete(call.id, f"order {n}"))
        if not run.side_request():
            run.apply(ReplyStep(f"answer {n}"))


def test_every_model_a_middleware_holds_is_pointed_at_the_double(tmp_path: Path) -> None:
    from langchain_core.runnables.base import RunnableBindingBase

    from prunecheck.sim.subjects.loops.frameworks.langgraph import (
        _middleware_of,
        point_middleware_models,
    )
    from prunecheck.sim.subjects.loops.frameworks.lc_doubles import HarnessChatModel

    graph = _target(tmp_path).target
    found = {type(m).__name__: m for m in _middleware_of(graph)}
    summary, auditor = found["SummarizationMiddleware"], found["Auditor"]
    profile = summary.model.profile
    double = HarnessChatModel()
    assert point_middleware_models([summary, auditor], double) >= 5
    assert isinstance(summary.model, HarnessChatModel) and summary.model.profile == profile
    assert isinstance(summary._summary_chat_model, HarnessChatModel)
    retry = summary._summary_model
    assert isinstance(retry, RunnableBindingBase) and isinstance(retry.bound, HarnessChatModel)
    assert isinstance(auditor.judge, HarnessChatModel)  # the user's own middleware's model
    assert isinstance(auditor.panel[0], HarnessChatModel) and auditor.panel[1] == "not a model"
    assert point_middleware_models([summary, auditor], double) == 0  # pointed already


def test_a_summarizer_on_its_own_provider_string_asks_the_harness(tmp_path: Path) -> None:
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass, enabled_kinds
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    target = _target(tmp_path)
    with LoopRun(target.adapter, target.target) as run:
        _until_the_summary(run)  # no connection: the summary prompt waits on the harness
        prompt = run.ledger.requests[-1].body
        assert not prompt.get("tools")
        timeout = SCENARIOS[ScenarioClass.TOOL_TIMEOUT]  # the summarizer's retries wait
        assert "model_error" in enabled_kinds(run, timeout, timeout.extra | {"user", "reply"})
        run.apply(ReplyStep("the summary so far"))
        assert not run.side_request() and run.pending_requests()
        sent = run.ledger.requests[-1].body
        assert sent.get("tools") and "the summary so far" in str(sent["messages"])
        assert not run.incidents, run.incidents


def test_its_summary_fails_as_the_providers_error_would(tmp_path: Path) -> None:
    from prunecheck.sim.subjects.loops.scheduler import LoopRun
    from prunecheck.sim.subjects.loops.steps import Advance

    target = _target(tmp_path)
    with LoopRun(target.adapter, target.target) as run:
        _until_the_summary(run)
        for _ in range(3):  # LangChain's summarizer tries 3 times (with_retry)
            while run.has_timers() and not run.side_request():  # its backoff, virtual
                run.apply(Advance(1.0))
            if not run.side_request():
                break
            run.apply(ModelError("503 Service Unavailable"))
        assert run.watch.faults >= 1
        assert not run.turn_running
        assert "ModelFailed: 503 Service Unavailable" in run.ledger.outcomes[-1][1]
