"""An AutoGen assistant with a large message buffer: VACUOUS.

``BufferedChatCompletionContext(buffer_size=200)`` sends the model the last
200 messages: a buffer so large that a conversation reaches it only after
some seventy tool rounds.  In prunecheck's schedules the buffer never drops
a message, so its trimming (which would split a call from its result once
it fires) was never tested.  A user expects to be told so, with figures,
not "safe".

Expected: **vacuous** (never "safe"), with figures.
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import BufferedChatCompletionContext


async def get_calendar(day: str) -> str:
    """List the events of a day."""
    raise NotImplementedError("calls the calendar API")


async def book_meeting(day: str, time: str, title: str) -> str:
    """Book a meeting."""
    raise NotImplementedError("calls the calendar API")


def agent(model_client: Any) -> AssistantAgent:
    """The scheduling assistant on the app's model client."""
    return AssistantAgent(
        name="scheduler",
        model_client=model_client,
        tools=[get_calendar, book_meeting],
        system_message="You manage the user's calendar.",
        model_context=BufferedChatCompletionContext(buffer_size=200),
        reflect_on_tool_use=True,
    )
