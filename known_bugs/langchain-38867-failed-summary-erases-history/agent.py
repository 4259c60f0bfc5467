"""The agent of langchain-ai/langchain#38867, as its user configured it.

A support assistant built with ``create_agent`` that keeps long conversations
within its model's window with LangChain's ``SummarizationMiddleware``, set up
as LangChain's documentation shows it: past 4,000 tokens, everything but the
last 20 messages is replaced by a summary written by a model.  Here the summary
is written by the agent's own model, so a rate limit or a timeout of the
provider hits the summary call too.

``agent`` is the factory the app calls with its chat model and checkpointer
(``init_chat_model("openai:gpt-4.1")``, ``SqliteSaver``).
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.tools import tool


@tool
def lookup_ticket(ticket_id: str) -> str:
    """The status and history of a support ticket."""
    return f"Ticket {ticket_id}: open, waiting on the customer."


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The support assistant: ticket lookups, summarizes its history past 4,000 tokens."""
    return create_agent(
        model,
        tools=[lookup_ticket],
        system_prompt="You are a support assistant. Look tickets up before answering.",
        middleware=[
            SummarizationMiddleware(model=model, trigger=("tokens", 4000), keep=("messages", 20))
        ],
        checkpointer=checkpointer,
    )
