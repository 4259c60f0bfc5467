"""A hand-built LangGraph ``StateGraph`` whose async model node trims by tokens: UNSAFE.

The ``assistant`` node sends the model
``trim_messages(state["messages"], max_tokens=HISTORY_TOKENS,
strategy="last", token_counter=count_tokens_approximately)`` with
``HISTORY_TOKENS = 5_000`` (a module constant) and no ``start_on``: the kept
tail can begin with a ``ToolMessage`` whose ``AIMessage`` was cut.  The
state itself keeps everything; only what the node sends is cut, which no
framework hook sees.

Expected: **unsafe** (``orphaned_result`` / ``provider_rejection``).
"""

from typing import Any

from langchain_core.messages import SystemMessage, trim_messages
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

HISTORY_TOKENS = 5_000


@tool
async def get_weather(city: str) -> str:
    """Get the weather forecast for a city."""
    raise NotImplementedError("calls the weather API")


@tool
async def get_events(city: str, date: str) -> str:
    """List events in a city on a date."""
    raise NotImplementedError("calls the events API")


def build_graph(model: Any) -> Any:
    """The trip planner's graph on the app's chat model."""
    llm = model.bind_tools([get_weather, get_events])

    async def assistant(state: MessagesState) -> dict[str, Any]:
        recent = trim_messages(
            state["messages"],
            max_tokens=HISTORY_TOKENS,
            strategy="last",
            token_counter=count_tokens_approximately,
        )
        prompt = SystemMessage("You plan trips.")
        return {"messages": [await llm.ainvoke([prompt, *recent])]}

    graph = StateGraph(MessagesState)
    graph.add_node("assistant", assistant)
    graph.add_node("tools", ToolNode([get_weather, get_events]))
    graph.add_edge(START, "assistant")
    graph.add_conditional_edges("assistant", tools_condition)
    graph.add_edge("tools", "assistant")
    return graph.compile()
