"""Held back, round 34 (written last; prunecheck not changed for it): a
Microsoft Agent Framework assistant with the documented ``TruncationStrategy``
on a token budget.

``TruncationStrategy(max_n=8_000, compact_to=5_000, tokenizer=...)`` with the
framework's ``CharacterEstimatorTokenizer`` (four characters a token): before
each model call in a run, once the messages pass 8,000 estimated tokens (about
32,000 characters, far above a default tool output), it excludes the oldest
message groups until 5,000 are left.  A group is a user message, or an
assistant's tool calls together with all their results: the strategy never
splits one, so every call sent has its result and every result its call.  The
client is the framework's OpenAI Responses client, the model named by its
string.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the strategy excluded groups in some schedules): whole calls dropped with
their results, a history the Responses API accepts, no ``invalid_prune``.
"""

from __future__ import annotations

from agent_framework import Agent, CharacterEstimatorTokenizer, TruncationStrategy, tool
from agent_framework.openai import OpenAIChatClient


@tool
def read_contract(contract_id: str) -> str:
    """Read the full text of a contract."""
    raise NotImplementedError("reads the document store")


@tool
def search_clauses(query: str) -> str:
    """Search the clause library."""
    raise NotImplementedError("searches the clause library")


agent = Agent(
    client=OpenAIChatClient(model="gpt-4.1"),
    instructions="You review contracts. Quote the clauses you rely on.",
    tools=[read_contract, search_clauses],
    compaction_strategy=TruncationStrategy(
        max_n=8_000, compact_to=5_000, tokenizer=CharacterEstimatorTokenizer()
    ),
)
