"""Held-back agent (issue 31): pydantic-ai, a summarizing processor whose summarizer raises.

What the user wrote: the docs' idea of summarizing old messages with a cheaper model
(a second ``Agent("openai:gpt-4o-mini")``), made "robust": when the history has more
than 8 messages, everything but the last 4 is summarized; if the summarizer call raises
(rate limit, timeout, provider error), the processor logs it and falls back to keeping
the last 4 messages only.  Tools are sync.

Expected verdict (written before running): **unsafe, ``invalid_prune``** — found only
when the summarizer's model call is made to fail (a fault to inject, like a tool
failure).  Why: ``messages[-4:]`` starts wherever it falls, typically on a
``ModelRequest`` whose ``ToolReturnPart``\\ s answer calls in a ``ModelResponse`` that
was cut off (a result kept without its call).  When the summarizer succeeds the cut is
moved back so the kept tail never begins with tool returns, and the summary replaces
whole, closed turns: no loss.  So a harness that scripts the summarizer as an ordinary
reply and never makes it raise says "safe" here (the miss issue 31 describes).
"""

from __future__ import annotations

import logging

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart, UserPromptPart

log = logging.getLogger(__name__)

KEEP_LAST = 4
SUMMARIZE_OVER = 8

summarizer = Agent(
    "openai:gpt-4o-mini",
    instructions="Summarize this conversation. Keep every fact a tool returned.",
)


def _starts_with_tool_returns(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(
        isinstance(part, ToolReturnPart) for part in message.parts
    )


async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    if len(messages) <= SUMMARIZE_OVER:
        return messages
    cut = len(messages) - KEEP_LAST
    while cut > 1 and _starts_with_tool_returns(messages[cut]):
        cut -= 1
    transcript = "\n".join(repr(part) for m in messages[:cut] for part in m.parts)
    try:
        summary = await summarizer.run(f"Summarize this conversation:\n{transcript}")
    except Exception:  # the provider is down: keep going with the recent messages
        log.warning("summarizer failed; keeping the last %d messages", KEEP_LAST)
        return messages[-KEEP_LAST:]
    note = UserPromptPart(f"Summary of the earlier conversation: {summary.output}")
    return [ModelRequest(parts=[note]), *messages[cut:]]


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a travel agent. Check availability before you book.",
    capabilities=[ProcessHistory(summarize_old_messages)],
)


@agent.tool_plain
def check_flights(origin: str, destination: str) -> str:
    """Find flights between two airports."""
    return f"2 flights from {origin} to {destination} tomorrow"


@agent.tool_plain
def book_hotel(city: str, nights: int) -> str:
    """Book a hotel room."""
    return f"booked {nights} nights in {city}, confirmation H-1"
