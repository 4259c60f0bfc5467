"""A LangChain v1 agent trimming its history to a token budget: UNSAFE.

The ``@before_model`` middleware keeps the newest messages that fit in
8,000 tokens with LangChain's own ``trim_messages`` and
``count_tokens_approximately``, as its reference shows, but without
``start_on="human"``: once the history is over budget the kept tail can
start with a ``ToolMessage`` whose ``AIMessage`` (the tool call) was trimmed
away, and OpenAI answers 400.  A user expects prunecheck to push the history
past 8,000 tokens (the harness's default tool output is about 45 characters)
and catch it.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``, in the
trimming class.
"""

from typing import Any

from langchain.agents import AgentState, create_agent
from langchain.agents.middleware import before_model
from langchain_core.messages import RemoveMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime


@tool
def search_logs(service: str, query: str) -> str:
    """Search the logs of a service."""
    raise NotImplementedError("queries the log store")


@tool
def get_metrics(service: str) -> str:
    """Get the current metrics of a service."""
    raise NotImplementedError("queries the metrics store")


@before_model
def trim_to_budget(state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
    """Keep the newest messages within 8,000 tokens."""
    trimmed = trim_messages(
        state["messages"],
        strategy="last",
        token_counter=count_tokens_approximately,
        max_tokens=8000,
    )
    if len(trimmed) == len(state["messages"]):
        return None
    return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *trimmed]}


def agent(model: Any) -> Any:
    """The on-call assistant, built on the app's chat model."""
    return create_agent(
        model,
        tools=[search_logs, get_metrics],
        system_prompt="You are an on-call assistant. Investigate with the tools.",
        middleware=[trim_to_budget],
    )
