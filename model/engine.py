"""The work of one event: mutations of the context, incident checks,
notes, and the budget check with its gate, spill and re-injection.

:class:`EventWork` is created by :func:`prunecheck.model.runtime.apply` for
each event and handed to the event's handler; it is internal to the model.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from .actions import Proposal, proposal_from
from .config import CheckAt
from .context import Message, Role
from .errors import PolicyError
from .events import CallSpec, Effect
from .gates import Gate, decide, spill_plan
from .incidents import Incident, IncidentKind
from .notes import Note, NoteKind
from .policies import ContextView
from .state import CallRecord, CallStatus, CounterName, RuntimeState, evolve

__all__ = ["PLACEHOLDER_TOKENS", "EventWork", "call_tools", "calls_text"]

#: Tokens a cleared message keeps (its placeholder).
PLACEHOLDER_TOKENS = 8


class EventWork:
    """The work of one event: mutations, incident checks, notes.

    ``state`` is the runtime state the event changes (in place), ``ctx`` its
    context; ``incidents`` and ``notes`` collect what the event did.
    """

    __slots__ = ("ctx", "incidents", "notes", "state")

    def __init__(self, state: RuntimeState) -> None:
        self.state = state
        self.ctx = state.context
        self.incidents: list[Incident] = []
        self.notes: list[Note] = []

    # -- bookkeeping
    def note(self, kind: NoteKind, text: str, ids: tuple[str, ...] = ()) -> None:
        if self.state.record:
            self.notes.append(Note(kind, text, ids))

    def incident(
        self,
        kind: IncidentKind,
        ids: tuple[str, ...],
        detail: str,
        reason: str = "",
        text: str = "",
    ) -> None:
        self.incidents.append(Incident(kind, self.state.step_index, ids, detail, reason, text))
        counters = self.state.counters
        counters[kind.value] = counters.get(kind.value, 0) + 1

    def once(self, kind: IncidentKind, key: str, ids: tuple[str, ...], detail: str) -> None:
        if (kind.value, key) not in self.state.reported:
            self.state.reported.add((kind.value, key))
            self.incident(kind, ids, detail)

    def bump(self, name: CounterName, by: int = 1) -> None:
        self.state.counters[name] = self.state.counters.get(name, 0) + by

    def new_message_id(self) -> str:
        mid = f"m{self.state.next_message}"
        self.state.next_message += 1
        return mid

    def new_call_id(self) -> str:
        cid = f"c{self.state.next_call}"
        self.state.next_call += 1
        return cid

    def where(self) -> str:
        return f"step {self.state.step_index + 1}"

    # -- structure
    def recheck(self, unit: str) -> None:
        """Update orphan / unanswered-call bookkeeping for one unit.
        O(unit size + batch width)."""
        state, ctx = self.state, self.ctx
        batch = state.batches.get(unit)
        if batch is None:
            return
        members = ctx.members(unit)
        has_call = unit in ctx
        answered = set()
        for mid in members:
            message = ctx[mid]
            if message.role is Role.TOOL:
                answered.add(message.call_id)
                if not has_call:
                    if mid not in state.orphans:
                        state.orphans.add(mid)
                        self.once(
                            IncidentKind.ORPHANED_RESULT,
                            mid,
                            (mid, message.call_id or ""),
                            f"result {mid} for call {message.call_id} is in the context but "
                            f"the assistant message {unit} that issued the call is not",
                        )
                else:
                    state.orphans.discard(mid)
        for cid in batch.calls:
            gone = (
                has_call
                and cid not in answered
                and state.calls[cid].status is not CallStatus.PENDING
            )
            if gone:
                if cid not in state.unanswered:
                    state.unanswered.add(cid)
                    self.once(
                        IncidentKind.UNANSWERED_CALL,
                        cid,
                        (unit, cid),
                        f"call {cid} of {unit} has completed but no result for it is "
                        "in the context",
                    )
            else:
                state.unanswered.discard(cid)
        if not members:
            state.orphans.difference_update(m for m in list(state.orphans) if m not in ctx)

    def forget_removed(self, removed: list[Message]) -> None:
        for message in removed:
            self.state.orphans.discard(message.id)
        for unit in dict.fromkeys(m.unit_id for m in removed):
            self.recheck(unit)

    # -- appends
    def append(self, message: Message) -> None:
        self.ctx.append(message)
        if self.state.record:
            self.note(NoteKind.APPEND, _describe(message), (message.id,))

    def after_append(self, unit_done: bool) -> None:
        """The runtime's own budget check, per the ``check_at`` knob."""
        when = self.state.config.check_at
        if when is CheckAt.AFTER_APPEND or (when is CheckAt.AFTER_BATCH and unit_done):
            self.budget_check()

    def plain(self, role: Role, tokens: int, text: str) -> Message:
        mid = self.new_message_id()
        message = Message(
            mid, role, tokens, self.state.turn, self.state.now, unit_id=mid, text=text
        )
        self.append(message)
        return message

    # -- budget
    def protected(self, message: Message) -> bool:
        return message.role is Role.SYSTEM or message.id == self.state.last_user

    def budget_check(self) -> None:
        state, ctx, cfg = self.state, self.ctx, self.state.config
        self.bump(CounterName.CHECKS)
        need = ctx.used - cfg.budget
        state.deferred = False
        if need > 0:
            if cfg.gate.defers and state.pending:
                state.deferred = True
                self.bump(CounterName.DEFERRED_CHECKS)
                calls = tuple(state.pending)
                self.incident(
                    IncidentKind.DEFERRAL,
                    calls,
                    f"over budget by {need} tokens; deferred while {len(calls)} call(s) pending",
                    reason="pending_call",
                )
                if state.record:
                    self.note(
                        NoteKind.DEFER,
                        f"deferred: {len(calls)} call(s) pending "
                        f"({', '.join(calls)}); over budget by {need}",
                        calls,
                    )
            else:
                self.prune(need)
                need = ctx.used - cfg.budget
                if need > 0 and cfg.gate.defers and ctx.has_open():
                    state.deferred = True
                    self.bump(CounterName.DEFERRED_CHECKS)
                    opened = ctx.open_ids()
                    self.incident(
                        IncidentKind.DEFERRAL,
                        opened,
                        f"over budget by {need} tokens; the rest would touch open message(s)",
                        reason="open_message",
                    )
                    self.note(
                        NoteKind.DEFER,
                        f"deferred: budget cannot be met without touching open {', '.join(opened)}",
                        opened,
                    )
            if cfg.gate is Gate.SPILL and ctx.used > cfg.hard_ceiling:
                self.spill(ctx.used - cfg.budget)
        self.ceiling("budget check")

    def ceiling(self, at: str) -> None:
        state, used, limit = self.state, self.ctx.used, self.state.config.hard_ceiling
        if used > limit:
            if not state.over_ceiling:
                state.over_ceiling = True
                self.incident(
                    IncidentKind.HARD_CEILING_OVERRUN,
                    (),
                    f"{used} tokens in context at {at}, over the hard ceiling {limit}",
                )
                self.note(
                    NoteKind.OVERRUN,
                    f"hard ceiling overrun: {used} > {limit} — fail "
                    "loudly (recoverable), context left intact",
                )
        else:
            state.over_ceiling = False

    def ask_policy(self, need: int) -> Proposal:
        state = self.state
        view = ContextView(
            self.ctx,
            pending_calls=frozenset(state.pending),
            budget=state.config.budget,
            now=state.now,
            turn=state.turn,
        )
        name = state.policy.name
        self.bump(CounterName.POLICY_CALLS)
        try:
            result = state.policy.select(view, need)
            return proposal_from(result, self.ctx, name, state.step_index + 1)
        except PolicyError as exc:
            if exc.step is not None:  # placed already (by proposal_from)
                raise
            raise exc.at_step(state.step_index + 1) from None
        except Exception as exc:
            raise PolicyError(
                f"policy {name!r}",
                f"select(view, need={need}) raised {type(exc).__name__}: {exc}.",
                "fix the policy; prunecheck records this as a policy error for the run.",
                step=state.step_index + 1,
            ) from exc

    def prune(self, need: int) -> None:
        state = self.state
        proposal = self.ask_policy(need)
        decision = decide(state.config.gate, self.ctx, proposal, self.protected)
        for v in decision.violations:
            self.incident(
                IncidentKind.INVALID_PRUNE,
                (v.unit_id, *v.ids),
                f"prune applied that {v.describe()}",
                reason=v.reason.value,
            )
        if decision.refused:
            self.bump(CounterName.REFUSED_PRUNES)
            self.note(
                NoteKind.REFUSE,
                "refused prune: " + "; ".join(v.describe() for v in decision.refused),
                proposal.removed(),
            )
        if state.record:  # the notes below cost string work on every prune
            if decision.grown or decision.shrunk:
                self.note(
                    NoteKind.CHECK,
                    f"gate {state.config.gate}: grew "
                    f"{list(decision.grown)}, shrank {list(decision.shrunk)}",
                )
            self.note(
                NoteKind.CHECK,
                f"budget check: {self.ctx.used} used > budget "
                f"{state.config.budget}; policy {getattr(state.policy, 'name', '?')} "
                f"proposed {_proposal_text(proposal)}",
            )
        self.execute(decision.apply)

    def execute(self, proposal: Proposal) -> None:
        ctx = self.ctx
        if proposal.is_empty():
            return
        self.bump(CounterName.PRUNES)
        touched: list[Message] = []
        partial = dict(proposal.clear_to)
        for mid in proposal.clear:
            message = ctx.get(mid)
            if message is None or message.cleared:
                continue
            if message.closed:
                left = partial.get(mid, PLACEHOLDER_TOKENS)
                new = replace(
                    message, tokens=min(message.tokens, left), cleared=True, text="[cleared]"
                )
            else:  # a streaming message loses what it had so far
                new = replace(
                    message, tokens=0, first_chunk=message.first_chunk + message.chunks, chunks=0
                )
            ctx.update(new)
            self.note(
                NoteKind.CLEAR, f"cleared {mid} ({message.tokens} → {new.tokens} tokens)", (mid,)
            )
        if proposal.evict:
            removed = ctx.remove(proposal.evict)
            self.bump(CounterName.EVICTED, len(removed))
            touched.extend(removed)
            self.note(NoteKind.EVICT, "evicted " + ", ".join(proposal.evict), proposal.evict)
        for group in proposal.summarize:
            ids = tuple(m for m in group.message_ids if m in ctx)
            if not ids:
                continue
            total = sum(ctx[m].tokens for m in ids)
            sid = self.new_message_id()
            summary = Message(
                sid,
                Role.USER,
                group.tokens or max(1, total // 10),
                self.state.turn,
                self.state.now,
                unit_id=sid,
                summary_of=ids,
                text=group.text or f"summary of {len(ids)} messages",
            )
            removed = ctx.summarize(ids, summary)
            touched.extend(removed)
            self.note(
                NoteKind.SUMMARIZE,
                f"summarized {', '.join(ids)} into {sid} ({total} → {summary.tokens} tokens)",
                (*ids, sid),
            )
        self.forget_removed(touched)

    def spill(self, excess: int) -> None:
        state = self.state
        for ids in spill_plan(self.ctx, excess, self.protected):
            unit = self.ctx[ids[0]].unit_id
            removed = self.ctx.remove(ids)
            state.spilled[unit] = tuple(removed)
            self.forget_removed(removed)
            self.bump(CounterName.SPILLS)
            self.incident(
                IncidentKind.SPILL,
                ids,
                f"spilled unit {unit} ({sum(m.tokens for m in removed)} tokens) to the side store",
            )
            self.note(NoteKind.SPILL, f"spilled unit {unit} ({', '.join(ids)})", ids)

    def reinject(self, paths: set[str]) -> None:
        state = self.state
        for unit, messages in list(state.spilled.items()):
            batch = state.batches.get(unit)
            if batch is None or not any(state.calls[c].spec.path in paths for c in batch.calls):
                continue
            del state.spilled[unit]
            for message in messages:
                self.ctx.append(message)
            self.recheck(unit)
            ids = tuple(m.id for m in messages)
            self.bump(CounterName.REINJECTIONS)
            self.incident(IncidentKind.REINJECTION, ids, f"re-injected spilled unit {unit}")
            self.note(NoteKind.REINJECT, f"re-injected unit {unit} ({', '.join(ids)})", ids)

    # -- tool execution
    def execute_call(self, spec: CallSpec) -> int:
        world = self.state.world
        if spec.effect is Effect.WRITE:
            world[spec.path] = world.get(spec.path, 0) + 1
        return world.get(spec.path, 0)

    def close_call(self, record: CallRecord, status: CallStatus) -> CallRecord:
        state = self.state
        record = evolve(record, status=status)
        state.calls[record.id] = record
        state.pending.pop(record.id, None)
        self.ctx.resolve(record.batch, record.id)
        return record


class _CallTools(Mapping[str, tuple[str, str]]):
    """Call id -> (tool, path), read from the call records on demand: O(1)
    to build, so rendering costs what the context holds, not the history."""

    __slots__ = ("_calls",)

    def __init__(self, calls: dict[str, CallRecord]) -> None:
        self._calls = calls

    def __getitem__(self, cid: str) -> tuple[str, str]:
        spec = self._calls[cid].spec
        return spec.tool, spec.path

    def __iter__(self) -> Iterator[str]:
        return iter(self._calls)

    def __len__(self) -> int:
        return len(self._calls)


def call_tools(state: RuntimeState) -> Mapping[str, tuple[str, str]]:
    return _CallTools(state.calls)


def calls_text(calls: tuple[CallSpec, ...]) -> str:
    return "; ".join(f"{c.tool}({c.path})" for c in calls)


def _describe(m: Message) -> str:
    parts = [f"{m.id} {m.role.value}", f"{m.tokens} tokens"]
    if m.tool_calls:
        parts.append("calls " + ", ".join(m.tool_calls))
    if m.call_id:
        parts.append(f"answers {m.call_id}")
    if not m.closed:
        parts.append("open")
    if m.first_chunk:
        parts.append(f"from chunk {m.first_chunk + 1}")
    return " · ".join(parts)


def _proposal_text(p: Proposal) -> str:
    parts = []
    if p.evict:
        parts.append("evict " + ", ".join(p.evict))
    if p.clear:
        parts.append("clear " + ", ".join(p.clear))
    for g in p.summarize:
        parts.append("summarize " + ", ".join(g.message_ids))
    return "; ".join(parts) or "nothing"
