"""A trimmer that cuts only at commit boundaries, over OpenAI Chat
Completions messages.

A list function cannot see which calls are pending or which message is
still streaming, but it can see enough to stay safe:

* a *unit* is an assistant message with ``tool_calls`` plus the ``tool``
  messages that answer it (they follow it); any other message is a unit;
* the runtime never lets the model speak while a call is pending, so the
  only unit that can be in flight (a call without its result, or a result
  still streaming) is the one of the **last assistant message**, and a
  streaming assistant text is the last assistant message too.

So: keep the system prompt, never touch the last assistant message or
anything after it, and drop whole units from the front until the rest fits
``max_tokens`` (counted with the runtime's ``token_counter``).

    prunecheck check examples/openai_commit_boundary.py:trim@openai
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Msg = dict[str, Any]


def units(messages: list[Msg]) -> list[list[Msg]]:
    """Group messages into units: a tool_calls message with its tool results."""
    out: list[list[Msg]] = []
    for m in messages:
        if m["role"] == "tool" and out and out[-1][0].get("tool_calls"):
            out[-1].append(m)
        else:
            out.append([m])
    return out


def trim(
    messages: list[Msg], max_tokens: int = 0, token_counter: Callable[[Any], int] = len
) -> list[Msg]:
    """Drop whole, closed units from the front until the rest fits."""
    system = [m for m in messages if m["role"] == "system"]
    groups = units([m for m in messages if m["role"] != "system"])
    last_assistant = max(
        (i for i, g in enumerate(groups) if g[0]["role"] == "assistant"), default=len(groups)
    )
    total = token_counter(messages)
    start = 0
    while start < last_assistant and total > max_tokens:
        total -= token_counter(groups[start])
        start += 1
    return system + [m for g in groups[start:] for m in g]
