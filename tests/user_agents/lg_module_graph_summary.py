"""A hand-built LangGraph graph compiled at module level, its models built at module level.

The way LangGraph's tutorials write a chatbot with tools and memory: ``llm =
ChatOpenAI(model=...)`` and ``summarizer = ChatOpenAI(model=...)`` at module
level, async nodes, ``graph = builder.compile(checkpointer=MemorySaver())``.
After an answer, once the thread holds more than ``MAX_MESSAGES = 5``
messages, ``summarize`` asks ``summarizer`` for a summary (unguarded: when
that call fails, the turn fails) and removes every message but the newest
three: after one call those are the call, its result and the answer, but
after a batch of two calls they are the two results and the answer, whose
``tool_calls`` message was removed — OpenAI refuses that on the next turn.

Expected: the graph is driven as it is (its models pointed at the harness's
double); the summarizer's call is a side request that may fail; its removals
are the trim (the plain agent keeps every message).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, RemoveMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

MAX_MESSAGES = 5


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    raise NotImplementedError("calls the orders API")


llm = ChatOpenAI(model="gpt-4o-mini").bind_tools([lookup_order])
summarizer = ChatOpenAI(model="gpt-4o-mini")


class State(MessagesState):
    summary: str


async def chatbot(state: State) -> dict[str, Any]:
    return {"messages": [await llm.ainvoke(state["messages"])]}


def after_chatbot(state: State) -> str:
    if tools_condition(state) == "tools":
        return "tools"
    return "summarize" if len(state["messages"]) > MAX_MESSAGES else END


async def summarize(state: State) -> dict[str, Any]:
    prompt = HumanMessage(content="Summarize the conversation above in three lines.")
    summary = await summarizer.ainvoke([*state["messages"], prompt])
    removed = [RemoveMessage(id=m.id) for m in state["messages"][:-3]]
    return {"summary": summary.content, "messages": removed}


builder = StateGraph(State)
builder.add_node("chatbot", chatbot)
builder.add_node("tools", ToolNode([lookup_order]))
builder.add_node("summarize", summarize)
builder.add_edge(START, "chatbot")
builder.add_conditional_edges("chatbot", after_chatbot)
builder.add_edge("tools", "chatbot")
builder.add_edge("summarize", END)
graph = builder.compile(checkpointer=MemorySaver())
