"""An assistant that keeps only the latest message to save tokens, as in
pydantic-ai issue 2050 (the docs' history-processor example, installed as
pydantic-ai 2's ``ProcessHistory`` capability)."""

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage


async def keep_last_message(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep only the latest message."""
    return messages[-1:]


agent = Agent(
    "openai:gpt-4o-mini",
    instructions="Answer questions about the weather. Use the tools.",
    capabilities=[ProcessHistory(keep_last_message)],
    defer_model_check=True,
)


@agent.tool_plain
async def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"It is sunny in {city}."
