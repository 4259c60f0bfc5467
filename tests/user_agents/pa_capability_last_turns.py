"""A pydantic-ai agent whose own capability keeps the request to the newest messages.

A user who read pydantic-ai's capabilities docs writes a small
``AbstractCapability`` of their own instead of a history processor: its
``before_model_request`` keeps the first request (the user's question) and the
newest ``KEEP_LAST_MESSAGES`` messages.  The cut lands anywhere: the oldest
message kept can be a request of tool returns whose calls were cut.  The
model is named by its string (no key needed to build it).

Expected: the capability is the trim hook (the trimming class is driven), its
budget a count of messages read from ``messages[-KEEP_LAST_MESSAGES:]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.models import ModelRequestContext

KEEP_LAST_MESSAGES = 6


@dataclass
class KeepLastTurns(AbstractCapability[Any]):
    """Send the first message and the newest KEEP_LAST_MESSAGES."""

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        messages = request_context.messages
        if len(messages) > KEEP_LAST_MESSAGES + 1:
            request_context.messages = [messages[0], *messages[-KEEP_LAST_MESSAGES:]]
        return request_context


agent = Agent(
    "openai:gpt-4.1",
    instructions="You help with the user's orders. Look things up with the tools.",
    capabilities=[KeepLastTurns()],
)


@agent.tool_plain
async def find_order(order_id: str) -> str:
    """Find an order by its id."""
    raise NotImplementedError("calls the order service")


@agent.tool_plain
async def track_parcel(tracking_number: str) -> str:
    """Track a parcel."""
    raise NotImplementedError("calls the carrier")
