"""A pydantic-ai agent with a sync history processor and sync tools: SAFE.

The processor is a plain ``def`` (pydantic-ai runs it in a worker thread)
that keeps the history from the second-to-last user prompt on: it cuts only
just before a request carrying a user prompt, so no tool call is separated
from its result.  The tools are plain ``def`` too.  A user expects
prunecheck to run it as written: no hang, no ``FlakyStrategyDefinition``,
a process that exits, and a verdict on the processor.

Expected: a real verdict, no hang: **safe** (the processor fires: the
history reaches a third user prompt).
"""

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart


def keep_last_two_turns(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep the messages from the second-to-last user prompt on."""
    starts = [
        i
        for i, message in enumerate(messages)
        if isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
    ]
    if len(starts) <= 2:
        return messages
    return messages[starts[-2] :]


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a travel assistant.",
    capabilities=[ProcessHistory(keep_last_two_turns)],
    defer_model_check=True,
)


@agent.tool_plain
def search_flights(origin: str, destination: str, date: str) -> str:
    """Search flights between two airports on a date."""
    raise NotImplementedError("calls the flights API")


@agent.tool_plain
def search_hotels(city: str, check_in: str, nights: int) -> str:
    """Search hotels in a city."""
    raise NotImplementedError("calls the hotels API")
