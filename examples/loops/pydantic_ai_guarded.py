"""The agent of ``pydantic_ai_keep_last.py``, its history processor behind
prunecheck's commit guard (``prunecheck.guard.ListGuard``, list mode): the
docs' "keep only the last 5 messages" still decides what to drop when the
history is over budget, but the guard reads the messages' structure (a
``ModelResponse``'s tool calls and the ``ModelRequest`` parts answering them
are one unit) and lets only whole, closed units go.  ``agent`` is a factory:
one guard per conversation.  Check it with::

    prunecheck check loop:examples/loops/pydantic_ai_guarded.py:agent

What a trimming guard cannot prevent is in the table: what pydantic-ai's
loop does on a cancel or a crash is outside the trim.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from pydantic_ai import Agent, DeferredToolRequests, Tool
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
)

from prunecheck.guard import HardCeilingExceeded, ListGuard
from prunecheck.guard.readers import Item

__all__ = ["TOOLS", "agent", "guarded_history", "keep_recent_messages", "read_message"]

Trimmer = Callable[[list[ModelMessage]], list[ModelMessage]]


def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep only the last 5 messages to manage token usage (the docs' trimmer)."""
    return messages[-5:] if len(messages) > 5 else messages


def read_message(message: ModelMessage) -> Item:
    """The structure of one pydantic-ai message, for the guard."""
    text = " ".join(str(getattr(p, "content", "") or getattr(p, "args", "")) for p in message.parts)
    if isinstance(message, ModelResponse):
        calls = tuple(p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart))
        return Item("assistant", calls=calls, text=text)
    answers = tuple(
        p.tool_call_id
        for p in message.parts
        if isinstance(p, ToolReturnPart) or (isinstance(p, RetryPromptPart) and p.tool_name)
    )
    if answers:
        return Item("tool", answers=answers, text=text)
    system = all(isinstance(p, SystemPromptPart) for p in message.parts)
    return Item("system" if system else "user", text=text)


def guarded_history(
    budget: int = 300, trimmer: Trimmer = keep_recent_messages
) -> ProcessHistory[None]:
    """``trimmer`` (the docs' by default) behind a fresh guard of ``budget`` tokens."""
    guard = ListGuard(
        trimmer,
        format="pydantic-ai",
        reader=read_message,
        budget=budget,
    )

    async def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        try:
            kept: list[ModelMessage] = guard(messages)
        except HardCeilingExceeded as exc:  # over the ceiling: the safe list, over budget
            kept = cast(list[ModelMessage], list(exc.messages or messages))
        return kept

    return ProcessHistory(process)


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


def agent() -> Agent[None, str | DeferredToolRequests]:
    """The coding assistant, its history trimmed at commit boundaries."""
    return Agent(
        "openai:gpt-5.2",
        instructions="You are a coding assistant. Use the tools.",
        output_type=[str, DeferredToolRequests],
        tools=TOOLS,
        capabilities=[guarded_history()],
        defer_model_check=True,
    )
