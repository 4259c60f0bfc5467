"""A LangChain v1 middleware that clears old tool outputs: SAFE.

A ``@before_model`` middleware replaces the content of every
``ToolMessage`` but the newest 3 by an honest placeholder, ``[tool output
cleared to save context]``, under the same message id and
``tool_call_id``: each call keeps its result, and the model is told the
output was cleared.  It is the user's own version of LangChain's
``ContextEditingMiddleware`` with ``ClearToolUsesEdit``, which
``reports/frameworks.md`` calls safe.

Expected: **safe** (honest placeholder, no ``synthesized_result``).
"""

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.runtime import Runtime

PLACEHOLDER = "[tool output cleared to save context]"
KEEP = 3


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("queries the knowledge base")


@tool
def fetch_document(doc_id: str) -> str:
    """Fetch a document of the knowledge base."""
    raise NotImplementedError("reads the document")


@before_model
def clear_old_tool_outputs(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
    """Replace all but the newest KEEP tool outputs by a placeholder."""
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    cleared = [
        ToolMessage(content=PLACEHOLDER, tool_call_id=m.tool_call_id, name=m.name, id=m.id)
        for m in tool_messages[:-KEEP]
        if m.content != PLACEHOLDER
    ]
    return {"messages": cleared} if cleared else None


def agent(model: Any) -> Any:
    """The research assistant on the app's chat model."""
    return create_agent(
        model,
        tools=[search, fetch_document],
        system_prompt="You are a research assistant.",
        middleware=[clear_old_tool_outputs],
    )
