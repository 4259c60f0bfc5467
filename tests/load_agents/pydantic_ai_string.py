"""pydantic-ai's docs' first line, as a user writes it: the model named by a
provider string, no ``defer_model_check``.  Without ``OPENAI_API_KEY`` the
import raises ``UserError`` unless prunecheck's placeholders are set."""

from pydantic_ai import Agent

agent = Agent("openai:gpt-4o", instructions="Answer with the weather.")


@agent.tool_plain
def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"
