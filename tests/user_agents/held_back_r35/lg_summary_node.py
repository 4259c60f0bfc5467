"""Held back, round 35 (written last; prunecheck not changed for it): a
hand-built LangGraph ``StateGraph`` with the docs' conversation-summary node,
whose summarizer call can fail.

LangGraph's "add summary of the conversation history" how-to, with tools
added as its "add tools" tutorial does: a ``conversation`` node calls the
model (``init_chat_model("openai:gpt-4.1")`` at module level, tools bound);
once the model answers without a tool call and the thread holds more than 6
messages, a ``summarize_conversation`` node asks a cheaper model
(``init_chat_model("openai:gpt-4.1-mini")``) to extend the running summary
and removes every message but the last two (``RemoveMessage`` for
``state["messages"][:-2]``, as the how-to writes it).  Every node is a plain
``def`` (sync), the thread kept by ``InMemorySaver``.

Two things a user of this graph would want to know:

- the summarizer's model call is not guarded: when it fails (a timeout, a
  429) the node raises and the user's turn fails, after the answer was
  already written to the thread;
- after a tool round the last two messages are the ``ToolMessage`` and the
  final answer: the ``AIMessage`` that made the call is removed, so the next
  turn sends OpenAI a ``tool`` message with no preceding ``tool_calls`` and
  it answers 400.

Expected (before running): a verdict that **names the summarizer's failure**
(a fault of the summarize node, not an ordinary turn), and exit 1 with the
configuration **unsafe** by ``orphaned_result`` / ``provider_rejection``
(the docs' ``[:-2]`` cut after a tool round, seen on the next turn).
"""

from __future__ import annotations

from typing import Any, Literal

from langchain.chat_models import init_chat_model
from langchain_core.messages import HumanMessage, RemoveMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode


@tool
def search_flights(origin: str, destination: str, date: str) -> str:
    """Search the flights between two airports on a date."""
    raise NotImplementedError("calls the flights API")


@tool
def get_booking(booking_ref: str) -> str:
    """Read a booking with its passengers and segments."""
    raise NotImplementedError("calls the booking system")


tools = [search_flights, get_booking]
model = init_chat_model("openai:gpt-4.1").bind_tools(tools)
summary_model = init_chat_model("openai:gpt-4.1-mini")


class State(MessagesState):
    summary: str


def call_model(state: State) -> dict[str, Any]:
    summary = state.get("summary", "")
    messages = state["messages"]
    if summary:
        messages = [SystemMessage(content=f"Summary of conversation earlier: {summary}"), *messages]
    return {"messages": [model.invoke(messages)]}


def route(state: State) -> Literal["tools", "summarize_conversation", "__end__"]:
    last = state["messages"][-1]
    if getattr(last, "tool_calls", None):
        return "tools"
    if len(state["messages"]) > 6:
        return "summarize_conversation"
    return END


def summarize_conversation(state: State) -> dict[str, Any]:
    summary = state.get("summary", "")
    if summary:
        prompt = (
            f"This is summary of the conversation to date: {summary}\n\n"
            "Extend the summary by taking into account the new messages above:"
        )
    else:
        prompt = "Create a summary of the conversation above:"
    response = summary_model.invoke([*state["messages"], HumanMessage(content=prompt)])
    delete_messages = [RemoveMessage(id=m.id) for m in state["messages"][:-2]]
    return {"summary": response.content, "messages": delete_messages}


builder = StateGraph(State)
builder.add_node("conversation", call_model)
builder.add_node("tools", ToolNode(tools))
builder.add_node("summarize_conversation", summarize_conversation)
builder.add_edge(START, "conversation")
builder.add_conditional_edges("conversation", route)
builder.add_edge("tools", "conversation")
builder.add_edge("summarize_conversation", END)

graph = builder.compile(checkpointer=InMemorySaver())
