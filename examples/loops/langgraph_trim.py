"""A LangChain v1 agent as the docs teach it, with the docs' trimming: UNSAFE.

``trim_messages`` below is the ``@before_model`` middleware of LangChain's
short-term memory guide ("Trim messages"): keep the first message and the
last three or four.  It counts messages, not tool units, so after a parallel
batch of two calls it can keep a tool result and drop the assistant message
that issued it — the provider answers 400.  Check it::

    prunecheck check loop:examples/loops/langgraph_trim.py:agent

``agent`` is the factory the app calls with its chat model and checkpointer
(``init_chat_model("openai:gpt-4.1")``, ``SqliteSaver``); prunecheck calls it
with its model double and its own SQLite checkpointer.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.messages import RemoveMessage
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


@before_model
def trim_messages(state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
    """Keep only the last few messages to fit the context window."""
    messages = state["messages"]
    if len(messages) <= 3:
        return None
    first_msg = messages[0]
    recent_messages = messages[-3:] if len(messages) % 2 == 0 else messages[-4:]
    new_messages = [first_msg, *recent_messages]
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *new_messages]}


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The support agent: search and email, trimmed before every model call."""
    return create_agent(
        model,
        tools=[search, send_email],
        system_prompt="You are a support agent.",
        middleware=[trim_messages],
        checkpointer=checkpointer,
    )
