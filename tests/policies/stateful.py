"""Policies that keep state between calls (issue 36): the cage must ask them
every question their runtime asks, never answer from memory.

- ``alternating``: a module-level counter; it frees the oldest closed unit
  on every second call only.
- ``Drifting``: the same with the counter on the instance.
- ``Hidden``: the counter in an environment variable, where the cage's
  state snapshot does not look (the memo's answers, asked again and
  compared, catch it).
- ``LateBug``: the built-in ``unit_safe`` for its first calls, then a bug
  (it also evicts units with a pending call); asked fewer times, it turns
  buggy later, so its verdict depends on being asked exactly.
"""

from __future__ import annotations

import os

from prunecheck.model.actions import Action
from prunecheck.model.context import Role
from prunecheck.model.policies import ContextView, builtin_policy

__all__ = ["Drifting", "Hidden", "LateBug", "alternating"]

_CALLS = 0


def _oldest(view: ContextView) -> list[str]:
    for m in view.messages:
        if m.role is not Role.SYSTEM and m.closed:
            return [m.id]
    return []


def alternating(view: ContextView, need: int) -> list[str]:
    """The oldest closed message on even calls, nothing on odd ones."""
    global _CALLS
    _CALLS += 1
    return _oldest(view) if _CALLS % 2 == 0 else []


class Drifting:
    """``alternating`` with its counter on the instance."""

    name = "drifting"

    def __init__(self) -> None:
        self.calls = 0

    def select(self, view: ContextView, need: int) -> list[str]:
        self.calls += 1
        return _oldest(view) if self.calls % 2 == 0 else []


class Hidden:
    """``alternating`` with its counter where no snapshot looks."""

    name = "hidden"

    def select(self, view: ContextView, need: int) -> list[str]:
        calls = int(os.environ.get("PRUNECHECK_TEST_HIDDEN_CALLS", "0")) + 1
        os.environ["PRUNECHECK_TEST_HIDDEN_CALLS"] = str(calls)
        return _oldest(view) if calls % 2 == 0 else []


class LateBug:
    """Safe for its first ``SAFE_CALLS`` calls, then it ignores pending calls."""

    name = "late_bug"
    SAFE_CALLS = 40

    def __init__(self) -> None:
        self.calls = 0
        self.safe = builtin_policy("unit_safe")

    def select(self, view: ContextView, need: int) -> list[str | Action]:
        self.calls += 1
        assert self.safe is not None
        if self.calls <= self.SAFE_CALLS:
            return list(self.safe.select(view, need))
        out: list[str | Action] = []
        freed = 0
        for m in view.messages:
            if freed >= need:
                break
            if m.role is not Role.SYSTEM and m.closed:
                out.append(m.id)
                freed += m.tokens
        return out
