"""A Strands Agents assistant whose sliding window is small: UNSAFE on Bedrock.

``SlidingWindowConversationManager(window_size=4)`` keeps the last four
messages after each invocation.  When the window's edge falls inside a tool
round and no plain user message is left to start from, Strands trims to the
assistant's ``toolUse`` (a complete call and result): the next request starts
with the assistant's message, and Bedrock, Strands' default provider,
answers ``ValidationException: A conversation must start with a user
message`` (Strands issue 2085, and the tool-pair fallback of later releases).
Check it::

    prunecheck check loop:examples/loops/strands_sliding.py:agent

The same window with an OpenAI model, which accepts a conversation that
starts with the assistant's complete tool round::

    prunecheck check loop:examples/loops/strands_sliding.py:on_openai
"""

from __future__ import annotations

from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


agent = Agent(
    model="us.amazon.nova-2-lite-v1:0",
    system_prompt="You are a support agent.",
    tools=[search, send_email],
    conversation_manager=SlidingWindowConversationManager(window_size=4),
    callback_handler=None,
)


def on_openai() -> Agent:
    """The same assistant on OpenAI (``pip install 'strands-agents[openai]'``)."""
    from strands.models.openai import OpenAIModel

    return Agent(
        model=OpenAIModel(model_id="gpt-4.1"),
        system_prompt="You are a support agent.",
        tools=[search, send_email],
        conversation_manager=SlidingWindowConversationManager(window_size=4),
        callback_handler=None,
    )
