"""LangGraph's prebuilt ``create_react_agent`` with a token-budget pre-model hook: UNSAFE.

The older prebuilt API, still shipped and still in many apps: a
``pre_model_hook`` that sends the model (``llm_input_messages``) the newest
messages within 8,000 tokens, with ``trim_messages`` as LangGraph's "manage
message history" guide shows, but without the guide's ``start_on="human"``:
the kept window can start with a ``ToolMessage`` whose ``AIMessage`` fell
outside it, and OpenAI answers 400.  The checkpointer is the app's.  A user
expects prunecheck to drive this graph (no ``ModuleNotFoundError``, no
traceback), to reach 8,000 tokens and to catch it.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from typing import Any

from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


@tool
def query_inventory(sku: str) -> str:
    """Get the stock level of a product."""
    raise NotImplementedError("queries the warehouse")


@tool
def reorder(sku: str, quantity: int) -> str:
    """Place a reorder with the supplier."""
    raise NotImplementedError("calls the supplier API")


def pre_model_hook(state: dict[str, Any]) -> dict[str, Any]:
    trimmed_messages = trim_messages(
        state["messages"],
        strategy="last",
        token_counter=count_tokens_approximately,
        max_tokens=8000,
    )
    return {"llm_input_messages": trimmed_messages}


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The inventory agent on the app's chat model and checkpointer."""
    return create_react_agent(
        model,
        tools=[query_inventory, reorder],
        prompt="You manage the warehouse inventory.",
        pre_model_hook=pre_model_hook,
        checkpointer=checkpointer,
    )
