"""Held-back agent (issue 31): a hand-built ``StateGraph``, SYNC node trimming by tokens.

What the user wrote: the LangGraph quick-start graph (a ``call_model`` node, a
``ToolNode``, ``tools_condition``) with a plain ``def`` node calling
``model.invoke``; before the call the node checks the history with LangChain's
``count_tokens_approximately`` and, above 4,000 tokens, sends only the last 8
messages (the state itself is not changed).  The model is
``init_chat_model("openai:gpt-4o")`` built at import.

Expected verdict (written before running): **unsafe, ``invalid_prune``**.  Why:
``messages[-8:]`` is a plain count: it can begin with ``ToolMessage``\\ s whose
``AIMessage`` (the calls) was cut off, a history providers reject.  Reached only when
the history passes 4,000 tokens (~16,000 characters), far above the harness's default
outputs.  The sync node must run (on a thread) without a hang, and "safe" with nothing
exercised (issue 31's report of a sync-node graph) would be a miss.

The module builds its graph at import (``graph``) through a ``build_graph(model)``
factory, the shape prunecheck's docs ask for.
"""

from __future__ import annotations

from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

TOKEN_BUDGET = 4_000
KEEP_LAST = 8


@tool
def get_ticket(ticket_id: str) -> str:
    """Fetch a support ticket."""
    return f"ticket {ticket_id}: printer offline"


@tool
def close_ticket(ticket_id: str, resolution: str) -> str:
    """Close a support ticket with a resolution."""
    return f"ticket {ticket_id} closed: {resolution}"


tools = [get_ticket, close_ticket]
SYSTEM = SystemMessage("You are an IT helpdesk agent. Read the ticket before closing it.")


def build_graph(model: BaseChatModel | None = None) -> Any:
    """The compiled graph, on the model given (the app passes none: GPT-4o)."""
    llm = (model or init_chat_model("openai:gpt-4o")).bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        messages = state["messages"]
        if count_tokens_approximately(messages) > TOKEN_BUDGET:
            messages = messages[-KEEP_LAST:]
        response = llm.invoke([SYSTEM, *messages])
        return {"messages": [response]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", tools_condition)
    builder.add_edge("tools", "call_model")
    return builder.compile()


graph = build_graph()
