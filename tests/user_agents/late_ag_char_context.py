"""Held back (written last; prunecheck not changed for it): an AutoGen
assistant with a custom model context keeping 16,000 characters.

A subclass of ``UnboundedChatCompletionContext`` (the pattern of
autogen-core's own docs for custom contexts) whose ``get_messages`` keeps
the system message and the newest messages whose contents total under
16,000 characters.  It does not know that an ``AssistantMessage`` of
``FunctionCall``s and the ``FunctionExecutionResultMessage`` after it
belong together.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import LLMMessage, SystemMessage


class CharBudgetContext(UnboundedChatCompletionContext):
    """Keep the newest messages within ``max_chars`` characters."""

    def __init__(self, max_chars: int = 16_000) -> None:
        super().__init__()
        self.max_chars = max_chars

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        system = [m for m in messages if isinstance(m, SystemMessage)]
        kept: list[LLMMessage] = []
        total = 0
        for message in reversed(messages):
            if isinstance(message, SystemMessage):
                continue
            total += len(str(message.content))
            if total > self.max_chars:
                break
            kept.insert(0, message)
        return system + kept


async def fetch_url(url: str) -> str:
    """Fetch a web page."""
    raise NotImplementedError("fetches the page")


async def summarize_pdf(path: str) -> str:
    """Extract the text of a PDF."""
    raise NotImplementedError("reads the PDF")


def agent(model_client: Any) -> AssistantAgent:
    """The research assistant on the app's model client."""
    return AssistantAgent(
        name="researcher",
        model_client=model_client,
        tools=[fetch_url, summarize_pdf],
        system_message="You research topics and report.",
        model_context=CharBudgetContext(max_chars=16_000),
    )
