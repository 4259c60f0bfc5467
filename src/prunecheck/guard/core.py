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
   (committed before the plan is returned);
5. still over the hard ceiling: **fail loudly** —
   :class:`~.errors.HardCeilingExceeded`, carrying the plan.

A new call that names a resource of a spilled unit brings the unit back
(:meth:`CommitGuard.calls` returns it, to put before the call message).

Cost per check: O(size of the proposal + units it touches) for the guard's
own work — the index answers pending / open / unit questions in O(1) — plus
the trimmer's own cost; a spill reads the context from the front only as far
as it must.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from copy import deepcopy
from dataclasses import dataclass, replace
from os import PathLike

from prunecheck.model.actions import PLACEHOLDER_TOKENS, Proposal
from prunecheck.model.context import Message, Role
from prunecheck.model.gates import Gate, decide, spill_plan

from .errors import GuardError, HardCeilingExceeded
from .plan import Deferral, Plan, Restored, SummaryGroup
from .store import SpilledMessage, SpilledUnit, SpillStore
from .tracker import Tracker
from .trimmers import Trimmer, TrimView, as_trimmer

__all__ = ["CommitGuard", "GuardStats"]


@dataclass(slots=True)
class GuardStats:
    """Counters: what the guard did so far."""

    checks: int = 0
    deferred: int = 0
    prunes: int = 0
    evicted: int = 0
    grown: int = 0
    shrunk: int = 0
    spills: int = 0
    reinjections: int = 0
    overruns: int = 0


