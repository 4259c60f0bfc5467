"""A list function trim(messages) that keeps the last two messages."""

from __future__ import annotations

from typing import TypeVar

_M = TypeVar("_M")


def trim(messages: list[_M]) -> list[_M]:
    return messages[-2:]


def no_role(messages: list[_M]) -> list[dict[str, str]]:
    """Returns dicts without a role (issue 19): refused, not judged."""
    return [{"content": "what was said"} for _ in messages[-2:]]
