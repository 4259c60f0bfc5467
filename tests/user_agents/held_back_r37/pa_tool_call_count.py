"""Held back, round 37 (written last; prunecheck not changed for it): a
pydantic-ai agent whose ``Hooks`` capability caps the number of tool calls a
request carries.

pydantic-ai's hooks docs: ``Hooks`` registers plain functions
(``@hooks.on.<hook>``) on the agent's lifecycle, and
``prepare_model_request`` gets the ``ModelRequestContext`` of each attempt
just before it goes to the model ("modify the messages, the settings or the
tools").  The app's ``cap_tool_calls`` (a plain ``def``)
counts the ``ToolCallPart``s in ``request_context.messages`` and, while
there are more than ``MAX_TOOL_CALLS = 6``, drops the oldest message.  It
counts calls, not rounds: once the ``ModelResponse`` holding a batch of
calls is dropped the count is under the cap, so the loop stops with the
``ModelRequest`` of that batch's ``ToolReturnPart``s first in the request,
their calls gone.  The model is Anthropic's, named by its provider string
with ``defer_model_check=True`` (the module loads without
``ANTHROPIC_API_KEY``); Anthropic refuses a ``tool_result`` block whose
``tool_use`` is not in the previous assistant message ("unexpected
`tool_use_id` found in `tool_result` blocks").  Only the request is cut:
the run's history keeps every message.

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), the
configuration's, once a run has made more than 6 tool calls (two or three
batches; prunecheck need not grow outputs, only rounds); no hang from the
sync hook.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

MAX_TOOL_CALLS = 6

hooks = Hooks()


def _tool_calls(messages: list[ModelMessage]) -> int:
    return sum(
        1
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    )


@hooks.on.prepare_model_request
def cap_tool_calls(
    ctx: RunContext[None], request_context: ModelRequestContext
) -> ModelRequestContext:
    """Send the model at most MAX_TOOL_CALLS tool calls: drop the oldest messages."""
    messages = list(request_context.messages)
    while _tool_calls(messages) > MAX_TOOL_CALLS and len(messages) > 1:
        messages.pop(0)
    request_context.messages = messages
    return request_context


agent = Agent(
    "anthropic:claude-sonnet-4-5",
    defer_model_check=True,
    instructions="You are a travel booking assistant. Check availability before you book.",
    capabilities=[hooks],
)


@agent.tool_plain
def search_flights(origin: str, destination: str, date: str) -> str:
    """Search flights between two airports on a date (YYYY-MM-DD)."""
    return f"3 flights from {origin} to {destination} on {date}: LH 401, UA 960, LH 403"


@agent.tool_plain
def get_seat_map(flight_number: str, date: str) -> str:
    """Read the seat map of a flight on a date."""
    return f"{flight_number} on {date}: 14 seats free in economy, 2 in business"


@agent.tool_plain
def hold_seat(flight_number: str, date: str, seat: str) -> str:
    """Hold a seat on a flight for 20 minutes."""
    return f"seat {seat} on {flight_number} {date} held until 20 minutes from now"
