"""Policies whose only bug needs a realistic size to show (issue 8, point 2).

Each behaves exactly like the built-in ``unit_safe`` (whole, closed,
non-pending units, oldest first) until its condition holds; then it also
evicts the first message that issued tool calls, without the rest of its
unit: an invalid prune (a partial or in-flight unit).  ``prunecheck check``
with no flags must find every one of them.

* ``wide_batch``: a batch of 4 or more calls is in context.
* ``long_context``: more than 16 messages are in context.
* ``giant_output``: one message is larger than half the budget.
* ``concurrent_streams``: two tool results are streaming at once.
* ``late_turn``: the session is at turn 6 or later.
"""

from __future__ import annotations

from collections.abc import Callable

from prunecheck.model.actions import Action
from prunecheck.model.context import Role
from prunecheck.model.policies import ContextView, Policy, builtin_policy

__all__ = ["concurrent_streams", "giant_output", "late_turn", "long_context", "wide_batch"]


def _unit_safe() -> Policy:
    policy = builtin_policy("unit_safe")
    assert policy is not None
    return policy


_SAFE = _unit_safe()

Select = Callable[[ContextView, int], list[str | Action]]


def _buggy_when(condition: Callable[[ContextView], bool]) -> Select:
    def select(view: ContextView, need: int) -> list[str | Action]:
        out = list(_SAFE.select(view, need))
        if condition(view):
            victim = next((m.id for m in view.messages if m.tool_calls), None)
            if victim is not None and victim not in out:
                out.append(victim)
        return out

    return select


wide_batch = _buggy_when(lambda view: any(len(m.tool_calls) >= 4 for m in view.messages))
long_context = _buggy_when(lambda view: len(view.messages) > 16)
giant_output = _buggy_when(lambda view: any(m.tokens > view.budget // 2 for m in view.messages))
concurrent_streams = _buggy_when(
    lambda view: sum(1 for m in view.messages if m.role is Role.TOOL and not m.closed) >= 2
)
late_turn = _buggy_when(lambda view: view.turn >= 6)
