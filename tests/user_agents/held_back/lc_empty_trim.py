"""Held back (issue 31, written last; prunecheck not changed for it): a
LangChain v1 agent whose ``@before_model`` hook starts over when the
conversation gets long, removing every message.

Once the thread holds more than ``MAX_MESSAGES`` (a module constant, 24)
messages, the hook removes them all (``RemoveMessage(REMOVE_ALL_MESSAGES)``)
to "reset the context": the model is then asked with the system prompt
alone, every result the tools returned gone and nothing saying so.

Expected: the trimming class **unsafe** (the emptied request: no user
message, executed calls vanished).
"""

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentState, before_model
from langchain_core.messages import RemoveMessage
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES

MAX_MESSAGES = 24


@before_model
def reset_when_long(state: AgentState, runtime: Any) -> dict[str, Any] | None:
    if len(state["messages"]) <= MAX_MESSAGES:
        return None
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}


@tool
def lookup_customer(email: str) -> str:
    """Look a customer up by email."""
    raise NotImplementedError("calls the CRM")


@tool
def refund_order(order_id: str, amount: float) -> str:
    """Refund an order."""
    raise NotImplementedError("calls the payments API")


def agent(model: Any) -> Any:
    """The support agent on the app's chat model."""
    return create_agent(
        model,
        tools=[lookup_customer, refund_order],
        system_prompt="You are a customer support agent.",
        middleware=[reset_when_long],
    )
