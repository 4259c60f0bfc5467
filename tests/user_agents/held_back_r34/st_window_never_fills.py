"""Held back, round 34 (written last; prunecheck not changed for it): a Strands
Agents assistant whose sliding window is far larger than any session it has.

``SlidingWindowConversationManager(window_size=500)``: the app wanted "a
window, just in case", and sized it for the model's context.  It acts only
once ``agent.messages`` holds more than 500 messages; a session of a few
turns of a few tool rounds each (what a check runs) stays far below that, so
the window never moves.  Whether it would be safe once it moves is not what
this agent asks: it asks that a trimmer that never ran is not called safe.

Expected (before running): exit 0, the trimming class **vacuous**, its note
giving the figures (the window never fired; the largest history against the
window of 500 messages).
"""

from __future__ import annotations

from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager


@tool
def get_order(order_id: str) -> str:
    """Get an order and its shipping status."""
    raise NotImplementedError("calls the orders API")


@tool
def refund_order(order_id: str, reason: str) -> str:
    """Refund an order."""
    raise NotImplementedError("calls the payments API")


agent = Agent(
    model="us.amazon.nova-pro-v1:0",
    system_prompt="You help customers with their orders.",
    tools=[get_order, refund_order],
    conversation_manager=SlidingWindowConversationManager(window_size=500),
    callback_handler=None,
)
