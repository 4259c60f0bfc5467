"""Two trimmers over Anthropic Messages dicts (the system prompt is the
request's top-level ``system``, so it is not in the list).

``keep_last`` keeps the last K messages: it may start the list with a user
message whose ``tool_result`` blocks answer a ``tool_use`` it dropped.
``trim`` cuts only at commit boundaries: the kept list never starts with a
``tool_result``, and the last assistant message (the only one whose calls
may be in flight or whose text may be streaming) and everything after it
are never touched.

    prunecheck check examples/anthropic_trim.py:keep_last@anthropic
    prunecheck check examples/anthropic_trim.py:trim@anthropic
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Msg = dict[str, Any]
K = 3


def keep_last(messages: list[Msg]) -> list[Msg]:
    """The last ``K`` messages, whatever they hold."""
    return messages[-K:]


def _has_result(message: Msg) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def trim(
    messages: list[Msg], max_tokens: int = 0, token_counter: Callable[[Any], int] = len
) -> list[Msg]:
    """Drop messages from the front, cutting only before a message that
    carries no tool_result, until the rest fits ``max_tokens``."""
    last_assistant = max(
        (i for i, m in enumerate(messages) if m["role"] == "assistant"), default=len(messages)
    )
    remaining = token_counter(messages)
    cut = 0
    while cut < last_assistant and remaining > max_tokens:
        remaining -= token_counter(messages[cut])
        cut += 1
        while cut < last_assistant and _has_result(messages[cut]):
            remaining -= token_counter(messages[cut])  # results of what was just dropped
            cut += 1
    return messages[cut:]
