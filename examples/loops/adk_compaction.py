"""A Google ADK assistant that compacts its session's events and keeps them in a database.

The App's ``EventsCompactionConfig`` summarizes older invocations: every two
new invocations (``compaction_interval=2``, one invocation of overlap), and
before a model call once the last prompt reached 600 tokens, keeping the last
four events raw (``token_threshold``/``event_retention_size``).  ADK's
compactor only summarizes a prefix of events whose every call has its
response.  The ``Runner`` keeps the session in a ``DatabaseSessionService``
(SQLite), so a restarted process continues it, and the App is resumable::

    prunecheck check loop:examples/loops/adk_compaction.py:runner

The same agent in an App without compaction, its session in the same kind of
database::

    prunecheck check loop:examples/loops/adk_compaction.py:plain

Each is a factory: the app builds its Runner per process.
"""

from __future__ import annotations

import os
import tempfile

from google.adk.agents import Agent
from google.adk.apps.app import App, EventsCompactionConfig, ResumabilityConfig
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService

DB_URL = "sqlite+aiosqlite:///" + os.path.join(tempfile.gettempdir(), "support-sessions.db")


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


root_agent = Agent(
    name="support",
    model="gemini-2.5-flash",
    instruction="You are a support agent.",
    tools=[search, send_email],
)


def runner() -> Runner:
    """The support assistant: compacting, resumable, its sessions in a database."""
    app = App(
        name="support",
        root_agent=root_agent,
        events_compaction_config=EventsCompactionConfig(
            compaction_interval=2, overlap_size=1, token_threshold=600, event_retention_size=4
        ),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    return Runner(app=app, session_service=DatabaseSessionService(db_url=DB_URL))


def plain() -> Runner:
    """The same assistant keeping every event."""
    app = App(name="support", root_agent=root_agent)
    return Runner(app=app, session_service=DatabaseSessionService(db_url=DB_URL))
