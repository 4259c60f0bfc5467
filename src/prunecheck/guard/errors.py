"""The guard's errors: one root, and the loud failure past the hard ceiling."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["GuardError", "HardCeilingExceeded"]


class GuardError(RuntimeError):
    """Root of the guard's errors: the runtime told the guard something
    impossible (a result for an unknown call, a message id used twice)."""


class HardCeilingExceeded(GuardError):
    """The context is over the hard ceiling and cannot be pruned safely.

    A budget overrun is recoverable; a structurally inconsistent context is
    silent corruption.  The guard therefore refuses to cut live state and
    says so loudly.  Block the next model invocation until the pending calls
    land (or raise the ceiling); the context is left intact.

    Attributes
    ----------
    used: tokens in the context after the guard did what it safely could.
    ceiling: the hard ceiling.
    pending: calls whose result has not fully arrived.
    open: messages still streaming.
    plan: what the guard decided at this check *before* raising (safe
        evictions and units already committed to the spill store): apply it
        to your message list as you would a returned plan.
    """

    def __init__(
        self, used: int, ceiling: int, pending: tuple[str, ...], open: tuple[str, ...], plan: Plan
    ) -> None:
        self.used = used
        self.ceiling = ceiling
        self.pending = pending
        self.open = open
        self.plan = plan
        #: For :class:`~.listmode.ListGuard`: the safe message list to use.
        self.messages: list[object] | None = None
        live = []
        if pending:
            live.append(f"call(s) {', '.join(pending)} pending")
        if open:
            live.append(f"message(s) {', '.join(open)} still streaming")
        what = "; ".join(live) or "nothing closed left to prune or spill"
        super().__init__(
            f"context holds {used} tokens, over the hard ceiling of {ceiling}, and cannot be "
            f"pruned safely: {what}. Block the next model invocation until the pending work "
            "lands, or raise the ceiling."
        )
