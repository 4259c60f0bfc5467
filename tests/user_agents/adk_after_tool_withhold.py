"""A Google ADK agent whose ``after_tool_callback`` replaces an oversized tool
response with a note saying it was withheld and how long it was.

A plain ``def`` callback: over ``MAX_RESULT_CHARS`` characters, the response
becomes ``{"result": "[output withheld: N characters]"}``.  Every call keeps
its response and the note says what happened: an honest placeholder, the
configuration's trimming, safe once an output grows past the budget
(tests/test_loops_tool_output_hooks.py).
"""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents import LlmAgent

MAX_RESULT_CHARS = 4_000


def withhold_large(tool: Any, args: dict[str, Any], tool_context: Any,
                   tool_response: dict[str, Any]) -> dict[str, Any] | None:  # fmt: skip
    text = json.dumps(tool_response, default=str)
    if len(text) <= MAX_RESULT_CHARS:
        return None
    return {"result": f"[output withheld: {len(text):,} characters]"}


def list_orders(customer: str) -> str:
    """List a customer's orders."""
    raise NotImplementedError("calls the order service")


root_agent = LlmAgent(
    name="support",
    model="gemini-2.5-flash",
    instruction="Answer questions about a customer's orders.",
    tools=[list_orders],
    after_tool_callback=withhold_large,
)
