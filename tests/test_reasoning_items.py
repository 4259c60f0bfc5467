"""A reasoning model's batch in the model runtime (issue 34): ``batch`` with
``reasoning`` puts the reasoning item in the batch's unit, before it; a
policy that evicts it alone cuts the unit (an invalid prune), and the
provider that wants it back answers with its own text: OpenAI Responses for
any later request, Anthropic while the tool turn runs, Chat Completions
never (its body carries no reasoning)."""

from __future__ import annotations

import pytest
from test_server_state import incidents, run

from prunecheck.model.actions import Evict
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
    event_from_json,
    event_to_json,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import Provider
from prunecheck.model.trace import Trace

EVENTS: tuple[Event, ...] = (
    SystemPrompt(50),
    UserMessage(40),
    Invoke(),
    IssueBatch((CallSpec("read_file", "a.py"),), 20, reasoning=60),
    ResultChunk("c1", 300),
    Invoke(),
)


def _evict_the_reasoning(view: ContextView, need: int) -> list[Evict]:
    return [Evict(m.id) for m in view.messages if m.thought]


def _run(provider: Provider, policy: object = None) -> list[tuple[IncidentKind, str, str]]:
    budget = 440 if policy else 5000  # the policy runs once the reasoning is in
    config = RuntimeConfig(budget=budget, hard_ceiling=6000, provider=provider)
    steps, state = run(Trace("mine" if policy else "recency", config, EVENTS), policy)
    if policy is None:
        batch = state.context["m4"]
        assert state.context["m3"].thought and batch.after_thought == "m3"
        assert state.context["m3"].unit_id == batch.unit_id == "m4"
    return [(i.kind, i.reason, i.text) for i in incidents(steps)]


@pytest.mark.parametrize("provider", [Provider.OPENAI_RESPONSES, Provider.ANTHROPIC])
def test_a_batch_with_its_reasoning_is_accepted(provider: Provider) -> None:
    assert _run(provider) == []


def test_the_responses_api_rejects_the_call_sent_without_its_reasoning_item() -> None:
    found = _run(Provider.OPENAI_RESPONSES, _evict_the_reasoning)
    assert IncidentKind.INVALID_PRUNE in [kind for kind, _, _ in found]  # the unit cut
    (text,) = [t for k, _, t in found if k is IncidentKind.PROVIDER_REJECTION]
    # the batch's words come first in its output (the runtime gives a batch a text)
    assert text == (
        "Item 'msg_m4' of type 'message' was provided without its required 'reasoning' "
        "item: 'rs_m3'."
    )


def test_anthropic_rejects_the_tool_turn_sent_without_its_thinking_block() -> None:
    found = _run(Provider.ANTHROPIC, _evict_the_reasoning)
    (rejection,) = [(r, t) for k, r, t in found if k is IncidentKind.PROVIDER_REJECTION]
    assert rejection[0] == "item_without_reasoning"
    assert rejection[1].startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."
    )


def test_chat_completions_carries_no_reasoning_only_the_cut_unit_is_reported() -> None:
    found = _run(Provider.OPENAI, _evict_the_reasoning)
    assert [k for k, _, _ in found] == [IncidentKind.INVALID_PRUNE]


def test_the_batch_event_keeps_its_reasoning_in_json_and_omits_none() -> None:
    event = EVENTS[3]
    assert event_to_json(event)["reasoning"] == 60
    assert event_from_json(event_to_json(event), "e") == event
    assert "reasoning" not in event_to_json(IssueBatch((CallSpec("read_file"),), 20))
