"""Held back, round 34 (written last; prunecheck not changed for it): a
LangChain v1 agent whose ``@before_model`` middleware deletes the oldest
messages from the state while it is over a token budget.

LangGraph's "delete messages" recipe returns ``RemoveMessage(id=m.id)`` for the
messages to forget; this middleware does that, oldest first, while
``count_tokens_approximately`` of the state is over ``MAX_TOKENS = 9_000``
(about 36,000 characters, far above a default tool output), always keeping the
newest message.  It deletes from the checkpointed state, for good, one message
at a time, without looking at tool calls: it can delete an ``AIMessage`` with
``tool_calls`` and keep the ``ToolMessage`` s that answer it, and OpenAI (the
model is named by its string, ``create_agent("openai:gpt-4.1", ...)`` at module
level) answers 400 "Invalid parameter: messages with role 'tool' must be a
response to a preceeding message with 'tool_calls'."

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), once
prunecheck pushes the state past 9,000 tokens.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.messages import RemoveMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langgraph.runtime import Runtime

MAX_TOKENS = 9_000


@before_model
def forget_oldest(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
    """Delete the oldest messages while the conversation is over MAX_TOKENS."""
    messages = state["messages"]
    total = count_tokens_approximately(messages)
    if total <= MAX_TOKENS:
        return None
    removals = []
    for message in messages[:-1]:
        if total <= MAX_TOKENS:
            break
        total -= count_tokens_approximately([message])
        removals.append(RemoveMessage(id=message.id))
    return {"messages": removals}


@tool
def get_account(account_id: str) -> str:
    """Get a customer account with its plan and usage."""
    raise NotImplementedError("calls the accounts API")


@tool
def get_usage_report(account_id: str, month: str) -> str:
    """Get the detailed usage report of an account for a month."""
    raise NotImplementedError("calls the metering API")


agent = create_agent(
    "openai:gpt-4.1",
    tools=[get_account, get_usage_report],
    system_prompt="You answer questions about customer accounts and their usage.",
    middleware=[forget_oldest],
)
