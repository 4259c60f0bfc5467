"""Held back, round 36 (written last; prunecheck not changed for it): a
LangChain v1 agent with two of LangChain's own context middlewares together,
a summarizer and a tool-output clearer, everything named by provider strings.

LangChain's short-term memory and context-engineering guides, combined as
an app does: ``create_agent("openai:gpt-4.1", ...)`` at module level (a
``ChatOpenAI`` built at import: no key set), with
``SummarizationMiddleware(model="openai:gpt-4.1-mini", trigger=("tokens",
40_000), keep=("messages", 20))`` (a second model, by its string, writes a
summary of the older messages into the state once the thread passes 40,000
tokens) and ``ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=
20_000, keep=3)])`` (once a request passes 20,000 tokens, every tool output
but the newest 3 is sent as ``[cleared]``).  Both thresholds are far above
small tool outputs.  Both keep pairs: the summarizer moves its cut so no
``ToolMessage`` is separated from its ``AIMessage``, and the clearer keeps
every ``ToolMessage`` with a placeholder that says the output was cleared.
The tools are plain ``def``.

Expected (before running): exit 0, the trimming class **safe** and exercised
(cleared or summarized in some schedules, once grown past 20,000 tokens);
``[cleared]`` is an honest placeholder, not ``synthesized_result``; the
summarizer answered offline (no connection out).
"""

from __future__ import annotations

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.tools import tool


@tool
def get_listing(listing_id: str) -> str:
    """Read a property listing with its full description and history."""
    raise NotImplementedError("calls the listings API")


@tool
def search_listings(city: str, max_price: int, bedrooms: int) -> str:
    """Search the property listings of a city."""
    raise NotImplementedError("calls the listings API")


agent = create_agent(
    "openai:gpt-4.1",
    tools=[get_listing, search_listings],
    system_prompt="You are a property search assistant. Read a listing before you describe it.",
    middleware=[
        SummarizationMiddleware(
            model="openai:gpt-4.1-mini",
            trigger=("tokens", 40_000),
            keep=("messages", 20),
        ),
        ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=20_000, keep=3)]),
    ],
)
