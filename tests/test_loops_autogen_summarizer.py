"""An AutoGen model context that summarizes with a model client of its own (issue 31).

A user's ``ChatCompletionContext`` subclass may ask a model client for a summary
inside ``get_messages`` (the agent's own client, built at import with its model
named by its string, or a second one): the double answers it, and the request is
the user's own (an aside), not the agent's turn.  It is not judged as the agent's
context, and a ``model_error`` step fails it as a provider's error would, in every
class (nothing retries it after a backoff).  AutoGen's reflection on tool use, a
request of the agent's that offers no tools, stays the agent's own: judged, never
failed.
"""

from __future__ import annotations

from typing import Any

import pytest

from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass, enabled_kinds
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Complete, ModelError, ReplyStep, User


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("autogen_agentchat")
    pytest.importorskip("autogen_ext.models.openai")


def lookup(key: str) -> str:
    """Look a record up."""
    raise AssertionError("the user's tool body must never run")


def _summarizing_context(client: Any) -> Any:
    """Past 6 messages, everything before the newest tool round asked of ``client``
    as one summary (unguarded: a failed summary fails the turn)."""
    from autogen_core.model_context import UnboundedChatCompletionContext
    from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

    class Summarizing(UnboundedChatCompletionContext):
        def __init__(self, summarizer: Any) -> None:
            super().__init__()
            self.summarizer = summarizer

        async def get_messages(self) -> list[Any]:
            messages = await super().get_messages()
            rounds = [
                i
                for i, m in enumerate(messages)
                if isinstance(m, AssistantMessage) and isinstance(m.content, list)
            ]
            if len(messages) <= 6 or len(rounds) < 2:
                return messages
            cut = rounds[-1]
            text = "\n".join(str(m.content) for m in messages[:cut])
            done = await self.summarizer.create(
                [SystemMessage(content="Summarize."), UserMessage(content=text, source="user")]
            )
            return [UserMessage(content=str(done.content), source="summary"), *messages[cut:]]

    return Summarizing(client)


