"""Held back, round 34 (written last; prunecheck not changed for it): a
LlamaIndex ``FunctionAgent`` on a memory of the app's own that leaves old tool
outputs out.

The app subclasses ``ChatMemoryBuffer`` and overrides ``get`` (what the agent
reads at the start of each run): once the stored conversation passes
``MAX_HISTORY_CHARS = 20_000`` characters, far above a default tool output, it
leaves out every ``tool`` message before the latest user message, on the idea
that old outputs are stale anyway.  It keeps the assistant messages that made
those calls, so the next request holds ``tool_use`` blocks no ``tool_result``
answers, and Anthropic (the model is named by its string on LlamaIndex's
Anthropic class) answers 400 "messages.N: `tool_use` ids were found without
`tool_result` blocks immediately after".  The tools ran: their outputs vanish
from the model's view with nothing to say so.

Expected (before running): exit 1, the trimming class **unsafe** with
``unanswered_call`` / ``provider_rejection`` / ``invalid_prune`` (or
``silent_loss``), once prunecheck grows the conversation past 20,000
characters over more than one message of the user.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic

MAX_HISTORY_CHARS = 20_000


class LeanMemory(ChatMemoryBuffer):
    """The chat history; old tool outputs left out once it is long."""

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        history = self.get_all()
        if sum(len(str(m.content or "")) for m in history) <= MAX_HISTORY_CHARS:
            return history
        users = [i for i, m in enumerate(history) if m.role == MessageRole.USER]
        latest = users[-1] if users else 0
        return [m for i, m in enumerate(history) if i >= latest or m.role != MessageRole.TOOL]


def get_repo_file(path: str) -> str:
    """Read a file of the repository."""
    raise NotImplementedError("reads the repository")


def run_tests(pattern: str) -> str:
    """Run the tests matching a pattern and return their output."""
    raise NotImplementedError("runs the test suite")


memory = LeanMemory.from_defaults(token_limit=100_000)

agent = FunctionAgent(
    tools=[get_repo_file, run_tests],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You are a coding assistant. Read the code and run the tests.",
)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, memory=memory))
