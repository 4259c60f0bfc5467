"""Gates: what stands between a policy's proposal and the context.

* ``none`` applies the proposal as it is (the runtime of the incidents);
* ``reference`` is the domain document's check: a violating prune is
  refused whole and counted;
* ``commit`` is the document's decision procedure: defer while a call is
  pending or when the budget cannot be met without touching an open
  message; grow a cut unit to the whole unit (or shrink it away when it is
  protected, open or pending); fail loudly past the hard ceiling;
* ``spill`` is ``commit`` plus spilling the oldest closed units to an
  external store when deferral would pass the hard ceiling, re-injecting
  them when a later step needs them.

This module decides; :mod:`.budget` applies what it decided
(:func:`~.budget.apply_proposal`, :func:`~.budget.spill`), both in the
model runtime and, through the same :func:`decide`, in
:class:`prunecheck.guard.CommitGuard`.  Every function here is pure
and costs O(size of the proposal + units it touches), except
:func:`spill_plan`, which reads the context from the front only as far as it
must.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from itertools import groupby

from .actions import Proposal, Summarize
from .boundary import Violation, check_clear, check_prune
from .context import Context, Message

__all__ = [
    "Decision",
    "Gate",
    "decide",
    "spill_plan",
]


class Gate(StrEnum):
    NONE = "none"
    REFERENCE = "reference"
    COMMIT = "commit"
    SPILL = "spill"

    @property
    def defers(self) -> bool:
        """Whether this gate follows the decision procedure (defer, grow/shrink)."""
        return self in (Gate.COMMIT, Gate.SPILL)


@dataclass(frozen=True, slots=True)
class Decision:
    """What the gate lets through.

    Attributes
    ----------
    apply: the proposal to apply (possibly grown, shrunk or empty).
    violations: violations of the proposal *as applied* (only ``none``
        applies violating proposals).
    refused: violations for which the proposal was refused (``reference``).
    grown: units grown to whole; shrunk: units dropped from the proposal.
    """

    apply: Proposal
    violations: tuple[Violation, ...] = ()
    refused: tuple[Violation, ...] = ()
    grown: tuple[str, ...] = ()
    shrunk: tuple[str, ...] = ()


def _violations(ctx: Context, proposal: Proposal) -> tuple[Violation, ...]:
    found = list(check_prune(ctx, proposal.removed()))
    for mid in proposal.clear:
        found.extend(check_clear(ctx, mid))
    return tuple(found)


def decide(
    gate: Gate, ctx: Context, proposal: Proposal, is_protected: Callable[[Message], bool]
) -> Decision:
    """Decide what of ``proposal`` reaches the context under ``gate``.

    The caller handles the gate's *when* (``commit`` and ``spill`` defer
    while any call is pending, before asking the policy); this is the *what*.
    """
    if gate is Gate.NONE:
        return Decision(proposal, violations=_violations(ctx, proposal))
    if gate is Gate.REFERENCE:
        found = _violations(ctx, proposal)
        return Decision(Proposal(), refused=found) if found else Decision(proposal)
    return _grow_or_shrink(ctx, proposal, is_protected)


def _grow_or_shrink(
    ctx: Context, proposal: Proposal, is_protected: Callable[[Message], bool]
) -> Decision:
    grown: dict[str, None] = {}
    shrunk: dict[str, None] = {}

    def whole(unit: str) -> tuple[str, ...] | None:
        """The unit's members if it may be removed whole, else None."""
        members = ctx.members(unit)
        if ctx.pending_in(unit) or any(not ctx[m].closed or is_protected(ctx[m]) for m in members):
            return None
        return members

    def close_over(ids: tuple[str, ...]) -> tuple[str, ...]:
        chosen = set(ids)
        out: dict[str, None] = {}
        for mid in ids:
            unit = ctx[mid].unit_id
            if unit in shrunk:
                continue
            members = whole(unit)
            if members is None:
                shrunk[unit] = None
                continue
            if not chosen.issuperset(members):
                grown[unit] = None
            out.update(dict.fromkeys(members))
        return tuple(m for m in out if ctx.get(m) is not None and ctx[m].unit_id not in shrunk)

    evict = close_over(proposal.evict)
    taken = set(evict)
    groups = []
    for group in proposal.summarize:
        ids = tuple(m for m in close_over(group.message_ids) if m not in taken)
        taken.update(ids)
        if ids:
            groups.append(Summarize(ids, group.tokens, group.text))
    clear = tuple(m for m in proposal.clear if m not in taken and not check_clear(ctx, m))
    shrunk.update(
        (ctx[m].unit_id, None) for m in proposal.clear if m not in taken and check_clear(ctx, m)
    )
    return Decision(
        Proposal(
            evict=evict,
            clear=clear,
            summarize=tuple(groups),
            clear_to=tuple(p for p in proposal.clear_to if p[0] in clear),
        ),
        grown=tuple(grown),
        shrunk=tuple(shrunk),
    )


def spill_plan(
    ctx: Context, excess: int, is_protected: Callable[[Message], bool]
) -> list[tuple[str, ...]]:
    """The oldest whole, closed, non-pending, unprotected units whose tokens
    add up to at least ``excess`` (fewer if there are not enough)."""
    plan: list[tuple[str, ...]] = []
    freed = 0
    groups: Iterator[tuple[str, Iterator[Message]]] = groupby(ctx, key=lambda m: m.unit_id)
    for unit, group in groups:
        if freed >= excess:
            break
        members = list(group)
        if ctx.pending_in(unit) or any(not m.closed or is_protected(m) for m in members):
            continue
        plan.append(tuple(m.id for m in members))
        freed += sum(m.tokens for m in members)
    return plan
