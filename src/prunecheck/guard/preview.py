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

For a guard told the providers its runtime sends to (``provider=``), the
preview also says whether each provider would reject the history the
proposal (and then the spill) would leave: :func:`rejections` builds that
history as the model's messages and asks each provider's rules —
:func:`prunecheck.model.provider.pairing_errors`, which answers what the
provider's validator answers for the request a runtime sends
(``validate(render(messages, provider), provider)``): the same rule
objects, verbatim texts and request locations as ``prunecheck validate``,
``check --provider``, the telemetry import and the narratives.  The guard
holds no rule of its own.  The rules are imported only for such a guard.

Cost: O(size of the proposal) for the effect, plus the front of the context
the spill reads; a summary costs O(n) (it rewrites the context anyway).
With providers named, a check that would change the context also costs
O(n) per provider (the rules read the whole request), twice for a provider
that rejects the history after (to tell a rejection the change causes
from one the history already had).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import TYPE_CHECKING

from prunecheck.model.actions import Proposal
from prunecheck.model.context import Context, Message, Role

if TYPE_CHECKING:
    from prunecheck.model.provider.rule import ProviderError

__all__ = [
    "SUMMARY_PREFIX",
    "Effect",
    "PlannedSummary",
    "effect_of",
    "messages_after",
    "provider_names",
    "rejections",
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


def messages_after(
    ctx: Context, effect: Effect, spilled: Collection[str], turn: int, clock: int
) -> list[Message]:
    """The context as the plan would leave it: ``effect`` applied, then the
    units named in ``spilled`` taken out.  O(n)."""
    return [
        m
        for unit, members in _units_after(ctx, effect, turn, clock)
        if unit not in spilled
        for m in members
    ]


def provider_names(value: object) -> tuple[str, ...]:
    """The providers ``value`` names — a name, several separated by commas,
    or a list of names, as ``check --provider`` spells them (any case) —
    in the order first named, each once; () for None.  ValueError names an
    unknown name and the known ones (the registry's,
    :data:`prunecheck.model.provider.PROVIDERS`)."""
    if value is None:
        return ()
    texts: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    if not isinstance(texts, Iterable) or isinstance(value, bytes):
        raise ValueError(f"{value!r} is not a provider name nor a list of names")
    from prunecheck.model.provider import CHECKED

    known = {p.value: p.value for p in CHECKED}
    found: dict[str, None] = {}
    for text in texts:
        if not isinstance(text, str):
            raise ValueError(f"{text!r} is not a provider name")
        for name in text.split(","):
            key = name.strip().lower()
            if key not in known:
                raise ValueError(
                    f"{name.strip()!r} is not a provider whose rules prunecheck knows "
                    f"(one of {', '.join(known)})"
                )
            found[known[key]] = None
    return tuple(found)


def rejections(
    before: Sequence[Message], after: Sequence[Message], providers: Sequence[str]
) -> tuple[ProviderError, ...]:
    """For each of ``providers`` that rejects the request sent for ``after``
    with an error the request for ``before`` did not have (the same rule,
    naming the same ids), that first new error; in ``providers`` order.

    A rejection the history already had is not the change's doing: the
    runtime's request fails with or without it, and refusing the change
    would only let the context grow.  O(n) per provider, twice for one that
    rejects ``after``.
    """
    from prunecheck.model.provider import Provider, pairing_errors  # the registry's rules

    found: list[ProviderError] = []
    sent_after = _sendable(after)
    sent_before: list[Message] | None = None
    for provider in providers:
        errors = pairing_errors(sent_after, Provider(provider))
        if not errors:
            continue
        if sent_before is None:
            sent_before = _sendable(before)
        had = {(e.rule, e.ids) for e in pairing_errors(sent_before, Provider(provider))}
        new = [e for e in errors if (e.rule, e.ids) not in had]
        if new:
            found.append(new[0])
    return tuple(found)


def _sendable(messages: Iterable[Message]) -> list[Message]:
    """The messages as the rules read them.  A tool message the runtime
    appended with ``message()`` answers a call the guard never saw: it is
    sent as the result of an unknown call (named by its own id), in its
    place, so that what follows it reads as it does in the request."""
    return [
        replace(m, call_id=m.id) if m.role is Role.TOOL and m.call_id is None else m
        for m in messages
    ]
