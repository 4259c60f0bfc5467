"""The commit-boundary predicate, index form: fast, used by every gate.

A prune set is valid iff it is a union of whole, closed, non-pending units:

* no unit is cut (all-or-nothing per unit);
* no message in it is open (still streaming);
* no unit in it has a pending call.

:func:`check_prune` costs O(size of the prune set + size of the units it
touches), independent of the size of the context.  Its spec twin,
:func:`prunecheck.model.units.check_prune_spec`, is held equal to it by the
property tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .context import Context

__all__ = [
    "Violation",
    "ViolationReason",
    "check_clear",
    "check_prune",
    "is_commit_boundary",
]


class ViolationReason(StrEnum):
    SPLIT_UNIT = "split_unit"
    OPEN_MESSAGE = "open_message"
    PENDING_UNIT = "pending_unit"


@dataclass(frozen=True, slots=True)
class Violation:
    """One way a prune set breaks the invariant, on one unit."""

    reason: ViolationReason
    unit_id: str
    ids: tuple[str, ...]

    def describe(self) -> str:
        ids = ", ".join(self.ids)
        if self.reason is ViolationReason.SPLIT_UNIT:
            return f"splits unit {self.unit_id}: keeps {ids}"
        if self.reason is ViolationReason.OPEN_MESSAGE:
            return f"touches open (streaming) message {ids} of unit {self.unit_id}"
        return f"touches unit {self.unit_id} while call {ids} is pending"


def check_prune(ctx: Context, prune_ids: Iterable[str]) -> tuple[Violation, ...]:
    """Violations of removing ``prune_ids`` from ``ctx`` (empty: valid).

    Ids not in the context are ignored (policies' ids are resolved before).
    Violations come in a fixed order: by unit in order of first mention,
    then split, open, pending.

    Examples
    --------
    >>> from prunecheck.model.context import Message, Role
    >>> ctx = Context()
    >>> ctx.append(Message("m1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1", "c2"), unit_id="m1"))
    >>> ctx.append(Message("m2", Role.TOOL, 9, 1, 1.0, call_id="c1", unit_id="m1"))
    >>> ctx.mark_pending("m1", "c2")
    >>> [v.reason.value for v in check_prune(ctx, ["m1"])]
    ['split_unit', 'pending_unit']
    """
    by_unit: dict[str, list[str]] = {}
    for mid in prune_ids:
        message = ctx.get(mid)
        if message is not None:
            by_unit.setdefault(message.unit_id, []).append(mid)
    out: list[Violation] = []
    for unit, chosen in by_unit.items():
        members = ctx.members(unit)
        if len(set(chosen)) < len(members):
            picked = set(chosen)
            out.append(
                Violation(
                    ViolationReason.SPLIT_UNIT, unit, tuple(m for m in members if m not in picked)
                )
            )
        opened = tuple(m for m in chosen if not ctx[m].closed)
        if opened:
            out.append(Violation(ViolationReason.OPEN_MESSAGE, unit, opened))
        pending = ctx.pending_in(unit)
        if pending:
            out.append(Violation(ViolationReason.PENDING_UNIT, unit, tuple(sorted(pending))))
    return tuple(out)


def check_clear(ctx: Context, message_id: str) -> tuple[Violation, ...]:
    """Violations of clearing one message's content: it must be closed and
    its unit must have no pending call (a unit need not be cleared whole:
    clearing keeps the message and its call/result pairing)."""
    message = ctx.get(message_id)
    if message is None:
        return ()
    out = []
    if not message.closed:
        out.append(Violation(ViolationReason.OPEN_MESSAGE, message.unit_id, (message_id,)))
    pending = ctx.pending_in(message.unit_id)
    if pending:
        out.append(Violation(ViolationReason.PENDING_UNIT, message.unit_id, tuple(sorted(pending))))
    return tuple(out)


def is_commit_boundary(ctx: Context) -> bool:
    """True iff every message is closed and no call is pending.  O(1)."""
    return not ctx.has_open() and not ctx.has_pending()
