"""Held back, round 35 (written last; prunecheck not changed for it): a
Microsoft Agent Framework agent whose in-run compaction summarizes old
messages with a second, cheaper model.

The framework's ``SummarizationStrategy(client=..., target_count=6,
threshold=4)``: before a model call, once more than 10 non-system messages
are included, it asks its own chat client (``gpt-4.1-mini`` on the
framework's OpenAI Chat Completions client, named by its string) for a
summary of the oldest message groups, inserts the summary as an assistant
message and excludes the summarized messages.  A group is a user message or
an assistant's tool calls together with all their results, and it
summarizes whole groups only, so no call is sent without its result.  A
summarizer that fails (or answers nothing) is logged and the compaction
skipped (the history is left whole), by the framework's own code.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the strategy summarized in some schedules), the summarizer's calls answered
offline (no connection out, no key), a summarizer failure leaving the
history whole rather than failing the run.
"""

from __future__ import annotations

from agent_framework import Agent, SummarizationStrategy, tool
from agent_framework.openai import OpenAIChatCompletionClient


@tool
def get_account(account_id: str) -> str:
    """Read a customer account with its plan and usage."""
    raise NotImplementedError("calls the accounts API")


@tool
def list_invoices(account_id: str, months: int) -> str:
    """List the invoices of an account for the last months."""
    raise NotImplementedError("calls the billing API")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    name="billing_assistant",
    instructions="You answer billing questions. Look the account up before you answer.",
    tools=[get_account, list_invoices],
    compaction_strategy=SummarizationStrategy(
        client=OpenAIChatCompletionClient(model="gpt-4.1-mini"),
        target_count=6,
        threshold=4,
    ),
)
