"""Held-back agent (issue 31): LangChain v1, context editing to an honest placeholder.

What the user wrote: ``create_agent("openai:gpt-4o", ...)`` with the built-in
``ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=3000, keep=2,
placeholder="[output cleared to save context]")])``: once the conversation is over
3,000 tokens (LangChain's approximate counter), every tool output but the 2 most recent
is replaced by the placeholder in what the model is sent.

Expected verdict (written before running): **safe**, with figures showing the
clearing fired.  Why: the placeholder holds no piece of the output, says *cleared*
(true: the tool ran and returned) and speaks only of the call ("output", "context"),
so by the stated rule it is an honest placeholder, not ``synthesized_result``; the
calls and results stay paired.  3,000 tokens is far above the harness's default
outputs, so if the harness does not grow them the honest answer is **vacuous** (the
edit never fired), never a bare "safe".  Must load without ``OPENAI_API_KEY``.

The module builds its agent at import (``agent``, as the docs write it) through a
``build_agent(model)`` factory, the shape prunecheck's docs ask for.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import tool


@tool
def query_orders(customer_id: str) -> str:
    """Look up a customer's orders."""
    return f"customer {customer_id}: 2 open orders"


@tool
def refund_order(order_id: str) -> str:
    """Refund an order."""
    return f"refund issued for {order_id}"


def build_agent(model: str | BaseChatModel = "openai:gpt-4o") -> Any:
    """The agent, on the model given (the app passes none: GPT-4o)."""
    return create_agent(
        model,
        tools=[query_orders, refund_order],
        system_prompt="You are a support agent. Check orders before refunding.",
        middleware=[
            ContextEditingMiddleware(
                edits=[
                    ClearToolUsesEdit(
                        trigger=3_000,
                        keep=2,
                        placeholder="[output cleared to save context]",
                    )
                ]
            )
        ],
    )


agent = build_agent()
