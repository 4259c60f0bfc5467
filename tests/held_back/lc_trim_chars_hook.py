"""Held-back agent (issue 31): LangChain v1, ``trim_messages`` by characters, ``before_model``.

What the user wrote: ``create_agent("openai:gpt-4o", ...)`` with a ``@before_model``
middleware that, when the conversation is over 6,000 characters, rewrites the state
with ``RemoveMessage(REMOVE_ALL_MESSAGES)`` followed by
``trim_messages(strategy="last", start_on="human", end_on=("human", "tool"))`` — the
short-term-memory docs' recipe, with a character counter instead of the approximate
token counter.

Expected verdict (written before running): **unsafe, ``silent_loss``** (or
``invalid_prune``).  Why: ``start_on="human"`` keeps the window only from a human
message on.  Once the tool outputs of the *current* turn alone exceed 6,000 characters
(a wide batch of large outputs), no human message fits in the window, the trimmed list
loses the turn's ``AIMessage`` and its ``ToolMessage``\\ s (or comes back empty), and the
state is rewritten without them: results of tools that ran vanish before the model ever
saw them, with nothing saying so.  Reached only when the harness grows outputs/batch far
past its ~45-character defaults.  Must load without ``OPENAI_API_KEY``.

The module builds its agent at import (``agent``, as the docs write it) through a
``build_agent(model)`` factory, the shape prunecheck's docs ask for.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, RemoveMessage, trim_messages
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

MAX_CHARS = 6_000


def count_chars(messages: list[BaseMessage]) -> int:
    return sum(len(str(message.content)) for message in messages)


@before_model
def trim_to_char_budget(state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
    messages = state["messages"]
    if count_chars(messages) <= MAX_CHARS:
        return None
    kept = trim_messages(
        messages,
        strategy="last",
        token_counter=count_chars,
        max_tokens=MAX_CHARS,
        start_on="human",
        end_on=("human", "tool"),
    )
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}


@tool
def grep_repo(pattern: str) -> str:
    """Search the repository for a pattern."""
    return f"src/app.py:12: {pattern}"


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"# {path}\nprint('hello')"


def build_agent(model: str | BaseChatModel = "openai:gpt-4o") -> Any:
    """The agent, on the model given (the app passes none: GPT-4o)."""
    return create_agent(
        model,
        tools=[grep_repo, read_file],
        system_prompt="You are a coding assistant. Read the code before you answer.",
        middleware=[trim_to_char_budget],
    )


agent = build_agent()
