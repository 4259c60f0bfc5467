"""Policies that try to corrupt the runtime's accounting or its output."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView


def setattr_frozen(view: ContextView, need: int) -> list[str]:
    """Shrink every message's tokens in place, then evict nothing."""
    for m in view.messages:
        object.__setattr__(m, "tokens", 0)
    return []


def evict_then_lie(view: ContextView, need: int) -> list[str]:
    """Evict the oldest non-system message, and zero its tokens so that its
    removal would seem to free nothing."""
    for m in view.messages:
        if m.role != "system" and m.closed:
            object.__setattr__(m, "tokens", 0)
            return [m.id]
    return []


def chatty(view: ContextView, need: int) -> list[str]:
    print("POLICY-STDOUT " * 20)
    sys.stdout.write("more policy output\n")
    return []


def mutate_view(view: ContextView, need: int) -> list[str]:
    view.budget = 10**9
    view.used = 0
    return []


def returns_int(view: ContextView, need: int) -> int:
    return 7


def returns_junk(view: ContextView, need: int) -> list[object]:
    return [object()]


def unknown_id(view: ContextView, need: int) -> list[str]:
    return ["no-such-message"]


def raises(view: ContextView, need: int) -> list[str]:
    raise ValueError("boom")
