"""Held back, round 36 (written last; prunecheck not changed for it): a
Microsoft Agent Framework agent on a compaction strategy of the app's own
that keeps the request under a character budget.

The framework's compaction docs: ``compaction_strategy`` takes any object
of the ``CompactionStrategy`` protocol (an async ``__call__(messages) ->
bool`` that marks messages excluded or edits the list), run before every
model call of the tool loop.  The app's ``RecentCharsStrategy`` marks the
oldest included non-system messages excluded (``EXCLUDED_KEY``, the flag the
framework's own strategies set) while the included messages total more than
``MAX_CONTEXT_CHARS = 36_000`` characters (their JSON), always keeping the
newest message.  It looks at messages, not at the groups the framework
annotates (an assistant's function calls with their results): it can
exclude the assistant message holding the calls and keep a ``tool`` message
holding their results, and OpenAI's Chat Completions API (the framework's
``OpenAIChatCompletionClient``, model named by its string) answers 400
("messages with role 'tool' must be a response to a preceeding message with
'tool_calls'").

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), the
configuration's, once prunecheck grows the request past 36,000 characters.
"""

from __future__ import annotations

import json

from agent_framework import EXCLUDED_KEY, Agent, Message, tool
from agent_framework.openai import OpenAIChatCompletionClient

MAX_CONTEXT_CHARS = 36_000


def _chars(message: Message) -> int:
    return len(json.dumps([c.to_dict() for c in message.contents], default=str))


class RecentCharsStrategy:
    """Exclude the oldest messages while the request is over the budget."""

    def __init__(self, max_chars: int = MAX_CONTEXT_CHARS) -> None:
        self.max_chars = max_chars

    async def __call__(self, messages: list[Message]) -> bool:
        included = [
            m
            for m in messages
            if m.role != "system" and not m.additional_properties.get(EXCLUDED_KEY, False)
        ]
        total = sum(_chars(m) for m in included)
        changed = False
        for message in included[:-1]:
            if total <= self.max_chars:
                break
            message.additional_properties[EXCLUDED_KEY] = True
            total -= _chars(message)
            changed = True
        return changed


@tool
def get_contract(contract_id: str) -> str:
    """Read a contract with all its clauses."""
    raise NotImplementedError("calls the contract store")


@tool
def search_clauses(query: str) -> str:
    """Search clauses across the contract store."""
    raise NotImplementedError("calls the contract search")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    name="contract_reviewer",
    instructions="You review contracts. Read the contract before you answer.",
    tools=[get_contract, search_clauses],
    compaction_strategy=RecentCharsStrategy(),
)
