"""The trimmers of the on-call example (docs/on-call.md).

``keep_last`` is the trimmer the agent ran when the incident happened: a
window over the last ``window`` messages (after the system prompt), the
"keep recent messages" idiom.  It knows nothing of tool calls, so when the
window starts inside a parallel batch it keeps the results and drops the
assistant message that issued the calls: the provider answers 400.

``keep_last_units`` is the fix: the same window, widened backwards until it
starts on a whole unit (an assistant message with ``tool_calls`` goes with
the tool messages that answer it).  Both take OpenAI Chat Completions
message dicts; check them with::

    prunecheck check examples/incident/trim.py:keep_last_units@openai \\
        --check-at before_invoke
"""

from __future__ import annotations

from typing import Any

__all__ = ["WINDOW", "keep_last", "keep_last_units"]

#: Messages the window keeps after the system prompt.
WINDOW = 5

Message = dict[str, Any]


def keep_last(messages: list[Message], window: int = WINDOW) -> list[Message]:
    """The system prompt and the last ``window`` other messages."""
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    return system + rest[-window:]


def keep_last_units(messages: list[Message], window: int = WINDOW) -> list[Message]:
    """``keep_last``, but the window never starts on a tool message: it
    widens to the assistant message whose calls those tool messages answer."""
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    start = max(0, len(rest) - window)
    while start > 0 and rest[start].get("role") == "tool":
        start -= 1
    return system + rest[start:]
