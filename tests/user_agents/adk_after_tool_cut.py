"""A Google ADK agent whose async ``after_tool_callback`` keeps tool responses
under a character budget by cutting them, with nothing saying so.

Written the way ADK's callbacks docs show it: the callback gets the tool's
response dict and returns a replacement; here the first
``TOOL_RESPONSE_CHAR_LIMIT`` characters of the ``result``.  The model sees a
prefix of the tool's output as if it were all of it: a truncated payload, the
configuration's (tests/test_loops_tool_output_hooks.py).
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent

TOOL_RESPONSE_CHAR_LIMIT = 3_000


async def clip_response(tool: Any, args: dict[str, Any], tool_context: Any,
                        tool_response: Any) -> dict[str, Any] | None:  # fmt: skip
    # ADK hands the callback what the tool returned: here a str (a dict tool: its dict)
    text = tool_response if isinstance(tool_response, str) else str(tool_response.get("result"))
    if len(text) > TOOL_RESPONSE_CHAR_LIMIT:
        return {"result": text[:TOOL_RESPONSE_CHAR_LIMIT]}
    return None


def fetch_page(url: str) -> str:
    """Fetch a web page's text."""
    raise NotImplementedError("calls the network")


root_agent = LlmAgent(
    name="reader",
    model="gemini-2.5-flash",
    instruction="Read the pages the user names and answer from them.",
    tools=[fetch_page],
    after_tool_callback=clip_response,
)
