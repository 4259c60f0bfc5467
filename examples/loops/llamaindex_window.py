"""A LlamaIndex ``FunctionAgent`` whose memory keeps the last eight messages: UNSAFE.

The app subclasses ``ChatMemoryBuffer`` so that the agent sees a fixed
window of the conversation, the last ``window`` messages, whatever their
size. The window's edge can fall between an assistant's tool calls and
their results: the request then starts with a tool result whose call is
gone, and the provider refuses it (Anthropic: "unexpected `tool_use_id`
found in `tool_result` blocks"). Check it::

    prunecheck check loop:examples/loops/llamaindex_window.py:agent

The factory ``with_memory`` builds the same agent and returns it with its
memory, as an app that makes one per conversation does::

    prunecheck check loop:examples/loops/llamaindex_window.py:with_memory
"""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic


class WindowMemory(ChatMemoryBuffer):
    """The chat history, the last ``window`` messages of it."""

    window: int = 8

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return self.get_all()[-self.window :]


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


memory = WindowMemory.from_defaults()

agent = FunctionAgent(
    tools=[search, send_email],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You are a support agent.",
)


def with_memory() -> tuple[FunctionAgent, WindowMemory]:
    """A conversation: the agent and its memory."""
    return agent, WindowMemory.from_defaults()
