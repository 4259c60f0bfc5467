"""A trimmer as many agents ship it: keep the system prompt and the last K
OpenAI Chat Completions messages.  It cuts by count, blind to structure, so
it can keep a tool result whose assistant ``tool_calls`` message it dropped.

    prunecheck check examples/openai_keep_last.py:trim@openai
"""

from __future__ import annotations

from typing import Any

K = 4


def trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The system messages, then the last ``K`` other messages."""
    system = [m for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    return system + rest[-K:]
