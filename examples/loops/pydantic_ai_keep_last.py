"""A pydantic-ai agent as its documentation writes one: tools, and the
history processor of the docs' first example ("keep only the last 5
messages to manage token usage"), installed as pydantic-ai 2's
``ProcessHistory`` capability.  ``delete_file`` needs a human's approval.
``plain_agent`` is the same agent without the processor: pydantic-ai's
default loop.

Check them with (the loop harness replaces the model and the tools' bodies)::

    prunecheck check loop:examples/loops/pydantic_ai_keep_last.py:plain_agent
    prunecheck check loop:examples/loops/pydantic_ai_keep_last.py:agent
"""

from __future__ import annotations

from pydantic_ai import Agent, DeferredToolRequests, Tool
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage

__all__ = ["TOOLS", "agent", "keep_recent_messages", "plain_agent"]


async def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep only the last 5 messages to manage token usage."""
    return messages[-5:] if len(messages) > 5 else messages


async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


async def run_tests(target: str) -> str:
    """Run the test suite on a target (gives up after 30 s)."""
    raise NotImplementedError("runs pytest in the real app")


async def delete_file(path: str) -> str:
    """Delete a file (a human approves each call)."""
    raise NotImplementedError("deletes in the real app")


TOOLS = [read_file, Tool(run_tests, timeout=30), Tool(delete_file, requires_approval=True)]

agent = Agent(
    "openai:gpt-5.2",
    instructions="You are a coding assistant. Use the tools.",
    output_type=[str, DeferredToolRequests],
    tools=TOOLS,
    capabilities=[ProcessHistory(keep_recent_messages)],
    defer_model_check=True,
)

plain_agent = Agent(
    "openai:gpt-5.2",
    instructions="You are a coding assistant. Use the tools.",
    output_type=[str, DeferredToolRequests],
    tools=TOOLS,
    defer_model_check=True,
)
