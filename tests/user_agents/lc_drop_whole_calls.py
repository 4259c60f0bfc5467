"""A LangChain v1 middleware that drops old tool calls with their results: SAFE.

Once the history holds more than 12 messages, a ``@before_model``
middleware removes the oldest ``AIMessage`` with tool calls together with
every ``ToolMessage`` answering it (``RemoveMessage`` by id), but only when
all of its calls have their results.  What is left is a history every
provider accepts: no call without its result, no result without its call.
A user expects prunecheck to judge this by the provider's rules (the
provider accepts it), not to call it an invalid prune.

Expected: **safe** (whole calls dropped; no ``invalid_prune``, no
``orphaned_result``).
"""

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.messages import AIMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime

MAX_MESSAGES = 12


@tool
def get_customer(customer_id: str) -> str:
    """Fetch a customer record."""
    raise NotImplementedError("calls the CRM")


@tool
def list_orders(customer_id: str) -> str:
    """List a customer's orders."""
    raise NotImplementedError("calls the orders API")


@before_model
def drop_oldest_tool_call(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
    """Drop the oldest answered tool call (and its results) when the history is long."""
    messages = state["messages"]
    if len(messages) <= MAX_MESSAGES:
        return None
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            ids = [call["id"] for call in message.tool_calls]
            if all(i in results for i in ids):
                return {
                    "messages": [
                        RemoveMessage(id=message.id),
                        *(RemoveMessage(id=results[i].id) for i in ids),
                    ]
                }
    return None


def agent(model: Any) -> Any:
    """The CRM assistant on the app's chat model."""
    return create_agent(
        model,
        tools=[get_customer, list_orders],
        system_prompt="You are a CRM assistant.",
        middleware=[drop_oldest_tool_call],
    )
