"""Held back, round 35 (written last; prunecheck not changed for it): a Strands
agent whose own sync hook keeps each model request under a token budget.

Strands' hooks docs show a ``HookProvider`` registering callbacks on the
agent's events; ``BeforeModelCallEvent`` fires just before each model call
and "allows hook providers to inspect or modify the messages".  The app's
``ContextBudgetHook`` is a plain ``def`` callback (sync user code): while the
conversation is over ``MAX_INPUT_TOKENS = 12_000`` estimated tokens (its
JSON length / 4, about 48,000 characters: far above a small tool output), it
drops the oldest message from ``agent.messages``.  It is blind to
``toolUse`` / ``toolResult`` pairs and to who speaks first: once the first
user message is gone the conversation can start with the assistant's
``toolUse`` message, or with a user message of ``toolResult`` blocks whose
``toolUse`` was dropped, and Bedrock (the model is a Bedrock model id string)
answers 400 ("A conversation must start with a user message" / "The number
of toolResult blocks at messages.0.content exceeds the number of toolUse
blocks of previous turn").

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), once
prunecheck grows the conversation past 12,000 tokens; no hang from the sync
callback.
"""

from __future__ import annotations

import json
from typing import Any

from strands import Agent, tool
from strands.hooks import BeforeModelCallEvent, HookProvider, HookRegistry

MAX_INPUT_TOKENS = 12_000


def _estimated_tokens(messages: list[Any]) -> int:
    return len(json.dumps(messages, default=str)) // 4


class ContextBudgetHook(HookProvider):
    """Drop the oldest messages before a model call while the context is too big."""

    def __init__(self, max_tokens: int = MAX_INPUT_TOKENS) -> None:
        self.max_tokens = max_tokens

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self.trim)

    def trim(self, event: BeforeModelCallEvent) -> None:
        messages = event.agent.messages
        while len(messages) > 1 and _estimated_tokens(messages) > self.max_tokens:
            del messages[0]


@tool
def search_tickets(query: str) -> str:
    """Search the support tickets."""
    raise NotImplementedError("calls the helpdesk API")


@tool
def get_ticket(ticket_id: str) -> str:
    """Read one support ticket with its whole thread."""
    raise NotImplementedError("calls the helpdesk API")


agent = Agent(
    model="us.anthropic.claude-sonnet-4-20250514-v1:0",
    system_prompt="You are a support engineer. Read the tickets before you answer.",
    tools=[search_tickets, get_ticket],
    hooks=[ContextBudgetHook()],
    callback_handler=None,
)
