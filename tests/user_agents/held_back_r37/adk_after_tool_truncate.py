"""Held back, round 37 (written last; prunecheck not changed for it): a
Google ADK agent whose ``after_tool_callback`` cuts long tool responses to
a character budget, silently.

ADK's callbacks docs: an ``after_tool_callback(tool, args, tool_context,
tool_response)`` runs after each tool, and a dict it returns "replaces the
tool's response" in the ``function_response`` the model sees (and in the
session's events).  The app keeps requests small at the source: a plain
``def`` ``cap_tool_response`` that, when a response's text (its ``result``,
else the whole dict as JSON) is longer than ``MAX_TOOL_RESPONSE_CHARS =
6_000`` characters, returns ``{"result": text[:6000]}``: the first 6,000
characters, with no word that anything was cut.  Every ``function_call``
keeps its ``function_response`` (nothing is orphaned), but the response is
a prefix of what the tool returned presented as all of it: a truncated
payload (a JSON document cut mid-value, a list missing its tail) that the
model takes for complete.  The model is Gemini, named by its string
(``gemini-2.5-flash``); the module loads without ``GOOGLE_API_KEY``.

Expected (before running): exit 1, the trimming class **unsafe** with
``truncated_payload`` (or ``silent_loss``), the configuration's, once
prunecheck grows a tool output past 6,000 characters; no broken pair.
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import BaseTool, ToolContext

MAX_TOOL_RESPONSE_CHARS = 6_000


def cap_tool_response(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict[str, Any]
) -> dict[str, Any] | None:
    """Cut a tool response to MAX_TOOL_RESPONSE_CHARS characters."""
    result = tool_response.get("result") if isinstance(tool_response, dict) else tool_response
    text = result if isinstance(result, str) else json.dumps(tool_response, default=str)
    if len(text) <= MAX_TOOL_RESPONSE_CHARS:
        return None
    return {"result": text[:MAX_TOOL_RESPONSE_CHARS]}


def query_sales(region: str, quarter: str) -> dict[str, Any]:
    """Query the sales table of a region for a quarter (e.g. 2026-Q3)."""
    raise NotImplementedError("calls the warehouse")


def get_targets(region: str, quarter: str) -> dict[str, Any]:
    """Read the sales targets of a region for a quarter."""
    raise NotImplementedError("calls the planning API")


root_agent = LlmAgent(
    name="sales_analyst",
    model="gemini-2.5-flash",
    instruction="You analyse sales. Query the sales and the targets before you answer.",
    tools=[query_sales, get_targets],
    after_tool_callback=cap_tool_response,
)