def _own_client_agent(*, second_client: bool = False) -> Any:
    """An agent built at import as users build it: the model named by its string,
    the summary asked of the agent's own client (or of a second one)."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(model="gpt-4.1", api_key="sk-placeholder")
    summarizer = (
        OpenAIChatCompletionClient(model="gpt-4.1-mini", api_key="sk-placeholder")
        if second_client
        else client
    )
    return AssistantAgent(
        "analyst",
        model_client=client,
        tools=[lookup],
        model_context=_summarizing_context(summarizer),
        reflect_on_tool_use=False,
    )


def _until_the_summary(run: LoopRun) -> int:
    """Tool rounds until the context asks for its summary (before a model call of
    the agent's); the round it asked in."""
    n = 0
    while True:
        n += 1
        assert n < 8, "the context never asked for a summary"
        run.apply(User(f"user {n}"))
        if run.side_request():
            return n
        call = ToolCall(f"call_{n}", "lookup", '{"key": "k"}')
        run.apply(ReplyStep("", (call,)))
        run.apply(Complete(call.id, f"record {n}"))  # the turn ends on its tool round
        assert not run.side_request() and not run.turn_running


@pytest.mark.parametrize("second_client", [False, True], ids=["own client", "second client"])
def test_a_context_summary_may_fail_in_every_class(second_client: bool) -> None:
    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter

    adapter = AutoGenAdapter()
    agent = _own_client_agent(second_client=second_client)
    with LoopRun(adapter, agent) as run:
        assert run.model_faults and run.untimed_faults
        _until_the_summary(run)
        prompt = run.ledger.requests[-1].body
        assert not prompt.get("tools") and "Summarize." in str(prompt["messages"])
        trim = SCENARIOS[ScenarioClass.TRIM]  # no clock: the fault needs none
        assert "model_error" in enabled_kinds(run, trim, frozenset({"user", "reply"}))
        run.apply(ModelError("429 Too Many Requests"))
        assert run.watch.faults == 1
        assert not run.turn_running  # the unguarded summary failed the turn, after its tools
        assert "ModelFailed: 429 Too Many Requests" in run.ledger.outcomes[-1][1]
        assert not run.side_request()
        assert not run.incidents, run.incidents


def test_an_answered_summary_is_not_judged_as_the_agents_context() -> None:
    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter

    with LoopRun(AutoGenAdapter(), _own_client_agent()) as run:
        n = _until_the_summary(run)
        judged = run.watch.requests
        run.apply(ReplyStep("the summary"))  # answered: the agent's request follows
        assert run.watch.requests == judged + 1  # the summary prompt was not seen as context
        sent = run.ledger.requests[-1].body
        assert sent.get("tools") and "the summary" in str(sent["messages"])
        assert run.pending_requests() and not run.side_request()
        run.apply(ReplyStep(f"answer {n}"))
        assert not run.turn_running and not run.incidents, run.incidents


def test_reflection_on_tool_use_stays_the_agents_own_request() -> None:
    """AutoGen's reflection offers no tools; it is the agent's turn, judged and never failed."""
    from autogen_agentchat.agents import AssistantAgent

    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter

    def agent(model_client: Any) -> Any:
        return AssistantAgent(
            "reflecting", model_client=model_client, tools=[lookup], reflect_on_tool_use=True
        )

    with LoopRun(AutoGenAdapter(), agent) as run:
        run.apply(User("look it up"))
        call = ToolCall("call_1", "lookup", '{"key": "k"}')
        run.apply(ReplyStep("", (call,)))
        run.apply(Complete(call.id, "record 1"))
        assert run.pending_requests()
        assert not run.ledger.requests[-1].body.get("tools")  # the reflection's request
        assert not run.side_request()
        assert run.watch.requests == 2  # judged as the agent's context
        run.apply(ReplyStep("done"))
        assert not run.turn_running and not run.incidents, run.incidents


def test_a_reproduction_fails_the_context_summary_as_the_provider_would() -> None:
    """The standalone script plays a ``model_error`` step on AutoGen alone: the oldest
    open model call (the context's own, asked without a cancellation token) raises."""
    import json

    from prunecheck.sim.subjects.loops.frameworks.autogen_repro import script_text

    steps = [{"kind": "user", "text": "hi"}, {"kind": "model_error", "error": "429 Too Many"}]
    text = script_text("agent.py:agent", json.dumps({"steps": steps, "expect": []}))
    compile(text, "repro.py", "exec")
    assert "set_exception(RuntimeError('429 Too Many'))" in text
    assert "cancellation_token=None" in text  # a summary asked without a token
    plain = script_text("agent.py:agent", json.dumps({"steps": steps[:1], "expect": []}))
    assert "cancellation_token=None" in plain  # without the step too: a summary may be asked


def test_a_framework_finding_after_an_answered_summary_is_still_the_frameworks() -> None:
    """The plain agent (no summarizing context) makes no summary request, so it cannot
    take a schedule that answers one; the owner replays it less those replies.  A
    cancel's hang after a summary is AutoGen's own (its plain agent hangs too): it
    was put down to the configuration, and a trimming class's search stopped there."""
    from prunecheck.sim.api.loop_owner import Owner, owner_of
    from prunecheck.sim.drivers.action_search import rerun
    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter
    from prunecheck.sim.subjects.loops.steps import Cancel, Step
    from prunecheck.sim.subjects.loops.system import LoopSystem
    from prunecheck.sim.subjects.loops.target import LoopTarget

    target = LoopTarget("loop:analyst", "analyst.py:agent", _own_client_agent(), AutoGenAdapter())
    steps: list[Step] = []
    for n in (1, 2):
        call = ToolCall(f"call_{n}", "lookup", '{"key": "k"}')
        steps += [User(f"user {n}"), ReplyStep("", (call,)), Complete(call.id, f"record {n}")]
    late = ToolCall("call_3", "lookup", '{"key": "k"}')
    steps += [User("user 3"), ReplyStep("the summary"), ReplyStep("", (late,)), Cancel()]
    scenario = SCENARIOS[ScenarioClass.CANCEL]
    found = rerun(LoopSystem(target, scenario, len(steps)), steps)
    assert found is not None and "hang" in found.kinds
    owner, why = owner_of(target, scenario, found, found.kinds)
    assert owner is Owner.FRAMEWORK, why
    assert "less its replies to the configuration's own model calls" in why
