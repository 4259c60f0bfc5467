"""Held back (issue 31, written last; prunecheck not changed for it): a
hand-built LangGraph ``StateGraph`` whose async model node trims the state's
messages itself.

The ``agent`` node calls ``trim_messages(strategy="last",
max_tokens=MAX_TOKENS, token_counter=count_tokens_approximately)`` on the
state's messages (``MAX_TOKENS = 3_000``, a module constant) and sends the
result to the model: no ``start_on``, so the kept tail may start with a
``ToolMessage`` whose ``AIMessage`` was cut.  The graph is the tutorial's
(``ToolNode``, ``tools_condition``), async, no checkpointer.

Expected: **unsafe** (``orphaned_result`` / ``provider_rejection``).
"""

from typing import Annotated, Any

from langchain_core.messages import trim_messages
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from typing_extensions import TypedDict

MAX_TOKENS = 3_000


class State(TypedDict):
    messages: Annotated[list, add_messages]


@tool
async def search_docs(query: str) -> str:
    """Search the product documentation."""
    raise NotImplementedError("queries the search index")


@tool
async def read_page(url: str) -> str:
    """Read a documentation page."""
    raise NotImplementedError("fetches the page")


tools = [search_docs, read_page]


def agent(model: Any) -> Any:
    """The docs assistant graph on the app's chat model."""
    llm = model.bind_tools(tools)

    async def call_model(state: State) -> dict[str, Any]:
        kept = trim_messages(
            state["messages"],
            strategy="last",
            max_tokens=MAX_TOKENS,
            token_counter=count_tokens_approximately,
        )
        return {"messages": [await llm.ainvoke(kept)]}

    builder = StateGraph(State)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile()
