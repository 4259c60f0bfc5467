"""An AutoGen AgentChat assistant whose context is token-limited: UNSAFE.

``TokenLimitedChatCompletionContext`` (autogen-core) drops the *middle*
message until the history fits ``token_limit``.  The middle message may be
the assistant message that issued a batch of tool calls, leaving its
results behind (or the results, leaving the calls): the provider answers
400.  Check it::

    prunecheck check loop:examples/loops/autogen_token_limited.py:agent

``agent`` is the factory the app calls with its model client
(``OpenAIChatCompletionClient(model="gpt-4.1")``); prunecheck calls it with
its model double, whose ``count_tokens`` is four characters of the rendered
request per token.  The app saves ``await agent.save_state()`` after each
turn and loads it at start-up.
"""

from __future__ import annotations

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import TokenLimitedChatCompletionContext


async def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


async def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent(model_client: Any) -> AssistantAgent:
    """The support assistant: search and email, the context held to 400 tokens."""
    return AssistantAgent(
        "support",
        model_client=model_client,
        tools=[search, send_email],
        system_message="You are a support agent.",
        model_context=TokenLimitedChatCompletionContext(model_client, token_limit=400),
        reflect_on_tool_use=True,
    )
