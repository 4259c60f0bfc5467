"""Held back, round 37 (written last; prunecheck not changed for it): a
LangChain v1 agent whose ``@after_agent`` middleware removes tool results a
newer call of the same tool has superseded.

LangChain's middleware docs: ``@after_agent`` runs once per invocation,
after the agent's loop has finished (every tool call answered), and may
return a state update; ``RemoveMessage(id=...)`` removes a message from the
thread's ``messages``.  The app reads live data (a stock level, an order's
status), so "only the newest reading counts": its async
``drop_superseded_results`` keeps the newest ``ToolMessage`` of each tool
(by the tool name of the call it answers) and removes every older one,
which the checkpointer (``InMemorySaver``) stores.  It removes results
only: the ``AIMessage`` whose ``tool_calls`` they answered stays, so on the
user's next message the request holds an assistant message with
``tool_calls`` that no ``tool`` message answers, which OpenAI refuses ("An
assistant message with 'tool_calls' must be followed by tool messages
responding to each 'tool_call_id'").  The cut is at a closed boundary (the
invocation is over), but it splits whole units.  There is no budget: it
fires whenever a tool has been called twice in the thread.  The graph is
compiled at module level on ``ChatOpenAI(model="gpt-4.1-mini")``, which
raises at import without ``OPENAI_API_KEY`` (langchain-openai's client).

Expected (before running): exit 1, the trimming class (or the class with a
second user message on the thread) **unsafe** with ``unanswered_call`` /
``provider_rejection`` (or ``invalid_prune`` / ``silent_loss``), the
configuration's, seen on the next message after a turn that called one tool
twice.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import after_agent
from langchain.messages import AIMessage, RemoveMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime


@after_agent
async def drop_superseded_results(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
    """Keep only the newest result of each tool; older readings are stale."""
    tool_of_call: dict[str, str] = {}
    for message in state["messages"]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                tool_of_call[call["id"]] = call["name"]
    newest: dict[str, ToolMessage] = {}
    stale: list[ToolMessage] = []
    for message in state["messages"]:
        if isinstance(message, ToolMessage):
            tool = tool_of_call.get(message.tool_call_id, message.name or "")
            if tool in newest:
                stale.append(newest[tool])
            newest[tool] = message
    if not stale:
        return None
    return {"messages": [RemoveMessage(id=m.id) for m in stale if m.id]}


def get_stock_level(sku: str, warehouse: str) -> str:
    """Read the current stock level of a SKU in a warehouse."""
    return f"{sku} at {warehouse}: 42 units on hand, 7 reserved"


def get_order_status(order_id: str) -> str:
    """Read an order's current status and tracking events."""
    return f"order {order_id}: packed, awaiting carrier pickup"


agent = create_agent(
    model=ChatOpenAI(model="gpt-4.1-mini", temperature=0),
    tools=[get_stock_level, get_order_status],
    system_prompt="You answer questions about stock and orders. Always read live data.",
    middleware=[drop_superseded_results],
    checkpointer=InMemorySaver(),
)
