"""A hand-built LangGraph ``StateGraph`` with sync nodes and a sync tool: UNSAFE.

The graph of LangGraph's tutorial ("add tools to a chatbot"): a ``chatbot``
node calling the chat model with tools bound, the prebuilt ``ToolNode`` and
``tools_condition``, every node and the tool a plain ``def`` (the app calls
``graph.invoke``).  To keep requests short, the node sends the model only
the last 6 messages of the state: a slice that can start with a
``ToolMessage`` whose ``AIMessage`` was sliced off, and OpenAI answers 400.
A user expects prunecheck to drive the graph as written (sync nodes: no
hang) and to exercise the slice.

Expected: a real verdict, no hang: **unsafe**, ``orphaned_result`` /
``provider_rejection``.
"""

from typing import Annotated, Any

from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list, add_messages]


@tool
def get_stock_price(symbol: str) -> str:
    """Get the latest price of a stock."""
    raise NotImplementedError("calls the market data API")


@tool
def get_news(symbol: str) -> str:
    """Get the latest news about a company."""
    raise NotImplementedError("calls the news API")


tools = [get_stock_price, get_news]


def agent(model: Any) -> Any:
    """The graph, built on the app's chat model."""
    llm_with_tools = model.bind_tools(tools)

    def chatbot(state: State) -> dict[str, Any]:
        return {"messages": [llm_with_tools.invoke(state["messages"][-6:])]}

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot)
    builder.add_node("tools", ToolNode(tools=tools))
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    builder.add_edge(START, "chatbot")
    builder.add_edge("chatbot", END)
    return builder.compile()
