"""Held back (issue 31, written last; prunecheck not changed for it): an
OpenAI Agents SDK agent on a ``SQLiteSession`` subclass that caps the
history it hands the runner, keeping calls and their outputs together.

``get_items`` returns the last ``MAX_ITEMS`` (a module constant, 12) items,
then drops any ``function_call_output`` at the front whose
``function_call`` was cut, and any ``function_call`` whose output is not
kept: whole calls only, a history the Responses API accepts.

Expected: **safe** (whole calls dropped, every kept call with its output),
the trim class exercised.
"""

from typing import Any

from agents import Agent, RunConfig, SQLiteSession, TResponseInputItem, function_tool

MAX_ITEMS = 12


def _whole_calls(items: list[Any]) -> list[Any]:
    calls = {
        i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call"
    }
    outs = {
        i.get("call_id")
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    }
    keep = calls & outs
    return [
        i
        for i in items
        if not (isinstance(i, dict) and i.get("type") in ("function_call", "function_call_output"))
        or i.get("call_id") in keep
    ]


class RecentSession(SQLiteSession):
    """The last MAX_ITEMS items, whole calls only."""

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = await super().get_items(limit)
        return _whole_calls(list(items[-MAX_ITEMS:]))


@function_tool
def get_forecast(city: str) -> str:
    """Get a city's forecast."""
    raise NotImplementedError("calls the weather API")


@function_tool
def get_alerts(region: str) -> str:
    """Get a region's weather alerts."""
    raise NotImplementedError("calls the weather API")


agent = Agent(
    name="weather",
    instructions="You answer weather questions.",
    model="gpt-4.1",
    tools=[get_forecast, get_alerts],
)


def app() -> tuple[Agent[None], RunConfig, RecentSession]:
    """The agent, its run config and the conversation's session."""
    return agent, RunConfig(), RecentSession("user-9")
