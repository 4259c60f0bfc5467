"""A list function trim(messages) that keeps the last two messages."""

from __future__ import annotations

from typing import TypeVar

_M = TypeVar("_M")


def trim(messages: list[_M]) -> list[_M]:
    return messages[-2:]
