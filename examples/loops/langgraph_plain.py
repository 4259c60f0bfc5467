"""A LangChain v1 agent as its quick start writes one: ``create_agent`` with
tools and no middleware — LangGraph's default loop.  ``agent`` keeps no
checkpoint (the app passes the conversation so far to each ``ainvoke``, as
the quick start does; no crash to resume from); ``persistent`` is the same
agent with the checkpointer the app passes (``SqliteSaver``: the thread
survives a restart).  Check them with::

    prunecheck check loop:examples/loops/langgraph_plain.py:agent
    prunecheck check loop:examples/loops/langgraph_plain.py:persistent

prunecheck calls each factory with its model double (and ``persistent`` with
its own SQLite checkpointer).
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool

__all__ = ["agent", "persistent"]


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent(model: Any) -> Any:
    """The support agent: search and email, no checkpointer."""
    return create_agent(model, tools=[search, send_email], system_prompt="You are a support agent.")


def persistent(model: Any, checkpointer: Any = None) -> Any:
    """The same agent on the app's checkpointer."""
    return create_agent(
        model,
        tools=[search, send_email],
        system_prompt="You are a support agent.",
        checkpointer=checkpointer,
    )
