"""An AutoGen AgentChat assistant as its quick start writes one: AutoGen's
default loop (``UnboundedChatCompletionContext``: no trimming), tools run in
parallel, a reflection on their results.  The app saves ``await
agent.save_state()`` after each turn and loads it at start-up.  Check it::

    prunecheck check loop:examples/loops/autogen_plain.py:agent

``agent`` is the factory the app calls with its model client
(``OpenAIChatCompletionClient(model="gpt-4.1")``); prunecheck calls it with
its model double.
"""

from __future__ import annotations

from typing import Any

from autogen_agentchat.agents import AssistantAgent

__all__ = ["agent"]


async def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


async def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent(model_client: Any) -> AssistantAgent:
    """The support assistant: search and email, the whole history sent each time."""
    return AssistantAgent(
        "support",
        model_client=model_client,
        tools=[search, send_email],
        system_message="You are a support agent.",
        reflect_on_tool_use=True,
    )
