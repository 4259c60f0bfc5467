"""A Strands Agents assistant that summarizes old messages and keeps its session.

``SummarizingConversationManager(proactive_compression=True)`` summarizes the
oldest messages (keeping tool calls with their results) before a model call
that would fill 70% of the model's context window, and ``FileSessionManager``
writes every message as it is added, so a restarted process continues the
session.  The model's ``context_window_limit`` is small here so that a check
reaches the summarizer::

    prunecheck check loop:examples/loops/strands_summarizing.py:agent

The same assistant with Strands' ``NullConversationManager`` (no trimming at
all; its session kept)::

    prunecheck check loop:examples/loops/strands_summarizing.py:plain

Each is a factory: the app builds its agent per process (the session is
restored from ``SESSIONS``).
"""

from __future__ import annotations

import os
import tempfile

from strands import Agent, tool
from strands.agent.conversation_manager import (
    NullConversationManager,
    SummarizingConversationManager,
)
from strands.models import BedrockModel
from strands.session.file_session_manager import FileSessionManager

SESSIONS = os.path.join(tempfile.gettempdir(), "support-agent-sessions")


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def agent() -> Agent:
    """The support assistant: summarizing, its session on disk."""
    return Agent(
        model=BedrockModel(model_id="us.amazon.nova-2-lite-v1:0", context_window_limit=1000),
        system_prompt="You are a support agent.",
        tools=[search, send_email],
        conversation_manager=SummarizingConversationManager(
            summary_ratio=0.5, preserve_recent_messages=2, proactive_compression=True
        ),
        session_manager=FileSessionManager(session_id="support-summarizing", storage_dir=SESSIONS),
        callback_handler=None,
    )


def plain() -> Agent:
    """The same assistant keeping every message."""
    return Agent(
        model=BedrockModel(model_id="us.amazon.nova-2-lite-v1:0"),
        system_prompt="You are a support agent.",
        tools=[search, send_email],
        conversation_manager=NullConversationManager(),
        session_manager=FileSessionManager(session_id="support-plain", storage_dir=SESSIONS),
        callback_handler=None,
    )
