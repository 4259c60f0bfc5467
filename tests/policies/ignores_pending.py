"""The policy of issue 20, point 2: it keeps the current turn (everything
from the latest user message on) and evicts whole closed units of earlier
turns, oldest first, until the need is met — ignoring pending calls.  A
batch's call message is closed while its calls still run, so a batch of
an earlier turn goes with a call pending, and its result lands as an orphan.

With one user message (the opening) every message is in the current turn
and the policy never evicts anything: the bug shows only when a user
message arrives while a batch is pending, with sizes that push the context
over its budget.  ``prunecheck explore --depth 8`` must find it in its
default shape.
"""

from __future__ import annotations

from itertools import groupby

from prunecheck.model.context import Role
from prunecheck.model.policies import ContextView

__all__ = ["select"]


def select(view: ContextView, need: int) -> list[str]:
    """Whole closed units before the latest user message, oldest first,
    until ``need`` tokens are freed (pending calls ignored: the bug)."""
    messages = list(view.messages)
    last_user = max((i for i, m in enumerate(messages) if m.role is Role.USER), default=0)
    out: list[str] = []
    freed = 0
    for _, group in groupby(messages[:last_user], key=lambda m: m.unit_id):
        if freed >= need:
            break
        members = list(group)
        if any(m.role is Role.SYSTEM or not m.closed for m in members):
            continue
        out.extend(m.id for m in members)
        freed += sum(m.tokens for m in members)
    return out
