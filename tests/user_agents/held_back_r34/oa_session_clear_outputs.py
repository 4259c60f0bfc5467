"""Held back, round 34 (written last; prunecheck not changed for it): an OpenAI
Agents SDK agent on a ``SQLiteSession`` subclass that clears old tool outputs
to a placeholder.

The session stores everything; its ``get_items`` (what the runner prepends to
each run) replaces the ``output`` of every ``function_call_output`` but the
newest ``KEEP_OUTPUTS = 3`` with a placeholder that says the output was
cleared and how long it was, e.g. ``[tool output cleared to save context
(1,240 characters)]``.  Every ``function_call`` keeps its
``function_call_output`` (same ``call_id``), so the Responses API accepts the
input, and the model is told the content was cleared, not shown content a
tool never produced.

``app`` returns what the app passes to ``Runner.run``: the agent, its run
config and the session.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the session cleared outputs in some schedules): an honest placeholder, no
``synthesized_result``, no broken pair.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from agents import Agent, RunConfig, SQLiteSession, function_tool

KEEP_OUTPUTS = 3
DB_PATH = os.path.join(tempfile.gettempdir(), "travel-sessions.db")


class ClearingSession(SQLiteSession):
    """A SQLite session that shows only the newest tool outputs in full."""

    async def get_items(self, limit: int | None = None) -> list[Any]:
        stored = await super().get_items(limit)
        items = [dict(item) if isinstance(item, dict) else item for item in stored]
        outputs = [
            item
            for item in items
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        for item in outputs[:-KEEP_OUTPUTS]:
            size = len(str(item.get("output", "")))
            item["output"] = f"[tool output cleared to save context ({size:,} characters)]"
        return items


@function_tool
def get_flight(flight_number: str, date: str) -> str:
    """Get a flight's schedule and status."""
    raise NotImplementedError("calls the flight status API")


@function_tool
def search_hotels(city: str, check_in: str, nights: int) -> str:
    """Search hotels with free rooms."""
    raise NotImplementedError("calls the booking API")


agent = Agent(
    name="travel",
    instructions="You help travellers with flights and hotels.",
    model="gpt-4.1",
    tools=[get_flight, search_hotels],
)


def app() -> tuple[Agent[None], RunConfig, ClearingSession]:
    """The agent, the run config and the traveller's session."""
    return agent, RunConfig(), ClearingSession("traveller-42", DB_PATH)
