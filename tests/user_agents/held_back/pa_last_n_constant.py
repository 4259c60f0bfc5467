"""Held back (issue 31, written last; prunecheck not changed for it): a
pydantic-ai history processor keeping the last ``KEEP_MESSAGES`` messages
(a module constant, 8), the docs' ``keep_recent_messages`` written inline.

The slice can start with a ``ModelRequest`` of tool returns whose calls
were in the ``ModelResponse`` cut before it.  Alone that history is broken;
inside pydantic-ai's own loop the history is repaired before it is sent
(reports/frameworks.md and reports/loops.md say so and cross-reference).

Expected: the trimming class **safe** inside pydantic-ai's loop (exercised:
the processor changed the history), exit 0.
"""

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage

KEEP_MESSAGES = 8


async def keep_recent(messages: list[ModelMessage]) -> list[ModelMessage]:
    return messages[-KEEP_MESSAGES:] if len(messages) > KEEP_MESSAGES else messages


agent = Agent(
    "openai:gpt-4o",
    instructions="You manage the user's calendar.",
    capabilities=[ProcessHistory(keep_recent)],
)


@agent.tool_plain
async def list_events(day: str) -> str:
    """List a day's events."""
    raise NotImplementedError("calls the calendar API")


@agent.tool_plain
async def create_event(day: str, title: str) -> str:
    """Create an event."""
    raise NotImplementedError("calls the calendar API")
