"""Held back (issue 31, written last; prunecheck not changed for it): an
AutoGen assistant whose custom model context keeps a token budget stated as
a module constant.

``CONTEXT_TOKENS = 6_000`` at the top of the module; the context keeps the
system message and the newest messages whose estimated size (characters
divided by 4) fits, blind to an ``AssistantMessage`` of ``FunctionCall`` s
and the ``FunctionExecutionResultMessage`` after it.

Expected: the trimming class **unsafe** (``orphaned_result`` /
``provider_rejection``).
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import LLMMessage, SystemMessage

CONTEXT_TOKENS = 6_000


class BudgetContext(UnboundedChatCompletionContext):
    """The newest messages within CONTEXT_TOKENS (estimated)."""

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        system = [m for m in messages if isinstance(m, SystemMessage)]
        kept: list[LLMMessage] = []
        used = 0
        for message in reversed(messages):
            if isinstance(message, SystemMessage):
                continue
            used += len(str(message.content)) // 4
            if used > CONTEXT_TOKENS:
                break
            kept.insert(0, message)
        return system + kept


async def query_db(sql: str) -> str:
    """Run a read-only SQL query."""
    raise NotImplementedError("runs the query")


async def list_tables() -> str:
    """List the warehouse's tables."""
    raise NotImplementedError("reads the catalog")


def agent(model_client: Any) -> AssistantAgent:
    """The analyst on the app's model client."""
    return AssistantAgent(
        name="analyst",
        model_client=model_client,
        tools=[query_db, list_tables],
        system_message="You answer questions with SQL.",
        model_context=BudgetContext(),
    )
