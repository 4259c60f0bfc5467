"""Held back, round 35 (written last; prunecheck not changed for it): a
pydantic-ai agent on a Gemini model named by its provider string, whose
history processor drops old tool rounds whole.

``Agent("google:gemini-2.5-flash", ...)`` builds the Google provider at
import (``UserError`` without ``GOOGLE_API_KEY``).  Its async history
processor (the ``ProcessHistory`` capability), once the history holds more
than ``MAX_MESSAGES = 16`` messages, removes the oldest tool rounds: a
``ModelResponse`` of ``ToolCallPart``s together with the ``ModelRequest``
right after it, when that request holds only the returns (or retry
prompts) of exactly those calls.  It never touches the first request
(instructions and the user's first prompt) nor the newest round.  Every
call left has its return, requests and responses still alternate: a
history Gemini accepts.  A call dropped went with its result;
the tools are read-only lookups.

Expected (before running): exit 0, the trimming class **safe** and exercised
(rounds dropped in some schedules), the module loaded without a key; no
``invalid_prune``, no ``orphaned_result``.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

MAX_MESSAGES = 16


def _answers(request: ModelMessage, call_ids: set[str]) -> bool:
    if not isinstance(request, ModelRequest) or not request.parts:
        return False
    if not all(isinstance(p, ToolReturnPart | RetryPromptPart) for p in request.parts):
        return False
    return {p.tool_call_id for p in request.parts} == call_ids  # type: ignore[union-attr]


async def drop_old_tool_rounds(messages: list[ModelMessage]) -> list[ModelMessage]:
    history = list(messages)
    i = 1
    while len(history) > MAX_MESSAGES and i < len(history) - 2:
        response = history[i]
        if isinstance(response, ModelResponse):
            calls = {p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart)}
            if calls and _answers(history[i + 1], calls):
                del history[i : i + 2]
                continue
        i += 1
    return history


agent = Agent(
    "google:gemini-2.5-flash",
    instructions="You are a shop assistant. Check stock and prices with the tools.",
    capabilities=[ProcessHistory(drop_old_tool_rounds)],
)


@agent.tool_plain
def check_stock(sku: str) -> str:
    """Check the stock of a product in every warehouse."""
    raise NotImplementedError("calls the inventory API")


@agent.tool_plain
def get_price(sku: str, currency: str) -> str:
    """Get the current price of a product."""
    raise NotImplementedError("calls the pricing API")
