"""A user's own langchain v1 middleware: before each model call, drop every
tool message older than the last two (with RemoveMessage), calls kept."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import RemoveMessage
from langgraph.runtime import Runtime


class DropOldToolResults(AgentMiddleware):
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        tools = [m for m in state["messages"] if m.type == "tool"]
        old = [m.id for m in tools[:-2] if m.id is not None]  # state messages carry ids
        return {"messages": [RemoveMessage(id=i) for i in old]} if tools[2:] else None


middleware = DropOldToolResults()
