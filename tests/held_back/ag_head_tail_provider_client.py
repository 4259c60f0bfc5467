"""Held-back agent (issue 31): AutoGen, ``HeadAndTailChatCompletionContext``, client at import.

What the user wrote: an ``AssistantAgent`` on ``OpenAIChatCompletionClient(model=
"gpt-4o")`` (built at import, as in AutoGen's quick start; the client needs
``OPENAI_API_KEY`` to construct) whose model context keeps the first 2 and the last
6 messages (``HeadAndTailChatCompletionContext(head_size=2, tail_size=6)``), with sync
tools and up to 6 tool iterations per run.

Expected verdict (written before running): **safe** (whole-call drops the providers
accept), with figures showing the context cut.  Why: AutoGen's context drops a
head's trailing function-call message and a tail's leading function-result message, so
every call it keeps still has its results and every result its call; what it removes
are whole, closed call/result units the model has already seen, replaced by a
"Skipped N messages." user note.  A batch's results sit in one
``FunctionExecutionResultMessage``, so the newest results are always in the tail.
The cut fires only when the context holds more than 8 messages: with 6 tool
iterations it should be reached without growing outputs.
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import HeadAndTailChatCompletionContext
from autogen_ext.models.openai import OpenAIChatCompletionClient


def search_flights(origin: str, destination: str, date: str) -> str:
    """Search flights between two airports on a date."""
    return f"{origin}->{destination} on {date}: 2 flights"


def hold_seat(flight: str, passenger: str) -> str:
    """Hold a seat on a flight for a passenger."""
    return f"seat held on {flight} for {passenger}"


model_client = OpenAIChatCompletionClient(model="gpt-4o")

agent = AssistantAgent(
    name="booking_agent",
    model_client=model_client,
    tools=[search_flights, hold_seat],
    system_message="You book flights. Search before holding a seat.",
    model_context=HeadAndTailChatCompletionContext(head_size=2, tail_size=6),
    max_tool_iterations=6,
)
