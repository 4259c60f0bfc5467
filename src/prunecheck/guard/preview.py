"""What a check will do, computed before it changes anything.

A check is atomic: the units it spills are committed to the store before
the guard's context changes at all, so that a store that fails leaves the
guard (and the runtime) as they were.  But which units spill depends on the
context *after* the trimmer's (grown or shrunk) proposal.  This module
computes that context's effect without applying it: the tokens it frees,
and the units the model's spill gate (:func:`prunecheck.model.gates.spill_plan`)
would take from it — the oldest whole, closed, non-pending, unprotected
units, reading from the front only as far as it must.  The core then
commits those units, and only then applies the proposal and removes them.

Cost: O(size of the proposal) for the effect, plus the front of the context
the spill reads; a summary costs O(n) (it rewrites the context anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import groupby

from prunecheck.model.actions import Proposal
from prunecheck.model.context import Context, Message, Role

__all__ = [
    "SUMMARY_PREFIX",
    "Effect",
    "PlannedSummary",
    "effect_of",
    "spill_units",
]

#: A summary's id is this prefix and the id of the first message it replaces.
SUMMARY_PREFIX = "summary:"


@dataclass(frozen=True, slots=True)
class PlannedSummary:
    """One summary the proposal will write: replaces ``ids`` (in the order
    given), placed before the unit block of ``first`` (context order)."""

    ids: tuple[str, ...]
    summary_id: str
    tokens: int
    first: str


@dataclass(frozen=True, slots=True)
class Effect:
    """The proposal's effect: tokens after it, messages it takes out,
    tokens of cleared messages, summaries it writes."""

    used: int
    gone: frozenset[str]
    cleared: dict[str, int]
    summaries: tuple[PlannedSummary, ...]


def effect_of(ctx: Context, proposal: Proposal, placeholder: int) -> Effect:
    """What applying ``proposal`` (as the core's ``_execute`` applies it:
    clears to ``placeholder`` tokens, then evictions, then summaries) would
    do.  O(proposal), and O(n) per summary."""
    used = ctx.used
    cleared: dict[str, int] = {}
    for mid in proposal.clear:
        message = ctx[mid]
        now = cleared.get(mid, message.tokens)
        left = min(now, placeholder)
        used -= now - left
        cleared[mid] = left
    gone: set[str] = set()
    for mid in proposal.evict:
        if mid in ctx and mid not in gone:
            gone.add(mid)
            used -= cleared.get(mid, ctx[mid].tokens)
    summaries: list[PlannedSummary] = []
    for group in proposal.summarize:
        ids = tuple(m for m in group.message_ids if m in ctx and m not in gone)
        if not ids:
            continue
        total = sum(cleared.get(m, ctx[m].tokens) for m in ids)
        tokens = group.tokens or max(1, total // 10)
        wanted = set(ids)
        first = next(m for m in ctx.ids() if m in wanted)
        gone.update(ids)
        used += tokens - sum(cleared.get(m, ctx[m].tokens) for m in wanted)  # removed once each
        summaries.append(PlannedSummary(ids, f"{SUMMARY_PREFIX}{ids[0]}", tokens, first))
    return Effect(used, frozenset(gone), cleared, tuple(summaries))


def spill_units(
    ctx: Context,
    effect: Effect,
    excess: int,
    is_protected: Callable[[Message], bool],
    turn: int,
    clock: int,
) -> list[tuple[str, tuple[Message, ...]]]:
    """``(unit, messages as they will be)`` the spill takes from the context
    after ``effect``: :func:`~prunecheck.model.gates.spill_plan`'s choice,
    read from a view of that context."""
    plan: list[tuple[str, tuple[Message, ...]]] = []
    freed = 0
    for unit, members in _units_after(ctx, effect, turn, clock):
        if freed >= excess:
            break
        if ctx.pending_in(unit) or any(not m.closed or is_protected(m) for m in members):
            continue
        plan.append((unit, members))
        freed += sum(m.tokens for m in members)
    return plan


def _units_after(
    ctx: Context, effect: Effect, turn: int, clock: int
) -> Iterator[tuple[str, tuple[Message, ...]]]:
    before = {s.first: s for s in effect.summaries}
    gone, cleared = effect.gone, effect.cleared
    for unit, group in groupby(ctx, key=lambda m: m.unit_id):
        block = list(group)
        for message in block:
            summary = before.get(message.id)
            if summary is not None:
                yield summary.summary_id, (_summary(summary, turn, clock),)
        members = tuple(
            m if m.id not in cleared else _cleared(m, cleared[m.id])
            for m in block
            if m.id not in gone
        )
        if members:
            yield unit, members


def _summary(summary: PlannedSummary, turn: int, clock: int) -> Message:
    return Message(
        summary.summary_id,
        Role.USER,
        summary.tokens,
        turn,
        float(clock),
        unit_id=summary.summary_id,
        summary_of=summary.ids,
    )


def _cleared(message: Message, tokens: int) -> Message:
    return replace(message, tokens=tokens, cleared=True)
