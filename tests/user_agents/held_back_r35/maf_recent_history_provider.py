"""Held back, round 35 (written last; prunecheck not changed for it): a
Microsoft Agent Framework agent on a history provider of the app's own that
loads only the most recent messages.

The app subclasses the framework's ``InMemoryHistoryProvider`` (the
documented way to customise conversation memory: a ``HistoryProvider``'s
``get_messages`` is what the agent loads into the context before each run)
and hands back only the last ``MAX_HISTORY_MESSAGES = 10`` stored messages.
The store keeps everything; the cut is on load, blind to tool calls: it can
start the loaded history with a ``tool`` message (a function result) whose
assistant ``tool_calls`` message was cut off, and OpenAI's Chat Completions
API (the framework's ``OpenAIChatCompletionClient``, model named by its
string) answers 400 "messages with role 'tool' must be a response to a
preceeding message with 'tool_calls'".  The cut shows only on a later run
of the same session: within one run the tool loop keeps its own messages.

Expected (before running): exit 1, the trimming class (or the class with a
second message on the session) **unsafe** with ``orphaned_result`` /
``provider_rejection`` (or ``invalid_prune``), once a session holds more than
10 messages with tool rounds in them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_framework import Agent, InMemoryHistoryProvider, Message, tool
from agent_framework.openai import OpenAIChatCompletionClient

MAX_HISTORY_MESSAGES = 10


class RecentHistoryProvider(InMemoryHistoryProvider):
    """Stores the whole conversation, loads only its newest messages."""

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        messages: Sequence[Message] = await super().get_messages(session_id, state=state, **kwargs)
        return list(messages[-MAX_HISTORY_MESSAGES:])


@tool
def get_order(order_id: str) -> str:
    """Read an order with its lines and shipping status."""
    raise NotImplementedError("calls the orders API")


@tool
def track_parcel(tracking_number: str) -> str:
    """Track a parcel with the carrier."""
    raise NotImplementedError("calls the carrier API")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1-mini"),
    name="order_desk",
    instructions="You help customers with their orders. Look the order up first.",
    tools=[get_order, track_parcel],
    context_providers=[RecentHistoryProvider()],
)

session = agent.create_session()


async def chat(text: str) -> str:
    """One message of the app's chat, on the app's one session."""
    return (await agent.run(text, session=session)).text
