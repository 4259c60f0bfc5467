"""The agent of ``pydantic_ai_keep_last.py`` with a unit-safe history
processor: it keeps the last 2 *turns*, cutting only just before a request
that carries a user prompt, so no tool call is ever separated from its
result.  Check it with::

    prunecheck check loop:examples/loops/pydantic_ai_turns.py:agent
"""

from __future__ import annotations

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

__all__ = ["agent", "keep_recent_turns"]


async def keep_recent_turns(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep the messages from the second-to-last user prompt on."""
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts)
    ]
    return messages[starts[-2] :] if len(starts) > 2 else messages


agent = Agent(
    "openai:gpt-5.2",
    instructions="You are a coding assistant. Use the tools.",
    output_type=[str, DeferredToolRequests],
    capabilities=[ProcessHistory(keep_recent_turns)],
    defer_model_check=True,
)


@agent.tool_plain
async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


@agent.tool_plain(timeout=30)
async def run_tests(target: str) -> str:
    """Run the test suite on a target (gives up after 30 s)."""
    raise NotImplementedError("runs pytest in the real app")


@agent.tool_plain(requires_approval=True)
async def delete_file(path: str) -> str:
    """Delete a file (a human approves each call)."""
    raise NotImplementedError("deletes in the real app")
