"""Held back, round 37 (written last; prunecheck not changed for it): a
Microsoft Agent Framework agent on the framework's
``ToolResultCompactionStrategy``, built by a factory.

Agent Framework's compaction docs: ``compaction_strategy`` runs before every
model call of the tool loop; ``ToolResultCompactionStrategy`` collapses
every tool-call group but the newest ``keep_last_tool_call_groups`` (an
assistant message's function calls with all their results) into one
assistant message ``[Tool results: get_forecast: ...; get_alerts: ...]``
(cut at 4,096 characters with ``... [truncated]``), and excludes the
group's messages.  A group goes whole: its calls and its results leave the
request together, and the summary is an assistant message quoting what the
tools returned, not a tool result; the strategy runs between model calls,
when every call of the loop is answered.  The app keeps
``KEEP_TOOL_GROUPS = 2``, so it fires from the third tool round of a
request on, without any budget.  The agent is built by ``build_agent()``
(the app builds it at startup, after its settings are loaded), on the
Responses API client ``OpenAIChatClient(model="gpt-4.1")``: the module
imports without ``OPENAI_API_KEY`` (the client, built in the factory, would
raise without it).

Expected (before running): exit 0, the trimming class **safe** and
exercised (groups collapsed in some schedules, past two tool rounds in one
request), no ``orphaned_result``, no ``unanswered_call``, the summary not
``synthesized_result``.
"""

from __future__ import annotations

from agent_framework import Agent, ToolResultCompactionStrategy, tool
from agent_framework.openai import OpenAIChatClient

KEEP_TOOL_GROUPS = 2


@tool
def get_forecast(city: str, days: int = 3) -> str:
    """Read the weather forecast of a city for the next days."""
    return f"{city}: sunny, 18-24 C, for {days} days"


@tool
def get_alerts(region: str) -> str:
    """Read the active weather alerts of a region."""
    return f"{region}: no active alerts"


def build_agent() -> Agent:
    """The weather assistant, its old tool results collapsed to summaries."""
    return Agent(
        client=OpenAIChatClient(model="gpt-4.1"),
        name="weather_assistant",
        instructions="You answer weather questions. Read the forecast and alerts first.",
        tools=[get_forecast, get_alerts],
        compaction_strategy=ToolResultCompactionStrategy(
            keep_last_tool_call_groups=KEEP_TOOL_GROUPS
        ),
    )
