"""Trimmers that are safe on every complete history (issue 8, acceptance 1).

Like LangChain's ``trim_messages(strategy="last", start_on="human")``: keep
the system prompt, drop the oldest messages until the rest fits, then drop
further until the first kept message is the user's own text.  On a
complete history (no call pending, no message streaming) whole units go,
because a user's text never sits inside a unit.  Run while calls are
pending — after every append — they drop the message that issued them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["trim_anthropic", "trim_openai"]

Message = dict[str, Any]


def _trim(
    messages: list[Message],
    max_tokens: int,
    token_counter: Callable[[Any], int],
    is_human_text: Callable[[Message], bool],
) -> list[Message]:
    system = [m for m in messages if m.get("role") == "system"]
    rest = [m for m in messages if m.get("role") != "system"]
    while rest and token_counter(system + rest) > max_tokens:
        rest.pop(0)
    while rest and not is_human_text(rest[0]):
        rest.pop(0)
    return system + rest


def trim_openai(
    messages: list[Message], max_tokens: int, token_counter: Callable[[Any], int]
) -> list[Message]:
    """OpenAI Chat Completions dicts: a user message is the user's text."""
    return _trim(messages, max_tokens, token_counter, lambda m: m.get("role") == "user")


def trim_anthropic(
    messages: list[Message], max_tokens: int, token_counter: Callable[[Any], int]
) -> list[Message]:
    """Anthropic Messages dicts: a user message that carries no tool results."""

    def human(m: Message) -> bool:
        content = m["content"]
        return m.get("role") == "user" and (
            isinstance(content, str)
            or not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        )

    return _trim(messages, max_tokens, token_counter, human)
