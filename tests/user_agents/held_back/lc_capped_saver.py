"""Held back (issue 31, written last; prunecheck not changed for it): a
LangChain v1 agent on the app's own checkpointer subclass, which caps what
it stores.

``CappedSaver`` subclasses LangGraph's ``InMemorySaver``: on every ``put``
it keeps only the last ``KEEP`` (a module constant, 12) messages of the
checkpoint's ``messages`` channel, a write-time cap to bound memory, blind
to AI/tool pairs.  The app builds the agent with it (the factory ignores any
checkpointer it is handed: the app owns its persistence).

Expected: **unsafe** (``orphaned_result`` / ``provider_rejection``): the
next turn's history, read back from the capped checkpoint, can start with a
``ToolMessage`` whose call was cut.
"""

from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

KEEP = 12


class CappedSaver(InMemorySaver):
    """An in-memory checkpointer that stores at most KEEP messages per checkpoint."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        values = checkpoint.get("channel_values", {})
        if isinstance(values.get("messages"), list):
            values["messages"] = values["messages"][-KEEP:]
        return super().put(config, checkpoint, metadata, new_versions)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)


@tool
def get_invoice(invoice_id: str) -> str:
    """Get an invoice."""
    raise NotImplementedError("calls the billing API")


@tool
def send_reminder(invoice_id: str) -> str:
    """Email a payment reminder."""
    raise NotImplementedError("sends an email")


def agent(model: Any) -> Any:
    """The billing agent on the app's chat model and its own checkpointer."""
    return create_agent(
        model,
        tools=[get_invoice, send_reminder],
        system_prompt="You handle billing questions.",
        checkpointer=CappedSaver(),
    )
