"""Held back, round 35 (written last; prunecheck not changed for it): a
LlamaIndex ``FunctionAgent`` on a memory of the app's own that clears old tool
outputs to a placeholder that says so.

The app subclasses ``ChatMemoryBuffer`` and overrides ``get`` (a plain
``def``: LlamaIndex calls it in a worker thread through ``aget`` at the start
of each run): every ``tool`` message but the newest
``KEEP_RECENT_TOOL_OUTPUTS = 3`` gets the content ``[tool output cleared to
save context]``, under the same ``tool_call_id``.  Every call keeps its
result, nothing is presented as a tool's output that a tool did not produce,
and the model is told the output was cleared (the pattern of LangChain's
``ClearToolUsesEdit``).  The stored conversation is not changed; the model is
named by its string on LlamaIndex's Anthropic class.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the placeholder written in some schedules): an honest placeholder is not
``synthesized_result``, and Anthropic accepts the history.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic

KEEP_RECENT_TOOL_OUTPUTS = 3
PLACEHOLDER = "[tool output cleared to save context]"


class ClearingMemory(ChatMemoryBuffer):
    """The chat history, old tool outputs replaced by a placeholder."""

    def get(
        self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        history = super().get(input=input, initial_token_count=initial_token_count, **kwargs)
        tools = [i for i, m in enumerate(history) if m.role == MessageRole.TOOL]
        old = set(tools[:-KEEP_RECENT_TOOL_OUTPUTS])
        return [
            ChatMessage(
                role=m.role, content=PLACEHOLDER, additional_kwargs=dict(m.additional_kwargs)
            )
            if i in old
            else m
            for i, m in enumerate(history)
        ]


def read_log(service: str, minutes: int) -> str:
    """Read the last minutes of a service's log."""
    raise NotImplementedError("reads the log store")


def list_alerts(service: str) -> str:
    """List the open alerts of a service."""
    raise NotImplementedError("calls the alerting API")


memory = ClearingMemory.from_defaults(token_limit=150_000)

agent = FunctionAgent(
    tools=[read_log, list_alerts],
    llm=Anthropic(model="claude-haiku-4-5"),
    system_prompt="You are an on-call assistant. Read the logs before you answer.",
)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, memory=memory))
