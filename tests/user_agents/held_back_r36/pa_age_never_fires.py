"""Held back, round 36 (written last; prunecheck not changed for it): a
pydantic-ai agent whose sync history processor forgets tool rounds by their
age in time, a threshold no check reaches.

The agent runs on an ``OpenAIChatModel`` built with the provider client the
way pydantic-ai's docs show (``OpenAIProvider()``, which raises
``UserError`` at import without ``OPENAI_API_KEY``), tools are plain
``def`` (``tool_plain``), and the history processor (the ``ProcessHistory``
capability) is a plain ``def`` taking the ``RunContext``.  It removes tool
rounds, whole (a ``ModelResponse`` of tool calls with the ``ModelRequest`` of
exactly their returns), whose response is older than ``MAX_AGE_SECONDS =
21_600`` (six hours) by the response's own ``timestamp``: for a
conversation left open in a browser tab all day.  A check runs each
conversation in seconds, so no round is ever that old and the processor
hands back every history unchanged.

Expected (before running): exit 0, the trimming class **vacuous** (not
"safe"): the processor never changed the history, the note giving the
figures (its threshold of 21,600 seconds against the oldest round's age);
loaded without a key; no hang from the sync processor.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

MAX_AGE_SECONDS = 21_600


def _answers(message: ModelMessage, call_ids: set[str]) -> bool:
    if not isinstance(message, ModelRequest) or not message.parts:
        return False
    parts = message.parts
    if not all(isinstance(p, ToolReturnPart | RetryPromptPart) for p in parts):
        return False
    return {p.tool_call_id for p in parts} == call_ids  # type: ignore[union-attr]


def forget_stale_tool_rounds(
    ctx: RunContext[None], messages: list[ModelMessage]
) -> list[ModelMessage]:
    cutoff = datetime.now(UTC) - timedelta(seconds=MAX_AGE_SECONDS)
    kept: list[ModelMessage] = []
    skip_next = False
    for i, message in enumerate(messages):
        if skip_next:
            skip_next = False
            continue
        if isinstance(message, ModelResponse) and message.timestamp < cutoff:
            calls = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
            if calls and i + 1 < len(messages) - 1 and _answers(messages[i + 1], calls):
                skip_next = True
                continue
        kept.append(message)
    return kept


agent = Agent(
    OpenAIChatModel("gpt-4.1", provider=OpenAIProvider()),
    instructions="You are a bank's card support agent. Look the card up before you act.",
    capabilities=[ProcessHistory(forget_stale_tool_rounds)],
)


@agent.tool_plain
def get_card(card_id: str) -> str:
    """Read a card with its status and limits."""
    raise NotImplementedError("calls the card platform")


@agent.tool_plain
def list_transactions(card_id: str, days: int) -> str:
    """List a card's transactions over the last days."""
    raise NotImplementedError("calls the card platform")
