"""A Microsoft Agent Framework assistant with the documented compaction provider.

``CompactionProvider`` runs ``SlidingWindowStrategy(keep_last_groups=4)`` on
the history the ``InMemoryHistoryProvider`` loads before each run, and
``ToolResultCompactionStrategy`` on the stored history after each run
(older tool rounds collapse into one ``[Tool results: ...]`` message).  Both
strategies exclude whole message groups (a tool call with its results), so
no request pairs a result with a missing call.  Check it::

    prunecheck check loop:examples/loops/maf_compaction.py:agent

The same assistant whose own strategy keeps the last five messages, cutting
wherever the fifth falls (a tool result without its call)::

    prunecheck check loop:examples/loops/maf_compaction.py:keep_last

The same assistant summarizing in the run: before each model call over six
messages, ``SummarizationStrategy`` asks a second model for a summary of the
oldest groups and keeps the last four messages' groups whole::

    prunecheck check loop:examples/loops/maf_compaction.py:summarizing
"""

from __future__ import annotations

from agent_framework import (
    Agent,
    CompactionProvider,
    InMemoryHistoryProvider,
    Message,
    SlidingWindowStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    tool,
)
from agent_framework.openai import OpenAIChatCompletionClient


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


history = InMemoryHistoryProvider()

agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You are a support agent.",
    tools=[search, send_email],
    context_providers=[
        history,
        CompactionProvider(
            before_strategy=SlidingWindowStrategy(keep_last_groups=4),
            after_strategy=ToolResultCompactionStrategy(keep_last_tool_call_groups=1),
            history_source_id=history.source_id,
        ),
    ],
)


class KeepLastMessages:
    """A compaction strategy of the app's own: the last ``n`` messages."""

    def __init__(self, n: int) -> None:
        self.n = n

    async def __call__(self, messages: list[Message]) -> bool:
        if len(messages) <= self.n:
            return False
        del messages[: -self.n]
        return True


keep_last = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You are a support agent.",
    tools=[search, send_email],
    compaction_strategy=KeepLastMessages(5),
)


summarizing = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You are a support agent.",
    tools=[search, send_email],
    compaction_strategy=SummarizationStrategy(
        client=OpenAIChatCompletionClient(model="gpt-4.1-mini"), target_count=4, threshold=2
    ),
)
