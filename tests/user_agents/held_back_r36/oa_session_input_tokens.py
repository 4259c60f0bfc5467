"""Held back, round 36 (written last; prunecheck not changed for it): an
OpenAI Agents SDK app whose ``session_input_callback`` keeps the session's
history under a token budget.

The SDK's sessions docs: ``RunConfig(session_input_callback=...)`` decides
how a session's stored history and the new input are merged before a run
("e.g. keep only the most recent items").  The app's callback walks the
stored history from the newest item back and keeps items while their
estimated tokens (JSON length / 4) stay within ``MAX_HISTORY_TOKENS =
8_000`` (about 32,000 characters: far above a small tool output), then
appends the new input.  It counts items, not function calls: the oldest
item kept can be a ``function_call_output`` whose ``function_call`` fell
outside the budget.  The runner drops calls without an output, but with a
callback set it does not drop an output whose call is gone (it does so only
for a plain ``SessionSettings.limit``), so the request to the Responses API
(the model named by its string, ``gpt-4.1``) holds an output without its
call, which OpenAI refuses: "No tool call found for function call output
with call_id ...".  The cut is on a later message of the same session, once
its history is over 8,000 tokens.  The callback is a plain ``def``.

Expected (before running): exit 1, the trimming class (or the class with a
second message on the session) **unsafe** with ``orphaned_result`` /
``provider_rejection`` (or ``invalid_prune``), the configuration's.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from agents import Agent, RunConfig, SQLiteSession, function_tool

MAX_HISTORY_TOKENS = 8_000
DB_PATH = os.path.join(tempfile.gettempdir(), "helpdesk-sessions.db")


def _tokens(item: Any) -> int:
    return len(json.dumps(item, default=str)) // 4


def keep_recent_history(history: list[Any], new_input: list[Any]) -> list[Any]:
    """The newest stored items that fit the token budget, then the new input."""
    kept: list[Any] = []
    used = 0
    for item in reversed(history):
        used += _tokens(item)
        if used > MAX_HISTORY_TOKENS:
            break
        kept.append(item)
    kept.reverse()
    return kept + new_input


@function_tool
def search_kb(query: str) -> str:
    """Search the knowledge base articles."""
    raise NotImplementedError("calls the knowledge base")


@function_tool
def get_device(serial: str) -> str:
    """Read a device's configuration and event log."""
    raise NotImplementedError("calls the device management API")


agent = Agent(
    name="it_helpdesk",
    instructions="You are an IT helpdesk agent. Check the device before you suggest a fix.",
    model="gpt-4.1",
    tools=[search_kb, get_device],
)


def app() -> tuple[Agent[None], RunConfig, SQLiteSession]:
    """The agent, the run config and the employee's session, as passed to ``Runner.run``."""
    return (
        agent,
        RunConfig(session_input_callback=keep_recent_history),
        SQLiteSession("employee-311", DB_PATH),
    )
