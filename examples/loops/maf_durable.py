"""A Microsoft Agent Framework assistant whose history is on disk, saved after every model call.

``FileHistoryProvider`` appends the conversation to one JSON Lines file per
session; ``require_per_service_call_history_persistence=True`` saves after
each model call rather than when the run ends, so that a process that dies
in the middle of a run keeps what it had.  ``ContextWindowCompactionStrategy``
compacts before each model call of a run (older tool results collapsed,
then the oldest groups truncated) on a small window, so that a check
reaches it.  A restarted process opens the same session id.  A crash (or a
cancel) after the model's calls are saved and before their results are leaves
the file with calls no result answers, and the next message sends them:
OpenAI's 400 (the class of microsoft/agent-framework#8455, where a run that
middleware ends keeps its last call without its result under this setting)::

    prunecheck check loop:examples/loops/maf_durable.py:agent

The same assistant with the framework's defaults (no compaction; the history
saved when each run ends)::

    prunecheck check loop:examples/loops/maf_durable.py:plain

Each is a factory: the app builds its agent per process.
"""

from __future__ import annotations

import os
import tempfile

from agent_framework import Agent, ContextWindowCompactionStrategy, FileHistoryProvider, tool
from agent_framework.openai import OpenAIChatCompletionClient

HISTORY = os.path.join(tempfile.gettempdir(), "support-agent-history")


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent() -> Agent:
    """The support assistant: its history saved after every model call."""
    return Agent(
        client=OpenAIChatCompletionClient(model="gpt-4.1"),
        instructions="You are a support agent.",
        tools=[search, send_email],
        context_providers=[FileHistoryProvider(HISTORY)],
        require_per_service_call_history_persistence=True,
        compaction_strategy=ContextWindowCompactionStrategy(
            max_context_window_tokens=1200, max_output_tokens=200
        ),
    )


def plain() -> Agent:
    """The same assistant keeping every message, saved when each run ends."""
    return Agent(
        client=OpenAIChatCompletionClient(model="gpt-4.1"),
        instructions="You are a support agent.",
        tools=[search, send_email],
        context_providers=[FileHistoryProvider(HISTORY)],
    )
