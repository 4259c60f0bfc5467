"""Held back, round 34 (written last; prunecheck not changed for it): an
AutoGen assistant on a model context of the app's own that summarizes old
rounds with a second, cheaper model.

AutoGen's docs show custom model contexts (a ``get_messages`` override of
``UnboundedChatCompletionContext``).  Past ``MAX_MESSAGES = 14`` messages, this
one asks its own ``OpenAIChatCompletionClient(model="gpt-4.1-mini")`` for a
summary of everything before a user's message (the newest one that leaves at
least ``KEEP_RECENT = 6`` messages after it) and sends that summary as one
user message, then the rest as they are.  It cuts only at a user's message,
so the summarized part is whole rounds: every call it drops goes with its
results into the summary, and every call kept keeps its results.  Both
clients are built at import, with the model named by its string (no key set).

Expected (before running): exit 0, the trimming class **safe** and exercised
(the context summarized in some schedules): the summarizer is a model call,
which prunecheck answers as it answers the agent's own model, and a summary
of whole rounds is no broken pair and no invented tool result.
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import ChatCompletionClient, LLMMessage, SystemMessage, UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient

MAX_MESSAGES = 14
KEEP_RECENT = 6

SUMMARY_PROMPT = (
    "Summarize this conversation between a user and an assistant, keeping every fact the "
    "assistant learned from its tools."
)


class SummarizingContext(UnboundedChatCompletionContext):
    """The whole conversation, its older rounds summarized once it is long."""

    def __init__(
        self, summarizer: ChatCompletionClient, initial_messages: list[LLMMessage] | None = None
    ) -> None:
        super().__init__(initial_messages)
        self._summarizer = summarizer

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        if len(messages) <= MAX_MESSAGES:
            return messages
        starts = [
            i
            for i, m in enumerate(messages)
            if i > 0 and isinstance(m, UserMessage) and len(messages) - i >= KEEP_RECENT
        ]
        if not starts:
            return messages
        cut = starts[-1]
        transcript = "\n".join(f"{type(m).__name__}: {m.content}" for m in messages[:cut])
        result = await self._summarizer.create(
            [SystemMessage(content=SUMMARY_PROMPT), UserMessage(content=transcript, source="user")]
        )
        summary = UserMessage(
            content=f"Summary of the conversation so far:\n{result.content}", source="summary"
        )
        return [summary, *messages[cut:]]


async def get_stock_price(ticker: str) -> str:
    """Get the latest price of a stock."""
    raise NotImplementedError("calls the market data API")


async def get_company_news(ticker: str) -> str:
    """Get the latest news about a company."""
    raise NotImplementedError("calls the news API")


agent = AssistantAgent(
    name="analyst",
    model_client=OpenAIChatCompletionClient(model="gpt-4.1"),
    tools=[get_stock_price, get_company_news],
    system_message="You are a market analyst. Look up prices and news before answering.",
    model_context=SummarizingContext(OpenAIChatCompletionClient(model="gpt-4.1-mini")),
)
