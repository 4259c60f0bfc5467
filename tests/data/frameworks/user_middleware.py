"""A user's own langchain v1 middleware: before each model call, drop every
tool message older than the last two (with RemoveMessage), calls kept."""

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import RemoveMessage


class DropOldToolResults(AgentMiddleware):  # type: ignore[misc]
    def before_model(self, state, runtime):  # type: ignore[no-untyped-def]
        tools = [m for m in state["messages"] if m.type == "tool"]
        return {"messages": [RemoveMessage(id=m.id) for m in tools[:-2]]} if tools[2:] else None


middleware = DropOldToolResults()
