"""A LlamaIndex ``FunctionAgent`` with LlamaIndex's default memory (the default loop).

The app keeps the conversation in the agent's workflow ``Context``, as
LlamaIndex's quick start does (``await agent.run(text, ctx=ctx)``), and sets
no memory: the agent builds its default ``ChatMemoryBuffer``, three quarters
of the model's context window. Check it::

    prunecheck check loop:examples/loops/llamaindex_plain.py:agent
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.workflow import Context
from llama_index.llms.anthropic import Anthropic


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


agent = FunctionAgent(
    tools=[search, send_email],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You are a support agent.",
)
ctx = Context(agent)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, ctx=ctx))
