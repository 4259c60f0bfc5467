"""The guard's errors: one root, the loud failure past the hard ceiling,
and the spill store's faults.

Every error names the input, the rule it broke and what to do next.  An
error raised by an event method or by ``check()`` means the guard changed
nothing: its state is what it was before the call (see the package's
guarantees, :mod:`prunecheck.guard`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["GuardConfigError", "GuardError", "HardCeilingExceeded", "StoreError", "StoreFault"]


class GuardError(RuntimeError):
    """Root of the guard's errors: the runtime told the guard something
    impossible or malformed (a result for an unknown call, a message id used
    twice, a token count that is not a finite number), or the spill store
    failed.  The guard's state is unchanged."""


class GuardConfigError(GuardError, ValueError):
    """A bad argument to a guard's constructor (a budget that is not a
    positive finite number, a ceiling below the budget).  Also a
    :class:`ValueError`, as it was before it had its own type."""


class StoreFault(StrEnum):
    """What went wrong in the spill store (SQLite's primary result codes,
    grouped by what the runtime can do about them)."""

    LOCKED = "locked"  # SQLITE_BUSY / SQLITE_LOCKED past the busy timeout: retry later
    FULL = "full"  # SQLITE_FULL (disk or max_page_count): free space
    READ_ONLY = "read_only"  # SQLITE_READONLY / query_only / a read-only file
    CORRUPT = "corrupt"  # SQLITE_CORRUPT / SQLITE_NOTADB: restore or delete the file
    UNENCODABLE = "unencodable"  # a payload the codec cannot store exactly
    UNDECODABLE = "undecodable"  # stored text the codec cannot read back
    IO = "io"  # any other SQLite or OS error


class StoreError(GuardError):
    """The spill store failed; the check or event that needed it changed
    nothing (nothing was spilled, nothing left the guard's context).

    Attributes
    ----------
    fault : StoreFault
        What went wrong.
    path : str
        The store's file (or ``":memory:"``).
    """

    def __init__(self, fault: StoreFault, path: str, detail: str, hint: str = "") -> None:
        self.fault = fault
        self.path = path
        text = f"spill store {path!r}: {detail}"
        if hint:
            text += f" Hint: {hint}"
        super().__init__(text)

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_store_error, (self.fault, self.path, str(self)))


def _rebuild_store_error(fault: StoreFault, path: str, text: str) -> StoreError:
    error = StoreError.__new__(StoreError)
    error.fault, error.path = fault, path
    RuntimeError.__init__(error, text)
    return error


class HardCeilingExceeded(GuardError):
    """The context is over the hard ceiling and cannot be pruned safely.

    A budget overrun is recoverable; a structurally inconsistent context is
    silent corruption.  The guard therefore refuses to cut live state and
    says so loudly.  Block the next model invocation until the pending calls
    land (or raise the ceiling); the context is left intact.

    Attributes
    ----------
    used : int
        Tokens in the context after the guard did what it safely could.
    ceiling : int
        The hard ceiling.
    pending : tuple of str
        Calls whose result has not fully arrived.
    open : tuple of str
        Messages still streaming.
    plan : Plan
        What the guard decided at this check *before* raising (safe
        evictions and units already committed to the spill store): apply it
        to your message list as you would a returned plan.  Its
        ``rejections`` name the provider rules that made the guard refuse a
        prune or spill (``provider=``); the message names them too.
    messages : list or None
        For :class:`~.listmode.ListGuard`: the safe message list to use.
    """

    def __init__(
        self, used: int, ceiling: int, pending: tuple[str, ...], open: tuple[str, ...], plan: Plan
    ) -> None:
        self.used = used
        self.ceiling = ceiling
        self.pending = pending
        self.open = open
        self.plan = plan
        self.messages: list[object] | None = None
        live = []
        if pending:
            live.append(f"call(s) {', '.join(pending)} pending")
        if open:
            live.append(f"message(s) {', '.join(open)} still streaming")
        for error in plan.rejections:
            live.append(
                f"the prune or spill that would meet it leaves a history {error.provider} "
                f"rejects ({error.rule} at {error.path}: {error.text})"
            )
        what = "; ".join(live) or "nothing closed left to prune or spill"
        super().__init__(
            f"context holds {used} tokens, over the hard ceiling of {ceiling}, and cannot be "
            f"pruned safely: {what}. Block the next model invocation until the pending work "
            "lands, or raise the ceiling."
        )
