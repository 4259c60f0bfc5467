"""The agent of langchain-ai/langchain#34282, as its user configured it.

A coding agent built with ``create_agent`` that reads many files at once
(parallel tool calls) and keeps its context small with LangChain's
``SummarizationMiddleware``: past a token threshold, everything but the last
6 messages is replaced by a summary (the report used ``create_deep_agent``,
whose summarization keeps 6 messages; here the threshold is 4,000 tokens, a
small model's window).  The summary is written by the agent's own model.

``agent`` is the factory the app calls with its chat model and checkpointer
(``init_chat_model("openai:gpt-4.1")``, ``SqliteSaver``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.tools import tool


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return Path(path).read_text()


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The coding agent: reads files, summarizes its history past 4,000 tokens."""
    return create_agent(
        model,
        tools=[read_file],
        system_prompt="You are a coding assistant.",
        middleware=[
            SummarizationMiddleware(model=model, trigger=("tokens", 4000), keep=("messages", 6))
        ],
        checkpointer=checkpointer,
    )
