"""The buggy version of ``regress_correct.py`` for the regress scenario
(issue 20): the same whole-unit policy, until the context holds more than
45 messages; then it also evicts the first message that issued tool calls,
without the rest of its unit.  Rare (long sessions only): in the default
suite about one session in ten meets a violation."""

from __future__ import annotations

from prunecheck.model.actions import Action
from prunecheck.model.policies import ContextView, builtin_policy

__all__ = ["select"]

_SAFE = builtin_policy("unit_safe")


def select(view: ContextView, need: int) -> list[str | Action]:
    assert _SAFE is not None
    out: list[str | Action] = list(_SAFE.select(view, need))
    if len(view.messages) > 45:
        victim = next((m.id for m in view.messages if m.tool_calls and m.id not in out), None)
        if victim is not None:
            out.append(victim)
    return out
