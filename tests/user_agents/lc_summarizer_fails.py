"""A LangChain v1 agent with the docs' summarization middleware, whose
summarization call can fail.

``SummarizationMiddleware`` (LangChain's short-term memory guide) asks the
model for a summary of the older messages once the history holds 10
messages, and keeps the last 4.  The summary is one more model call: in
production it fails like any other (rate limit, timeout, a 5xx).  A user
expects prunecheck to make that call fail in some schedules, as it fails a
tool, and to say what the agent's history looked like afterwards.

Expected: the summarizer's failure is a **fault prunecheck injects and
names** in the verdict (not an ordinary turn that happened to raise); the
middleware keeps AI/tool pairs together, so no structural violation of the
user's configuration.
"""

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.tools import tool


@tool
def search_kb(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("queries the knowledge base")


@tool
def create_ticket(title: str, body: str) -> str:
    """Open a support ticket."""
    raise NotImplementedError("calls the ticketing API")


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The support agent on the app's chat model and checkpointer."""
    return create_agent(
        model,
        tools=[search_kb, create_ticket],
        system_prompt="You are a support agent.",
        middleware=[
            SummarizationMiddleware(model=model, trigger=("messages", 10), keep=("messages", 4)),
        ],
        checkpointer=checkpointer,
    )
