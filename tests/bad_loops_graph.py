"""A LangGraph ``StateGraph`` left uncompiled (the builder, not the graph ``compile``
returns), for the bad-input suite: no adapter takes it, and the refusal names what
it is without naming frameworks that have nothing to do with it."""

from __future__ import annotations

from langgraph.graph import END, START, MessagesState, StateGraph


def _echo(state: MessagesState) -> dict[str, list[object]]:
    return {"messages": []}


builder = StateGraph(MessagesState)
builder.add_node("echo", _echo)
builder.add_edge(START, "echo")
builder.add_edge("echo", END)
