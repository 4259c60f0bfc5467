"""Held-back agent (issue 31): OpenAI Agents SDK, a ``SQLiteSession`` subclass, token budget.

What the user wrote: a session that keeps what is sent to the model under about 3,000
tokens (4 characters a token) by overriding ``get_items`` to drop the oldest stored
items until the rest fits; ``app()`` returns what the app hands ``Runner.run``:
``(agent, run_config, session)``.

Expected verdict (written before running): **unsafe, ``invalid_prune``**.  Why: the
session drops items one at a time, so it can drop a ``function_call`` item and keep its
``function_call_output`` (an output without its call), which the Responses API
rejects.  The budget (~12,000 characters) is far above the harness's default outputs,
so the harness must grow outputs, batch width or turns to reach it; the custom subclass
must be used, not replaced by a stock session.
"""

from __future__ import annotations

import json
from typing import Any

from agents import Agent, RunConfig, SQLiteSession, function_tool

TOKEN_BUDGET = 3_000


def _tokens(item: Any) -> int:
    return len(json.dumps(item, default=str)) // 4


class TokenBudgetSession(SQLiteSession):
    """SQLite-backed session that only returns the newest items that fit the budget."""

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = await super().get_items(limit)
        while len(items) > 1 and sum(_tokens(item) for item in items) > TOKEN_BUDGET:
            items.pop(0)
        return items


@function_tool
async def lookup_account(email: str) -> str:
    """Find a customer's account by email."""
    return f"account for {email}: plan=pro, status=active"


@function_tool
async def list_invoices(account_id: str) -> str:
    """List the invoices of an account."""
    return f"{account_id}: 3 invoices, all paid"


agent = Agent(
    name="billing",
    instructions="You answer billing questions. Look the account up first.",
    model="gpt-4.1",
    tools=[lookup_account, list_invoices],
)


def app() -> tuple[Agent[None], RunConfig, TokenBudgetSession]:
    """What the application passes to ``Runner.run``."""
    return agent, RunConfig(), TokenBudgetSession("billing-conversation")