class CommitGuard:
    """Wraps a trimmer so that it prunes only at commit boundaries.

    Parameters
    ----------
    trimmer:
        A native policy (``select(view, need)``), a list function (give
        ``format``), or any :class:`~.trimmers.Trimmer`.
    budget:
        The working budget in tokens: a check above it prunes.
    hard_ceiling:
        Where deferral must fail loudly (default: 1.25 × budget).
    store:
        A :class:`~.store.SpillStore`, a path to an SQLite file, or
        ``":memory:"``; None: no spilling (the ``commit`` gate).
    format:
        For a list function: what its messages are (``"openai"``,
        ``"anthropic"``, ``"langchain"``, ``"autogen"``).

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
    ) -> None:
        if budget <= 0:
            raise ValueError(f"budget ({budget}) must be a positive token count")
        ceiling = hard_ceiling if hard_ceiling is not None else budget * 5 // 4
        if ceiling < budget:
            raise ValueError(f"hard_ceiling ({ceiling}) must be at least the budget ({budget})")
        self.trimmer: Trimmer = as_trimmer(trimmer, format)
        self.budget = budget
        self.hard_ceiling = ceiling
        self.store = SpillStore(store) if isinstance(store, str | PathLike) else store
        self.stats = GuardStats()
        self.tracker = Tracker()
        self._spilled: dict[str, frozenset[str]] = (
            {u.unit: u.resources for u in self.store.units()} if self.store is not None else {}
        )
        self._restored: list[str] = []

    # ------------------------------------------------------------------ events
    def message(self, mid: str, role: str, tokens: int, payload: object = None) -> None:
        """A whole message was appended (system, user, assistant text, or a tool
        result you do not stream)."""
        self._confirm()
        self.tracker.message(mid, role, tokens, payload)

    def calls(
        self,
        mid: str,
        call_ids: Iterable[str],
        tokens: int,
        payload: object = None,
        *,
        resources: Iterable[str] = (),
    ) -> tuple[Restored, ...]:
        """The model issued calls (a parallel batch) in message ``mid``.

        Returns the spilled units that name one of ``resources`` (file paths,
        URLs …): put their payloads back, in order, *before* this message.
        They leave the store at the guard's next call, once back in your list.
        """
        self._confirm()
        wanted = frozenset(resources)
        restored = self._reinject(wanted) if wanted and self._spilled else ()
        self.tracker.calls(mid, call_ids, tokens, payload, wanted)
        return restored

    def result_chunk(
        self, call_id: str, tokens: int, mid: str | None = None, payload: object = None
    ) -> str:
        """A chunk of a call's result arrived (the result stays open).
        Returns the id the guard tracks the result message under."""
        self._confirm()
        return self.tracker.result_chunk(call_id, tokens, mid, payload)

    def result_complete(
        self, call_id: str, tokens: int = 0, mid: str | None = None, payload: object = None
    ) -> None:
        """A call's result is complete (a whole result: one call, with its tokens)."""
        self._confirm()
        self.tracker.result_complete(call_id, tokens, mid, payload)

    def stream_opened(self, mid: str, role: str, tokens: int = 0, payload: object = None) -> None:
        """A streamed message (assistant text) was opened."""
        self._confirm()
        self.tracker.message(mid, role, tokens, payload, closed=False)

    def stream_chunk(self, mid: str, tokens: int) -> None:
        self._confirm()
        self.tracker.stream_chunk(mid, tokens)

    def stream_closed(self, mid: str, tokens: int = 0) -> None:
        self._confirm()
        self.tracker.stream_chunk(mid, tokens, last=True)

    def removed(self, ids: Iterable[str]) -> None:
        """Messages your runtime removed on its own (not by a plan)."""
        self._confirm()
        self.tracker.removed(ids)

    def attach(self, mid: str, payload: object) -> None:
        """The runtime's message object for a tracked id (e.g. a summary you wrote)."""
        if mid not in self.tracker.ctx:
            raise GuardError(f"message {mid!r} is not in the context")
        self.tracker.payloads[mid] = payload

    # ------------------------------------------------------------------- reads
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
        twin.trimmer, twin.budget, twin.hard_ceiling = self.trimmer, self.budget, self.hard_ceiling
        twin.store = deepcopy(self.store) if self.store is not None else None
        twin.stats = replace(self.stats)
        twin.tracker = self.tracker.copy(remap)
        twin._spilled, twin._restored = dict(self._spilled), list(self._restored)
        return twin

    # ------------------------------------------------------------------- check
    def check(self) -> Plan:
        """One budget check: the decision procedure.  Apply the plan returned
        (or carried by :class:`HardCeilingExceeded`) to your message list."""
        self._confirm()
        t, ctx, stats = self.tracker, self.tracker.ctx, self.stats
        stats.checks += 1
        if ctx.used <= self.budget:
            return Plan(used=ctx.used)
        deferred: Deferral | None = None
        applied = Proposal()
        grown: tuple[str, ...] = ()
        shrunk: tuple[str, ...] = ()
        summaries: tuple[SummaryGroup, ...] = ()
        if t.pending:
            deferred = Deferral.PENDING_CALL
        else:
            proposal = self.trimmer.propose(TrimView(t, self.budget), ctx.used - self.budget)
            decision = decide(Gate.COMMIT, ctx, proposal, t.is_protected)
            applied, grown, shrunk = decision.apply, decision.grown, decision.shrunk
            summaries = self._execute(applied)
            if ctx.used > self.budget and ctx.has_open():
                deferred = Deferral.OPEN_MESSAGE
        if deferred is not None:
            stats.deferred += 1
        spilled: tuple[str, ...] = ()
        if self.store is not None and ctx.used > self.hard_ceiling:
            spilled = self._spill(ctx.used - self.budget)
        plan = Plan(
            applied.evict, applied.clear, summaries, spilled, deferred, grown, shrunk, ctx.used
        )
        if ctx.used > self.hard_ceiling:
            stats.overruns += 1
            raise HardCeilingExceeded(
                ctx.used, self.hard_ceiling, tuple(t.pending), ctx.open_ids(), plan
            )
        return plan

    # ----------------------------------------------------------------- helpers
    def _execute(self, proposal: Proposal) -> tuple[SummaryGroup, ...]:
        t, ctx, stats = self.tracker, self.tracker.ctx, self.stats
        if proposal.is_empty():
            return ()
        stats.prunes += 1
        for mid in proposal.clear:
            message = ctx[mid]
            ctx.update(
                replace(message, tokens=min(message.tokens, PLACEHOLDER_TOKENS), cleared=True)
            )
        stats.evicted += len(t.removed(proposal.evict))
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

    def _spill(self, excess: int) -> tuple[str, ...]:
        assert self.store is not None
        t, ctx = self.tracker, self.tracker.ctx
        out: list[str] = []
        for ids in spill_plan(ctx, excess, t.is_protected):
            unit = ctx[ids[0]].unit_id
            resources = t.resources.get(unit, frozenset())
            messages = tuple(
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
                for m in (ctx[i] for i in ids)
            )
            self.store.put(SpilledUnit(unit, resources, messages))  # committed first …
            t.removed(ids)  # … then it leaves
            self._spilled[unit] = resources
            self.stats.spills += 1
            out.extend(ids)
        return tuple(out)

    def _reinject(self, wanted: frozenset[str]) -> tuple[Restored, ...]:
        assert self.store is not None
        t = self.tracker
        out = []
        for unit, resources in list(self._spilled.items()):
            if not resources & wanted:
                continue
            stored = self.store.take(unit)
            back = []
            for m in stored.messages:  # as they were: a trimmer sees their age and turn
                back.append(
                    (
                        Message(
                            m.id,
                            Role(m.role),
                            m.tokens,
                            m.turn,
                            m.created_at,
                            m.tool_calls,
                            m.call_id,
                            unit_id=unit,
                        ),
                        m.payload,
                    )
                )
                for cid in m.tool_calls:
                    t.batch_of[cid] = unit
                if m.call_id is not None:
                    t.result_of[m.call_id] = m.id
            t.restore(back)
            t.resources[unit] = stored.resources
            del self._spilled[unit]
            self._restored.append(unit)
            self.stats.reinjections += 1
            out.append(Restored(unit, tuple(m.id for m, _ in back), tuple(p for _, p in back)))
        return tuple(out)

    def _confirm(self) -> None:
        """Units restored at the previous call are back in the runtime's list
        by now: only now do they leave the store."""
        if self._restored and self.store is not None:
            self.store.delete(self._restored)
            self._restored = []
