"""The policy of issue 8, point 3: it keeps a wide batch's call message and
evicts only its results.  The history it leaves is broken (calls without
results), so every invocation is rejected and re-rendered, and every retry
re-appends the batch, which the policy strips again: the context grows.
``prunecheck check`` must still answer in bounded time.
"""

from __future__ import annotations

from prunecheck.model.context import Role
from prunecheck.model.policies import ContextView

__all__ = ["select"]


def select(view: ContextView, need: int) -> list[str]:
    """Evict the closed results of the widest batch in context (keep its call)."""
    widest = max(
        (m for m in view.messages if m.tool_calls), key=lambda m: len(m.tool_calls), default=None
    )
    if widest is None:
        return []
    return [
        m.id
        for m in view.messages
        if m.role is Role.TOOL and m.closed and m.unit_id == widest.unit_id
    ]
