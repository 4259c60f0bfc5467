"""The agent of langchain-ai/langgraph#3126, as its user configured it.

A LangGraph ``create_react_agent`` with two tools: ``get_weather`` and
``human_assistance``, which pauses the graph with ``interrupt()`` until a
human answers; the conversation is kept in a checkpointer so the graph can
be resumed with ``Command(resume=...)``.  The model may call both tools at
once (parallel tool calling).

``agent`` is the factory the app calls with its chat model and checkpointer
(``ChatAnthropic(model="claude-3-5-sonnet-20240620")``, ``MemorySaver()``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from langgraph.types import interrupt

weather_lookups: list[str] = []  # what the weather service was asked (the tool's side effect)


@tool
def human_assistance(query: str) -> str:
    """Request assistance from a human."""
    human_response = interrupt({"query": query})
    return human_response["data"]


@tool
def get_weather(location: str) -> str:
    """Use this tool to get the weather."""
    weather_lookups.append(location)
    return "It's sunny!"


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The assistant: weather and a human to ask."""
    return create_react_agent(model, [get_weather, human_assistance], checkpointer=checkpointer)
