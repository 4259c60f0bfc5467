"""A correct policy for the regress scenario (issue 20): whole, closed,
non-pending units, oldest first — the built-in ``unit_safe``.
``regress_buggy.py`` is the buggy version of this same file."""

from __future__ import annotations

from prunecheck.model.actions import Action
from prunecheck.model.policies import ContextView, builtin_policy

__all__ = ["select"]

_SAFE = builtin_policy("unit_safe")


def select(view: ContextView, need: int) -> list[str | Action]:
    assert _SAFE is not None
    return list(_SAFE.select(view, need))
