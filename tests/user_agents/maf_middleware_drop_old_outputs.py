"""A Microsoft Agent Framework agent whose chat middleware class drops old tool outputs.

Agent Framework's docs show chat middleware as a ``ChatMiddleware`` subclass
with a ``process(context, call_next)`` method.  This one estimates the
request's tokens (characters / 4) and, while it is over ``PROMPT_TOKENS =
16_000``, removes the oldest ``tool`` message, keeping the assistant's
``function_call`` that asked for it: a call left without its result, which
OpenAI Chat Completions refuses.  The client is the framework's Chat
Completions client on a model string (no key needed to build it).

Expected: the middleware is the trim hook (the trimming class is driven), its
budget 16,000 tokens, read from the code that compares it with ``_tokens``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from agent_framework import Agent, ChatContext, ChatMiddleware, Message, tool
from agent_framework.openai import OpenAIChatCompletionClient

PROMPT_TOKENS = 16_000


def _tokens(messages: list[Message]) -> int:
    return sum(len(str(m.to_dict())) for m in messages) // 4


class DropOldToolOutputs(ChatMiddleware):
    """Leave the oldest tool outputs out of the request while it is over PROMPT_TOKENS."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        messages = list(context.messages)
        while _tokens(messages) > PROMPT_TOKENS:
            oldest = next((i for i, m in enumerate(messages[:-1]) if m.role == "tool"), None)
            if oldest is None:
                break
            del messages[oldest]
        context.messages = messages
        await call_next()


@tool
def search_tickets(query: str) -> str:
    """Search the support tickets."""
    raise NotImplementedError("calls the ticket system")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You triage support tickets.",
    tools=[search_tickets],
    middleware=[DropOldToolOutputs()],
)
