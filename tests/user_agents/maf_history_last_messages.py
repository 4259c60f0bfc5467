"""A Microsoft Agent Framework agent on a history provider of the app's own that
loads only the newest messages of the session.

The app subclasses the framework's ``InMemoryHistoryProvider`` (a history
provider's ``get_messages`` is what the agent loads before each run) and
returns the last ``KEEP_MESSAGES = 4`` stored messages, blind to tool calls:
after a tool round the first loaded message can be the ``tool`` result whose
assistant ``function_call`` was cut off, which OpenAI's Chat Completions API
refuses.  The model is named by its string on the framework's Chat Completions
client (no key needed to build it).

Expected: the provider is the trim hook (the plain agent loads with the
framework's ``InMemoryHistoryProvider``), its budget 4 messages read from the
module constant; a second message after a tool round sends an orphaned result.
"""

from __future__ import annotations

from typing import Any

from agent_framework import Agent, InMemoryHistoryProvider, Message, tool
from agent_framework.openai import OpenAIChatCompletionClient

KEEP_MESSAGES = 4


class NewestMessages(InMemoryHistoryProvider):
    """Keeps the whole session, loads its newest KEEP_MESSAGES messages."""

    async def get_messages(self, session_id: str | None, **kwargs: Any) -> list[Message]:
        stored = await super().get_messages(session_id, **kwargs)
        return list(stored)[-KEEP_MESSAGES:]


@tool
def find_invoice(number: str) -> str:
    """Find an invoice by its number."""
    raise NotImplementedError("calls the billing API")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1-mini"),
    name="billing",
    instructions="You answer billing questions. Look the invoice up first.",
    tools=[find_invoice],
    context_providers=[NewestMessages()],
)
