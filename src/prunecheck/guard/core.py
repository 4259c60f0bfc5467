"""``CommitGuard``: the domain document's decision procedure, runtime side.

Feed it the runtime's events (message appended, calls issued, result chunk,
result complete, stream opened / chunk / closed); at each budget check call
:meth:`CommitGuard.check` and apply the :class:`~.plan.Plan` it returns to
your message list.  At every check it does what the model's ``spill`` gate
does (:mod:`prunecheck.model.gates`, the reference semantics; the ``commit``
gate when no store is given):

1. under budget: nothing;
2. a call pending: **defer** (do not ask the trimmer);
3. otherwise ask the trimmer and **grow or shrink** its proposal to whole,
   closed, non-pending units (never the system prompt or the latest user
   message); if the budget still cannot be met without touching a message
   that is streaming: **defer**;
4. over the hard ceiling: **spill** the oldest closed units to the store
   (committed before anything changes; see :mod:`.preview`);
5. still over the hard ceiling: **fail loudly** —
   :class:`~.errors.HardCeilingExceeded`, carrying the plan.

Told the providers the runtime sends to (``provider="gemini"``, several
separated by commas or as a list), the guard previews each change before
making it: if the history the proposal (step 3) or the spill (step 4)
would leave is rejected by a named provider that accepted the history
before, the guard refuses that change — the check defers
(:attr:`~.plan.Deferral.PROVIDER_REJECTION`) and the plan's ``rejections``
name each provider's rule, verbatim text and request location, from the
same rule objects its validator uses (:mod:`.preview`).  A refused spill
leaves the context over the hard ceiling: step 5 then fails loudly and
names the rule.

A new call that names a resource of a spilled unit brings the unit back
(:meth:`CommitGuard.calls` returns it, to put before the call message).

Ids: message ids are yours (any non-empty strings, unique while in the
context).  A result is tracked under the ``mid`` you give its first
``result_chunk`` / ``result_complete`` — default ``"result:" + call_id`` —
and plans name it by that id.  A summary the trimmer writes is tracked as
``"summary:" + the first id it replaces`` (``Plan.summarize``).

Cost per check: O(size of the proposal + units it touches) for the guard's
own work — the index answers pending / open / unit questions in O(1) — plus
the trimmer's own cost; a spill reads the context from the front only as far
as it must.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable
from copy import deepcopy
from dataclasses import dataclass, replace
from os import PathLike
from typing import TYPE_CHECKING

from prunecheck.model.actions import PLACEHOLDER_TOKENS, Proposal
from prunecheck.model.context import Message, Role
from prunecheck.model.gates import Gate, decide

from .errors import GuardConfigError, GuardError, HardCeilingExceeded, StoreError
from .plan import Deferral, Plan, Restored, SummaryGroup
from .preview import Effect, effect_of, messages_after, provider_names, rejections, spill_units
from .store import SpilledMessage, SpilledUnit, SpillStore
from .tracker import Tracker, check_id
from .trimmers import Trimmer, TrimView, as_trimmer

if TYPE_CHECKING:
    from prunecheck.model.provider.rule import ProviderError

__all__ = ["CommitGuard", "GuardStats"]


@dataclass(slots=True)
class GuardStats:
    """Counters: what the guard did so far (``grown`` / ``shrunk``: units it
    grew to whole in, or dropped from, the trimmer's proposals; ``lost``:
    units the store no longer held when a call named them;
    ``store_retries``: deletes of restored units retried after a store
    fault; ``refused``: proposals and spills refused because a provider the
    guard was told of would reject the history they leave)."""

    checks: int = 0
    deferred: int = 0
    prunes: int = 0
    evicted: int = 0
    grown: int = 0
    shrunk: int = 0
    spills: int = 0
    reinjections: int = 0
    overruns: int = 0
    lost: int = 0
    store_retries: int = 0
    refused: int = 0


def _positive(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GuardConfigError(f"{what} ({value!r}) must be a positive token count")
    if not math.isfinite(value) or value <= 0:
        raise GuardConfigError(f"{what} ({value!r}) must be a positive, finite token count")
    return int(value)


class CommitGuard:
    """Wraps a trimmer so that it prunes only at commit boundaries.

    Parameters
    ----------
    trimmer : object
        A native policy (``select(view, need)``), a list function (give
        ``format``), or any :class:`~.trimmers.Trimmer`.
    budget : int
        The working budget in tokens: a check above it prunes.
    hard_ceiling : int, optional
        Where deferral must fail loudly (default: 1.25 × budget).
    store : SpillStore or str or PathLike, optional
        A :class:`~.store.SpillStore`, a path to an SQLite file, or
        ``":memory:"``; None: no spilling (the ``commit`` gate).
    format : str, optional
        For a list function: what its messages are (``"openai"``,
        ``"anthropic"``, ``"langchain"``, ``"autogen"``).
    conversation : str, optional
        The conversation this guard's units belong to in the store.  Default:
        the store's ``session`` if you gave one, else a fresh unique id.
        Give the same id again (one guard at a time) to resume a
        conversation after a restart; never share one between live guards.
    provider : str or list of str, optional
        The provider(s) your runtime sends the history to, as ``check
        --provider`` names them (``"openai"``, ``"openai-responses"``,
        ``"anthropic"``, ``"gemini"``, ``"bedrock"``, ``"mistral"``,
        ``"deepseek"``; several separated by commas, or a list).  The guard
        then refuses a prune or spill that would leave a history one of
        them rejects (see the module's decision procedure).  Default: none.

    Examples
    --------
    >>> from prunecheck.model.policies import builtin_policy
    >>> guard = CommitGuard(builtin_policy("lowest_salience"), budget=100)
    >>> guard.message("m1", "user", 60)
    >>> guard.calls("m2", ["c1"], 10, resources=["a.txt"])
    ()
    >>> guard.result_chunk("c1", 50)        # streaming: the unit is live
    'result:c1'
    >>> guard.check().deferred              # a call is pending: defer, never cut
    <Deferral.PENDING_CALL: 'pending_call'>
    """

    def __init__(
        self,
        trimmer: object,
        *,
        budget: int,
        hard_ceiling: int | None = None,
        store: SpillStore | str | PathLike[str] | None = None,
        format: str | None = None,
        conversation: str | None = None,
        provider: str | Iterable[str] | None = None,
    ) -> None:
        budget = _positive(budget, "budget")
        ceiling = (
            _positive(hard_ceiling, "hard_ceiling") if hard_ceiling is not None else budget * 5 // 4
        )
        if ceiling < budget:
            raise GuardConfigError(
                f"hard_ceiling ({ceiling}) must be at least the budget ({budget})"
            )
        self._format = format
        self.providers = provider  # the setter checks the names
        self.trimmer = trimmer  # the setter wraps it
        self.budget = budget
        self.hard_ceiling = ceiling
        self.store = SpillStore(store) if isinstance(store, str | PathLike) else store
        if conversation is not None:
            self.conversation = check_id(conversation, "conversation")
        elif self.store is not None and self.store.named:
            self.conversation = self.store.session
        else:
            self.conversation = uuid.uuid4().hex
        self.stats = GuardStats()
        self.tracker = Tracker()
        self._spilled: dict[str, frozenset[str]] = (
            {u.unit: u.resources for u in self.store.units(self.conversation)}
            if self.store is not None
            else {}
        )
        self._restored: list[str] = []

    # ------------------------------------------------------------------ events
    def message(self, mid: str, role: str, tokens: float, payload: object = None) -> None:
        """A whole message was appended (system, user, assistant text, or a tool
        result you do not stream)."""
        self._confirm()
        self.tracker.message(mid, role, tokens, payload)

    def calls(
        self,
        mid: str,
        call_ids: Iterable[str],
        tokens: float,
        payload: object = None,
        *,
        resources: Iterable[str] = (),
        reinject: bool = True,
    ) -> tuple[Restored, ...]:
        """The model issued calls (a parallel batch) in message ``mid``.

        ``call_ids`` and ``resources`` are lists of strings (file paths,
        URLs …).  Returns the spilled units that name one of ``resources``:
        put their payloads back, in order, *before* this message.  They leave
        the store at the guard's next call, once back in your list.
        ``reinject=False`` records the resources without bringing units back.
        """
        return self._calls(mid, call_ids, tokens, payload, resources, reinject, frozenset())

    def result_chunk(
        self, call_id: str, tokens: float, mid: str | None = None, payload: object = None
    ) -> str:
        """A chunk of a call's result arrived (the result stays open).
        Returns the id the guard tracks the result message under: ``mid`` if
        you gave one with the first chunk, else ``"result:" + call_id``."""
        self._confirm()
        return self.tracker.result_chunk(call_id, tokens, mid, payload)

    def result_complete(
        self, call_id: str, tokens: float = 0, mid: str | None = None, payload: object = None
    ) -> None:
        """A call's result is complete (a whole result: one call, with its
        tokens; ``mid`` as for :meth:`result_chunk`)."""
        self._confirm()
        self.tracker.result_complete(call_id, tokens, mid, payload)

    def stream_opened(self, mid: str, role: str, tokens: float = 0, payload: object = None) -> None:
        """A streamed message (assistant text) was opened."""
        self._confirm()
        self.tracker.message(mid, role, tokens, payload, closed=False)

    def stream_chunk(self, mid: str, tokens: float) -> None:
        self._confirm()
        self.tracker.stream_chunk(mid, tokens)

    def stream_closed(self, mid: str, tokens: float = 0) -> None:
        self._confirm()
        self.tracker.stream_chunk(mid, tokens, last=True)

    def removed(self, ids: Iterable[str]) -> None:
        """Messages your runtime removed on its own (not by a plan); unknown
        ids are ignored.  Calls of a removed batch stop being pending."""
        if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
            raise GuardError(f"removed() takes a list of message ids, got {ids!r}")
        wanted = [check_id(m, "a removed message id") for m in ids]
        self._confirm()
        self.tracker.removed(wanted)

    def attach(self, mid: str, payload: object) -> None:
        """The runtime's message object for a tracked id (e.g. a summary you wrote)."""
        if mid not in self.tracker.ctx:
            raise GuardError(f"message {mid!r} is not in the context")
        self.tracker.payloads[mid] = payload

    # ------------------------------------------------------------------- reads
    @property
    def trimmer(self) -> Trimmer:
        """The trimmer the guard asks at each check, as a
        :class:`~.trimmers.Trimmer`.  Assign a new one at any time (a native
        policy, a list function, anything with ``propose``: read as the
        constructor reads ``trimmer``, with the guard's ``format``); the next
        check asks it."""
        return self._trimmer

    @trimmer.setter
    def trimmer(self, trimmer: object) -> None:
        self._trimmer = as_trimmer(trimmer, self._format)

    @property
    def providers(self) -> tuple[str, ...]:
        """The providers whose rules the guard's preview asks, as named
        (``provider=``).  Assign new ones at any time (a name, names
        separated by commas, a list, or None); the next check asks them."""
        return self._providers

    @providers.setter
    def providers(self, provider: str | Iterable[str] | None) -> None:
        try:
            self._providers = provider_names(provider)
        except ValueError as exc:
            raise GuardConfigError(
                f"provider={provider!r}: {exc}. Hint: name the provider(s) your runtime "
                'sends to, separated by commas (e.g. provider="bedrock,gemini"), or None.'
            ) from None

    @property
    def used(self) -> int:
        return self.tracker.ctx.used

    @property
    def pending(self) -> tuple[str, ...]:
        return tuple(self.tracker.pending)

    @property
    def spilled(self) -> tuple[str, ...]:
        """Units in the spill store, oldest first."""
        return tuple(self._spilled)

    def copy(self, remap: Callable[[object], object] | None = None) -> CommitGuard:
        """An independent copy (test drivers branch runtimes); an in-memory
        store is copied, a store on disk cannot be.  ``remap`` maps each
        payload to its copy.  O(n)."""
        twin = object.__new__(CommitGuard)
        twin._format, twin._trimmer = self._format, self._trimmer
        twin._providers = self._providers
        twin.budget, twin.hard_ceiling = self.budget, self.hard_ceiling
        twin.store = deepcopy(self.store) if self.store is not None else None
        twin.conversation = self.conversation
        twin.stats = replace(self.stats)
        twin.tracker = self.tracker.copy(remap)
        twin._spilled, twin._restored = dict(self._spilled), list(self._restored)
        return twin

    # ------------------------------------------------------------------- check
    def check(self) -> Plan:
        """One budget check: the decision procedure.  Apply the plan returned
        (or carried by :class:`HardCeilingExceeded`) to your message list.

        Atomic: if it raises anything but :class:`HardCeilingExceeded` (a
        :class:`~.errors.StoreError`, the trimmer's error), nothing changed.
        """
        self._confirm()
        t, ctx, stats = self.tracker, self.tracker.ctx, self.stats
        if ctx.used <= self.budget:
            stats.checks += 1
            return Plan(used=ctx.used)
        deferred: Deferral | None = None
        applied = Proposal()
        grown: tuple[str, ...] = ()
        shrunk: tuple[str, ...] = ()
        if t.pending:
            deferred = Deferral.PENDING_CALL
        else:
            proposal = self.trimmer.propose(TrimView(t, self.budget), ctx.used - self.budget)
            decision = decide(Gate.COMMIT, ctx, proposal, t.is_protected)
            applied, grown, shrunk = decision.apply, decision.grown, decision.shrunk
        spill: list[tuple[str, tuple[Message, ...]]] = []
        refused: tuple[ProviderError, ...] = ()
        refusals = 0  # the proposal and the spill, each refused or not
        effect = None  # what the plan will leave, before anything changes
        if not applied.is_empty() and (self.store is not None or self._providers):
            effect = effect_of(ctx, applied, PLACEHOLDER_TOKENS)
        if effect is not None and self._providers:
            refused = self._rejections(effect, ())
            if refused:  # a named provider would reject it: the proposal is not applied
                applied, effect, grown, shrunk = Proposal(), None, (), ()
                deferred, refusals = Deferral.PROVIDER_REJECTION, 1
        if self.store is not None:
            used = effect.used if effect is not None else ctx.used
            if used > self.hard_ceiling:
                spill = self._choose_spill(effect, used)
                spilling = (
                    self._rejections(effect, {u for u, _ in spill})
                    if spill and self._providers
                    else ()
                )
                if spilling:  # refused too: the ceiling check below fails loudly
                    refused, spill, refusals = (*refused, *spilling), [], refusals + 1
                self._commit_spill(spill)  # may raise: nothing changed yet
        # ---- from here on nothing can fail: apply the plan
        stats.checks += 1
        stats.grown += len(grown)
        stats.shrunk += len(shrunk)
        stats.refused += refusals
        summaries = self._execute(applied) if not applied.is_empty() else ()
        if deferred is None and ctx.used > self.budget and ctx.has_open():
            deferred = Deferral.OPEN_MESSAGE
        if deferred is not None:
            stats.deferred += 1
        spilled: list[str] = []
        for unit, members in spill:
            ids = [m.id for m in members]
            t.removed(ids)
            self._spilled[unit] = t.resources.get(unit, frozenset())
            stats.spills += 1
            spilled.extend(ids)
        if spill:  # its transaction deleted the restored units owed (or re-spilled them)
            self._restored = []
        plan = Plan(
            applied.evict,
            applied.clear,
            summaries,
            tuple(spilled),
            deferred,
            grown,
            shrunk,
            ctx.used,
            refused,
        )
        if ctx.used > self.hard_ceiling:
            stats.overruns += 1
            raise HardCeilingExceeded(
                ctx.used, self.hard_ceiling, tuple(t.pending), ctx.open_ids(), plan
            )
        return plan

    # ----------------------------------------------------------------- helpers
    def _rejections(
        self, effect: Effect | None, spilled: set[str] | tuple[()]
    ) -> tuple[ProviderError, ...]:
        """What the named providers would reject in the context the plan
        would leave (``effect`` applied, then ``spilled`` units taken out)
        that they accept now.  Nothing changes here."""
        t, ctx = self.tracker, self.tracker.ctx
        view = effect if effect is not None else Effect(ctx.used, frozenset(), {}, ())
        after = messages_after(ctx, view, spilled, t.turn, t.clock)
        return rejections(list(ctx), after, self._providers)

    def _choose_spill(
        self, effect: Effect | None, used: int
    ) -> list[tuple[str, tuple[Message, ...]]]:
        """The units to spill from the context as the plan will leave it."""
        t, ctx = self.tracker, self.tracker.ctx
        view = effect if effect is not None else Effect(ctx.used, frozenset(), {}, ())
        return spill_units(ctx, view, used - self.budget, t.is_protected, t.turn, t.clock)

    def _commit_spill(self, chosen: list[tuple[str, tuple[Message, ...]]]) -> None:
        """Commit the ``chosen`` units (one transaction, with the deletes of
        restored units still owed).  Nothing in the guard changes here."""
        assert self.store is not None
        t = self.tracker
        if not chosen:
            return
        units = [
            SpilledUnit(
                unit,
                t.resources.get(unit, frozenset()),
                tuple(
                    SpilledMessage(
                        m.id,
                        m.role.value,
                        m.tokens,
                        t.payloads.get(m.id),
                        m.call_id,
                        m.tool_calls,
                        m.turn,
                        m.created_at,
                    )
                    for m in members
                ),
            )
            for unit, members in chosen
        ]
        going = {unit for unit, _ in chosen}
        owed = [u for u in self._restored if u not in going]
        self.store.put_many(units, self.conversation, delete=owed)  # committed first …
        # … then, in check(), they leave

    def _execute(self, proposal: Proposal) -> tuple[SummaryGroup, ...]:
        t, ctx, stats = self.tracker, self.tracker.ctx, self.stats
        stats.prunes += 1
        for mid in proposal.clear:
            message = ctx[mid]
            ctx.update(
                replace(message, tokens=min(message.tokens, PLACEHOLDER_TOKENS), cleared=True)
            )
        stats.evicted += len(t.removed(list(proposal.evict)))
        groups = []
        for group in proposal.summarize:
            ids = tuple(m for m in group.message_ids if m in ctx)
            if not ids:
                continue
            total = sum(ctx[m].tokens for m in ids)
            sid = f"summary:{ids[0]}"
            tokens = group.tokens or max(1, total // 10)
            summary = Message(
                sid,
                Role.USER,
                tokens,
                t.turn,
                float(t.clock),
                unit_id=sid,
                summary_of=ids,
                text=group.text,
            )
            for message in ctx.summarize(ids, summary):
                t.payloads.pop(message.id, None)
            groups.append(SummaryGroup(ids, sid, tokens, group.text))
        return tuple(groups)

    def _calls(
        self,
        mid: str,
        call_ids: Iterable[str],
        tokens: float,
        payload: object,
        resources: Iterable[str],
        reinject: bool,
        exclude: frozenset[str],
    ) -> tuple[Restored, ...]:
        t = self.tracker
        mid, ids, count, wanted = t.check_calls(mid, call_ids, tokens, resources)
        self._confirm()
        matched = (
            [
                u
                for u, res in self._spilled.items()
                if u not in exclude and not res.isdisjoint(wanted)
            ]
            if reinject and wanted and self._spilled
            else []
        )
        restored: tuple[Restored, ...] = ()
        if matched:
            restored = self._reinject(matched, mid, ids)  # may raise: nothing changed
        t.add_calls(mid, ids, count, payload, wanted)
        return restored

    def _reinject(self, matched: list[str], mid: str, ids: tuple[str, ...]) -> tuple[Restored, ...]:
        """Read the matched units, check they fit, then put them back."""
        assert self.store is not None
        t = self.tracker
        stored = {u.unit: u for u in self.store.take_many(matched, self.conversation)}
        taken: set[str] = {mid}
        calls: set[str] = set(ids)
        for unit in matched:
            if unit not in stored:
                continue
            for m in stored[unit].messages:
                if m.id in t.ctx or m.id in taken:
                    raise GuardError(
                        f"spilled unit {unit!r} cannot come back: its message id {m.id!r} is "
                        "in the context again. Hint: message ids must stay unique within a "
                        "conversation while their unit is spilled."
                    )
                taken.add(m.id)
                for cid in m.tool_calls:
                    batch = t.batch_of.get(cid)
                    if cid in calls or (batch is not None and batch in t.ctx):
                        raise GuardError(
                            f"spilled unit {unit!r} cannot come back: its call id {cid!r} "
                            "was issued again."
                        )
                    calls.add(cid)
        out = []
        for unit in matched:
            found = stored.get(unit)
            del self._spilled[unit]
            if found is None:  # the store lost it (replaced, or deleted by hand)
                self.stats.lost += 1
                continue
            back = [
                (
                    Message(
                        s.id,
                        Role(s.role),
                        s.tokens,
                        s.turn,
                        s.created_at,
                        s.tool_calls,
                        s.call_id,
                        unit_id=unit,
                    ),
                    s.payload,
                )
                for s in found.messages  # as they were: a trimmer sees their age and turn
            ]
            for message, _ in back:
                for cid in message.tool_calls:
                    t.batch_of[cid] = unit
                if message.call_id is not None:
                    t.result_of[message.call_id] = message.id
            t.restore(back)
            t.resources[unit] = found.resources
            self._restored.append(unit)
            self.stats.reinjections += 1
            out.append(Restored(unit, tuple(x.id for x, _ in back), tuple(p for _, p in back)))
        return tuple(out)

    def _confirm(self) -> None:
        """Units restored at the previous call are back in the runtime's list
        by now: only now do they leave the store.  A store fault here is not
        the event's: the delete is retried at the next call (meanwhile the
        unit is in both the store and the context, which loses nothing)."""
        if self._restored and self.store is not None:
            try:
                self.store.delete(self._restored, self.conversation)
            except StoreError:
                self.stats.store_retries += 1
                return
            self._restored = []
