"""The agent of langchain-ai/langchain#34159, as its user configured it.

A research assistant built with ``create_agent`` whose tool use is capped by
``ToolCallLimitMiddleware`` (at most 2 tool calls per run) and which ends the
run (``exit_behavior="end"``) when the cap is reached.  The model may issue
several calls at once (parallel tool calling, the default of OpenAI's models).
The app keeps the conversation in a checkpointer, one ``thread_id`` per user.

``agent`` is the factory the app calls with its chat model and checkpointer
(``init_chat_model("openai:gpt-4.1")``, ``SqliteSaver``).
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ToolCallLimitMiddleware
from langchain_core.tools import tool


@tool
def search(query: str) -> str:
    """Search the web for a query."""
    return f"Results for {query}: ..."


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The research assistant: web search, at most 2 searches per run."""
    return create_agent(
        model,
        tools=[search],
        system_prompt="You are a research assistant.",
        middleware=[ToolCallLimitMiddleware(run_limit=2, exit_behavior="end")],
        checkpointer=checkpointer,
    )
