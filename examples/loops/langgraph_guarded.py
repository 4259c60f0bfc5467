"""The same LangChain v1 agent, trimmed behind the commit gate, emails approved.

``trim_messages`` (LangChain's own, blind to tool structure) runs inside
prunecheck's ``CommitGuardMiddleware``: only whole, closed units go, so the
model never sees a call without its result from trimming.  Sending an email
waits for a human (``HumanInTheLoopMiddleware``).  Check it::

    prunecheck check loop:examples/loops/langgraph_guarded.py:agent

What a trimming guard cannot prevent is said by the table: a cancelled or
crashed batch leaves calls without results in the checkpoint, and LangGraph
sends them on the next message.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import trim_messages
from langchain_core.tools import tool

from prunecheck.guard.langchain import CommitGuardMiddleware


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The support agent: search and email (approved first), trimmed safely."""
    return create_agent(
        model,
        tools=[search, send_email],
        system_prompt="You are a support agent.",
        middleware=[
            CommitGuardMiddleware(
                trim_messages, budget=300, store=":memory:", conversation="support"
            ),
            HumanInTheLoopMiddleware(interrupt_on={"send_email": True}),
        ],
        checkpointer=checkpointer,
    )
