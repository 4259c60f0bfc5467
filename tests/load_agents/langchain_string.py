"""LangChain v1 as a user writes it: ``create_agent("openai:gpt-4o", ...)`` at
import (a ``ChatOpenAI`` is built then, and refuses without ``OPENAI_API_KEY``),
and the factory prunecheck checks, taking the model."""

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: sunny"


agent = create_agent("openai:gpt-4o", tools=[weather])


def build(model: str | BaseChatModel = "openai:gpt-4o") -> object:
    """The app's agent with ``model`` (prunecheck passes its scripted one)."""
    return create_agent(model, tools=[weather])
