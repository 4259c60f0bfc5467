"""Held-back agent (issue 31): LangChain v1, summarization at 200k tokens (never fires), sync tools.

What the user wrote: the docs' ``SummarizationMiddleware`` with both models named by
provider strings, set to summarize only when the conversation nears a 200,000-token
context window (``trigger=("tokens", 200_000)``, ``keep=("messages", 20)``), and plain
sync tools.

Expected verdict (written before running): **vacuous**.  Why: nothing a test run does
comes near 200,000 tokens (about 800,000 characters), so the middleware never changes
the history and the agent's trimming is never exercised; the verdict should say so with
the figures ("the trimmer never fired in N schedules; largest history X tokens against
its trigger of 200,000").  If the harness did grow outputs that far, LangChain's safe
cut point keeps calls and results paired and a summary replaces whole turns, so the
verdict would be safe with figures; "safe" without figures is wrong either way.
Must load without ``OPENAI_API_KEY`` (two ``ChatOpenAI`` built at import).

The module builds its agent at import (``agent``, as the docs write it) through a
``build_agent(model)`` factory, the shape prunecheck's docs ask for.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool


@tool
def get_stock_price(ticker: str) -> str:
    """Get the latest price of a stock."""
    return f"{ticker}: 123.45 USD"


@tool
def get_news(ticker: str) -> str:
    """Get today's headlines about a company."""
    return f"No news for {ticker} today."


def build_agent(model: str | BaseChatModel = "openai:gpt-4o") -> Any:
    """The agent, on the model given (the app passes none: GPT-4o)."""
    return create_agent(
        model=model,
        tools=[get_stock_price, get_news],
        system_prompt="You are a financial research assistant.",
        middleware=[
            SummarizationMiddleware(
                model="openai:gpt-4o-mini",
                trigger=("tokens", 200_000),
                keep=("messages", 20),
            ),
        ],
    )


agent = build_agent()
