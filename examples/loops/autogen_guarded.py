"""The same AutoGen assistant, its context trimmed behind the commit gate.

``keep_newest`` keeps the newest messages that fit and knows nothing of tool
calls; inside prunecheck's ``GuardedChatCompletionContext`` it may drop only
whole, closed units, so the model never sees a call without its result (or a
result without its call) because of trimming.  Check it::

    prunecheck check loop:examples/loops/autogen_guarded.py:agent

What a trimming guard cannot prevent is in the table: a crash mid-turn
loses the turn's executed tools from the saved state.
"""

from __future__ import annotations

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.models import LLMMessage

from prunecheck.guard.autogen import GuardedChatCompletionContext


async def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


async def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def _tokens(message: LLMMessage) -> int:
    return len(str(message.content)) // 4 + 1


def keep_newest(messages: list[LLMMessage], max_tokens: int) -> list[LLMMessage]:
    """Keep the newest messages that fit in ``max_tokens``."""
    kept: list[LLMMessage] = []
    used = 0
    for message in reversed(messages):
        used += _tokens(message)
        if used > max_tokens:
            break
        kept.insert(0, message)
    return kept


def agent(model_client: Any) -> AssistantAgent:
    """The support assistant: search and email, trimmed at commit boundaries."""
    return AssistantAgent(
        "support",
        model_client=model_client,
        tools=[search, send_email],
        system_message="You are a support agent.",
        model_context=GuardedChatCompletionContext(
            keep_newest, budget=300, store=":memory:", conversation="support"
        ),
        reflect_on_tool_use=True,
    )
