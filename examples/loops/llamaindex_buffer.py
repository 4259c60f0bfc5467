"""A LlamaIndex ``FunctionAgent`` whose memory is a ``ChatMemoryBuffer``: SAFE trimming.

The app keeps one ``ChatMemoryBuffer`` of 2,000 tokens and runs every
message through the agent with it (``await agent.run(text, memory=memory)``).
``memory.get()`` keeps the most recent messages that fit and steps over the
assistant and tool messages at the cut, so the history it returns starts at
a user's message: a tool call is never sent without its results, nor a
result without its call (the fix of LlamaIndex issue 13715, in
llama-index-core 0.11.14). Check it::

    prunecheck check loop:examples/loops/llamaindex_buffer.py:agent
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


memory = ChatMemoryBuffer.from_defaults(token_limit=2000)

agent = FunctionAgent(
    tools=[search, send_email],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You are a support agent.",
)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, memory=memory))
