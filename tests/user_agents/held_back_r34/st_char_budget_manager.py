"""Held back, round 34 (written last; prunecheck not changed for it): a Strands
Agents assistant on a conversation manager of the app's own that keeps the
history under a character budget.

Strands' docs invite "build your own manager": a ``ConversationManager``
subclass with ``apply_management`` (run after each invocation) and
``reduce_context`` (run on a context-window overflow).  This one drops the
oldest message, one at a time, while ``agent.messages`` serialized is over
``MAX_HISTORY_CHARS = 24_000`` characters, far above a default tool output
(about 45 characters): only long outputs or many rounds reach it.  It does
not look at what it drops, so the first message kept can be the user turn
holding the ``toolResult`` blocks of an assistant ``toolUse`` it just dropped,
or an assistant message: Bedrock (Strands' default provider, named here by a
model id string) rejects both ("The number of toolResult blocks at
messages.0.content exceeds the number of toolUse blocks of previous turn." /
"A conversation must start with a user message.").

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``): prunecheck
has to grow tool outputs or turns until the history passes 24,000 characters.
"""

from __future__ import annotations

import json
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import ConversationManager

MAX_HISTORY_CHARS = 24_000


def _size(messages: list[Any]) -> int:
    return len(json.dumps(messages, default=str))


class CharBudgetManager(ConversationManager):
    """Keep the conversation under ``max_chars`` characters, oldest messages out first."""

    def __init__(self, max_chars: int = MAX_HISTORY_CHARS) -> None:
        super().__init__()
        self.max_chars = max_chars

    def apply_management(self, agent: Agent, **kwargs: Any) -> None:
        while len(agent.messages) > 1 and _size(agent.messages) > self.max_chars:
            agent.messages.pop(0)
            self.removed_message_count += 1

    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        # the model said the context is too long: drop the older half
        drop = max(1, len(agent.messages) // 2)
        del agent.messages[:drop]
        self.removed_message_count += drop


@tool
def fetch_invoice(invoice_id: str) -> str:
    """Fetch an invoice with its line items."""
    raise NotImplementedError("calls the billing API")


@tool
def list_payments(customer_id: str) -> str:
    """List the payments of a customer."""
    raise NotImplementedError("calls the billing API")


agent = Agent(
    model="us.anthropic.claude-sonnet-4-20250514-v1:0",
    system_prompt="You are a billing assistant. Look things up before answering.",
    tools=[fetch_invoice, list_payments],
    conversation_manager=CharBudgetManager(),
    callback_handler=None,
)
