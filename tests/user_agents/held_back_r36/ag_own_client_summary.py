"""Held back, round 36 (written last; prunecheck not changed for it): an
AutoGen assistant whose model context summarizes old tool rounds with the
agent's own model client, and lets a failed summary fail the turn.

AutoGen's docs show custom model contexts (a ``get_messages`` override of
``UnboundedChatCompletionContext``).  This one is keyed on age: once the
context holds more than ``MAX_MESSAGES = 16`` messages, every tool round but
the newest ``KEEP_TOOL_ROUNDS = 3`` (a round starts at an assistant message
of function calls) is older than the model needs verbatim, and it asks **the
same** ``OpenAIChatCompletionClient`` the agent runs on (built once at
import, model named by its string, no key set) for a summary of everything
before the cut, sent as one user message ahead of the kept rounds.  The cut
is at an assistant's calls, so every call kept keeps its results and every
call summarized goes with its results.  The summary call is not guarded:
when the provider fails it (a 429, a 5xx, a timeout) the exception leaves
``get_messages`` and the agent's turn fails, after its tools ran.

Expected (before running): a verdict that **names the summarizer's
failure** (a fault injected in the summary call, like a tool failure, not
an ordinary turn that raised); no structural violation of the user's
configuration (whole rounds summarized), and no connection out (the
summary asks the scripted model, the agent's own client).
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    LLMMessage,
    SystemMessage,
    UserMessage,
)
from autogen_ext.models.openai import OpenAIChatCompletionClient

MAX_MESSAGES = 16
KEEP_TOOL_ROUNDS = 3

SUMMARY_PROMPT = (
    "Summarize the conversation below for the assistant that continues it. Keep every fact "
    "its tools returned, every decision and every open question."
)


class RollingSummaryContext(UnboundedChatCompletionContext):
    """The whole conversation, all but its newest tool rounds summarized."""

    def __init__(
        self, summarizer: ChatCompletionClient, initial_messages: list[LLMMessage] | None = None
    ) -> None:
        super().__init__(initial_messages)
        self._summarizer = summarizer

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        if len(messages) <= MAX_MESSAGES:
            return messages
        rounds = [
            i
            for i, m in enumerate(messages)
            if isinstance(m, AssistantMessage) and isinstance(m.content, list)
        ]
        if len(rounds) <= KEEP_TOOL_ROUNDS:
            return messages
        cut = rounds[-KEEP_TOOL_ROUNDS]
        transcript = "\n".join(f"{type(m).__name__}: {m.content}" for m in messages[:cut])
        result = await self._summarizer.create(
            [SystemMessage(content=SUMMARY_PROMPT), UserMessage(content=transcript, source="user")]
        )
        summary = UserMessage(
            content=f"Summary of the earlier conversation:\n{result.content}", source="summary"
        )
        return [summary, *messages[cut:]]


def get_shipment(tracking_id: str) -> str:
    """Read a shipment with every scan event."""
    raise NotImplementedError("calls the logistics API")


def list_exceptions(warehouse: str, days: int) -> str:
    """List the delivery exceptions of a warehouse over the last days."""
    raise NotImplementedError("calls the logistics API")


model_client = OpenAIChatCompletionClient(model="gpt-4.1")

agent = AssistantAgent(
    name="logistics_analyst",
    model_client=model_client,
    tools=[get_shipment, list_exceptions],
    system_message="You investigate late deliveries. Read the shipments before you conclude.",
    model_context=RollingSummaryContext(model_client),
    reflect_on_tool_use=False,
)
