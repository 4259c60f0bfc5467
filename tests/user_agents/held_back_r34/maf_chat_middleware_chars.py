"""Held back, round 34 (written last; prunecheck not changed for it): a
Microsoft Agent Framework assistant whose chat middleware trims the request
to a character budget.

Agent Framework's middleware docs show a ``@chat_middleware`` function that
reads and edits ``context.messages`` before ``call_next()`` sends them to the
chat client.  This one keeps the system messages and, walking back from the
newest, the messages that fit in ``MAX_REQUEST_CHARS = 30_000`` characters
(their serialized size), far above a default tool output.  It cuts wherever
the budget runs out: the oldest message kept can be a ``tool`` message whose
assistant ``function_call`` was cut, and OpenAI Chat Completions (the model,
``gpt-4.1``, is named by its string on the framework's OpenAI client) answers
400 "Invalid parameter: messages with role 'tool' must be a response to a
preceeding message with 'tool_calls'."

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), once
prunecheck makes the request pass 30,000 characters.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from agent_framework import Agent, ChatContext, Message, chat_middleware, tool
from agent_framework.openai import OpenAIChatCompletionClient

MAX_REQUEST_CHARS = 30_000


def _chars(message: Message) -> int:
    return len(json.dumps(message.to_dict(), default=str))


@chat_middleware
async def fit_request(context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
    """Send the system messages and the newest messages within MAX_REQUEST_CHARS."""
    system = [m for m in context.messages if m.role == "system"]
    budget = MAX_REQUEST_CHARS - sum(_chars(m) for m in system)
    kept: list[Message] = []
    for message in reversed([m for m in context.messages if m.role != "system"]):
        budget -= _chars(message)
        if budget < 0 and kept:
            break
        kept.insert(0, message)
    context.messages = [*system, *kept]
    await call_next()


@tool
def query_inventory(sku: str) -> str:
    """Get the stock levels of a product in every warehouse."""
    raise NotImplementedError("calls the inventory service")


@tool
def list_shipments(warehouse: str) -> str:
    """List the shipments leaving a warehouse today."""
    raise NotImplementedError("calls the logistics service")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You answer stock and shipping questions with the tools.",
    tools=[query_inventory, list_shipments],
    middleware=[fit_request],
)
