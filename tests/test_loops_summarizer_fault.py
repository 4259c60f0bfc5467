"""A summarizer's model call is a fault the harness injects (issue 31).

``tests/user_agents/lc_summarizer_fails.py`` is LangChain's docs'
``SummarizationMiddleware`` on the agent's own model: once the history holds
10 messages, its summary request (a prompt offering no tools) asks the
harness.  That request is no history the agent sends (it is not judged as
one), and a ``model_error`` step fails it as a provider error would.
"""

from __future__ import annotations

import importlib

import pytest

from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass, enabled_kinds
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import (
    Advance,
    Complete,
    ModelError,
    ReplyStep,
    User,
    step_from_json,
    step_to_json,
)


@pytest.fixture(autouse=True)
def _needs_langchain() -> None:
    pytest.importorskip("langchain.agents.middleware")


def _until_the_summary(run: LoopRun) -> None:
    """Turns until the middleware's trigger (10 messages): its prompt waits."""
    n = 0
    while not run.side_request():
        n += 1
        run.apply(User(f"user {n}"))
        call = ToolCall(f"call_{n}", "search_kb", '{"query": "q"}')
        run.apply(ReplyStep("", (call,)))
        run.apply(Complete(call.id, f"result {n}"))
        if not run.side_request():
            run.apply(ReplyStep(f"answer {n}"))
        assert n < 10, "the summarizer never asked the model"


def test_a_summarizer_request_may_fail_and_is_not_the_agents_context() -> None:
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter

    agent = importlib.import_module("tests.user_agents.lc_summarizer_fails").agent
    with LoopRun(LangGraphAdapter(), agent) as run:
        _until_the_summary(run)
        timeout = SCENARIOS[ScenarioClass.TOOL_TIMEOUT]
        assert "model_error" in enabled_kinds(run, timeout, timeout.extra | {"user", "reply"})
        trim = SCENARIOS[ScenarioClass.TRIM]  # no clock to wait out the retry's backoff
        assert "model_error" not in enabled_kinds(run, trim, frozenset({"user", "reply"}))
        prompt = run.ledger.requests[-1].body
        assert not prompt.get("tools")  # the summary prompt: judged as no context
        assert not run.incidents, run.incidents
        for attempt in range(1, 4):  # LangChain's summarizer tries 3 times (with_retry)
            while run.has_timers() and not run.side_request():  # its backoff, virtual
                run.apply(Advance(1.0))
            run.apply(ModelError("503 Service Unavailable"))
            assert run.watch.faults == attempt
            if not run.turn_running:
                break
        assert not run.turn_running  # the failure raised out of the turn, as in production
        assert "ModelFailed: 503 Service Unavailable" in run.ledger.outcomes[-1][1]
        assert attempt == 3, "the summarizer's own retries"
        assert not run.side_request()
        assert not run.incidents, run.incidents


def test_a_model_error_step_round_trips_as_json() -> None:
    step = ModelError("429 Too Many Requests")
    assert step_from_json(step_to_json(step)) == step
    assert step_to_json(step) == {"kind": "model_error", "error": "429 Too Many Requests"}


def test_a_summarizer_prompt_offering_no_tools_is_answered_with_text_only() -> None:
    """A provider returns tool calls only for tools the request declares: the
    summary prompt (no tools) refuses a reply with calls, and the search draws
    text replies for it (a schedule no provider could produce is a false alarm)."""
    from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
    from prunecheck.sim.subjects.loops.scenarios import Bounds, make_step
    from prunecheck.sim.subjects.loops.scheduler import StepRefused

    agent = importlib.import_module("tests.user_agents.lc_summarizer_fails").agent
    with LoopRun(LangGraphAdapter(), agent) as run:
        _until_the_summary(run)
        assert not run.reply_takes_calls()
        call = ToolCall("call_99", "search_kb", '{"query": "q"}')
        with pytest.raises(StepRefused):
            run.apply(ReplyStep("", (call,)))
        scenario = SCENARIOS[ScenarioClass.PARALLEL]
        tools = LangGraphAdapter().tools(agent)
        for seed in range(20):  # a draw that would give calls gives text here

            def draw(n: int, s: int = seed) -> int:
                return (s * 7 + 1) % n

            step = make_step("reply", run, scenario, Bounds(16, 3, frozenset()), tools,
                             draw, [0, 100])  # fmt: skip
            assert isinstance(step, ReplyStep) and not step.calls
        run.apply(ReplyStep("the summary"))
        assert run.reply_takes_calls() or not run.pending_requests()
        assert not run.incidents, run.incidents
