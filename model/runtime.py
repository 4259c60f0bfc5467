"""The runtime: configuration, state and the step function.

``step(state, event)`` is the pure form: it returns a new state and what
happened, leaving ``state`` untouched.  ``apply(state, event)`` is the same
transition in place, for drivers that own their state linearly (the
simulator, long replays); ``step(s, e)`` equals ``apply(copy(s), e)``.

Nothing here does I/O or reads a clock: time comes in with the event
(``at``), and the policy is the only foreign code called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

from .actions import Proposal, proposal_from
from .context import Context, Message, Role
from .errors import ConfigError, PolicyError, TraceError
from .events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from .gates import Gate, decide, spill_plan
from .incidents import Incident, IncidentKind
from .notes import Note, NoteKind
from .policies import ContextView, Policy
from .provider import Provider, ProviderError, render, validate

__all__ = [
    "CallRecord",
    "CallStatus",
    "CheckAt",
    "Repair",
    "RetryMode",
    "RuntimeConfig",
    "RuntimeState",
    "StepResult",
    "StreamLoss",
    "apply",
    "initial_state",
    "step",
]

PLACEHOLDER_TOKENS = 8
_R = TypeVar("_R", "Message", "CallRecord")


class CheckAt(StrEnum):
    """When the runtime fires its budget check."""

    AFTER_APPEND = "after_append"
    AFTER_BATCH = "after_batch"
    BEFORE_INVOKE = "before_invoke"


class RetryMode(StrEnum):
    """What a retry after a rejection does with the implicated batch."""

    RERUN_BATCH = "rerun_batch"
    IDEMPOTENT = "idempotent"


class StreamLoss(StrEnum):
    """What a stream does when its message was evicted mid-stream."""

    REAPPEND = "reappend"
    DROP = "drop"
    ERROR = "error"


class Repair(StrEnum):
    """The repair layer run on the history before each invocation."""

    NONE = "none"
    DROP_ORPHANS = "drop_orphans"
    SYNTHESIZE = "synthesize"


_KNOBS: dict[str, type[StrEnum]] = {
    "gate": Gate,
    "check_at": CheckAt,
    "retry": RetryMode,
    "on_stream_loss": StreamLoss,
    "repair": Repair,
    "provider": Provider,
}


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The runtime's rules: budget, gate and knobs."""

    budget: int = 32_000
    hard_ceiling: int = 40_000
    gate: Gate = Gate.NONE
    check_at: CheckAt = CheckAt.AFTER_APPEND
    retry: RetryMode = RetryMode.RERUN_BATCH
    on_stream_loss: StreamLoss = StreamLoss.REAPPEND
    repair: Repair = Repair.NONE
    provider: Provider = Provider.ANTHROPIC

    def __post_init__(self) -> None:
        if self.budget <= 0:
            raise ConfigError("budget", f"must be a positive token count, got {self.budget}.")
        if self.hard_ceiling < self.budget:
            raise ConfigError(
                "hard_ceiling",
                f"({self.hard_ceiling}) must be at least the budget ({self.budget}).",
                "the hard ceiling is where deferral must fail loudly; set it above the budget.",
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "hard_ceiling": self.hard_ceiling,
            **{name: getattr(self, name).value for name in _KNOBS},
        }

    @classmethod
    def from_json(cls, data: object, where: str = "config") -> RuntimeConfig:
        """Parse and validate; raises :class:`ConfigError` naming the field."""
        if not isinstance(data, dict):
            raise ConfigError(where, "must be a JSON object of runtime settings.")
        unknown = set(data) - {"budget", "hard_ceiling", *_KNOBS}
        if unknown:
            raise ConfigError(where, f"unknown setting(s) {sorted(unknown)}.",
                              f"settings are budget, hard_ceiling, {', '.join(_KNOBS)}.")
        kwargs: dict[str, Any] = {}
        for name in ("budget", "hard_ceiling"):
            if name in data:
                value = data[name]
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ConfigError(f"{where}.{name}", f"must be an integer, got {value!r}.")
                kwargs[name] = value
        for name in _KNOBS:
            if name in data:
                kwargs[name] = parse_knob(name, data[name], where)
        return cls(**kwargs)


def parse_knob(name: str, value: object, where: str = "config") -> Any:
    """One knob's enum value from its string; :class:`ConfigError` if unknown."""
    enum = _KNOBS[name]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return enum(value)
    except ValueError:
        choices = ", ".join(m.value for m in enum)
        raise ConfigError(f"{where}.{name}", f"must be one of {choices}; got {value!r}.") from None


class CallStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What the runtime knows of one call."""

    id: str
    batch: str
    spec: CallSpec
    status: CallStatus = CallStatus.PENDING
    version_seen: int = 0
    chunks: int = 0
    tokens: int = 0
    target: str | None = None
    lost: bool = False
    retry_of: str | None = None


@dataclass(frozen=True, slots=True)
class BatchRecord:
    calls: tuple[str, ...]
    tokens: int
    text: str


@dataclass(frozen=True, slots=True)
class StepResult:
    """What one event did: incidents always, notes when recording."""

    incidents: tuple[Incident, ...] = ()
    notes: tuple[Note, ...] = ()


@dataclass(slots=True)
class RuntimeState:
    """Everything the runtime holds.  Mutated only by :func:`apply`."""

    config: RuntimeConfig
    policy: Policy
    context: Context = field(default_factory=Context)
    calls: dict[str, CallRecord] = field(default_factory=dict)
    batches: dict[str, BatchRecord] = field(default_factory=dict)
    pending: dict[str, None] = field(default_factory=dict)
    world: dict[str, int] = field(default_factory=dict)
    spilled: dict[str, tuple[Message, ...]] = field(default_factory=dict)
    turn: int = 0
    now: float = 0.0
    step_index: int = 0
    next_message: int = 1
    next_call: int = 1
    assistant_stream: CallRecord | None = None
    last_user: str | None = None
    rejected_units: tuple[str, ...] | None = None
    over_ceiling: bool = False
    deferred: bool = False
    orphans: set[str] = field(default_factory=set)
    unanswered: set[str] = field(default_factory=set)
    reported: set[tuple[str, str]] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    record: bool = True

    def copy(self) -> RuntimeState:
        """An independent copy (records are immutable and shared).  O(n)."""
        return replace(
            self,
            context=self.context.copy(),
            calls=dict(self.calls),
            batches=dict(self.batches),
            pending=dict(self.pending),
            world=dict(self.world),
            spilled=dict(self.spilled),
            orphans=set(self.orphans),
            unanswered=set(self.unanswered),
            reported=set(self.reported),
            counters=dict(self.counters),
        )

    def batch_of_call(self) -> dict[str, str]:
        return {c.id: c.batch for c in self.calls.values()}

    def count(self, name: str) -> int:
        return self.counters.get(name, 0)


def initial_state(config: RuntimeConfig, policy: Policy, *, record: bool = True) -> RuntimeState:
    """A runtime with an empty context."""
    return RuntimeState(config=config, policy=policy, record=record)


def step(state: RuntimeState, event: Event, at: float | None = None
         ) -> tuple[RuntimeState, StepResult]:
    """The pure transition: a new state and what happened; ``state`` is untouched."""
    new = state.copy()
    return new, apply(new, event, at)


def apply(state: RuntimeState, event: Event, at: float | None = None) -> StepResult:
    """Apply one event in place; return its incidents (and notes if recording).

    Raises
    ------
    TraceError
        if the event is impossible in this state (a result for a call that
        is not pending, the model speaking while calls are pending …).
    PolicyError
        if the policy raised or returned something invalid.
    """
    state.now = float(state.step_index) if at is None else at
    run = _Step(state)
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TraceError(f"step {state.step_index}", f"{event!r} is not an event.")
    handler(run, event)
    state.step_index += 1
    return StepResult(tuple(run.incidents), tuple(run.notes))


# --------------------------------------------------------------------- engine
class _Step:
    """The work of one event: mutations, incident checks, notes."""

    __slots__ = ("ctx", "incidents", "notes", "s")

    def __init__(self, state: RuntimeState) -> None:
        self.s = state
        self.ctx = state.context
        self.incidents: list[Incident] = []
        self.notes: list[Note] = []

    # -- bookkeeping
    def note(self, kind: NoteKind, text: str, ids: tuple[str, ...] = ()) -> None:
        if self.s.record:
            self.notes.append(Note(kind, text, ids))

    def incident(self, kind: IncidentKind, ids: tuple[str, ...], detail: str,
                 reason: str = "", text: str = "") -> None:
        self.incidents.append(Incident(kind, self.s.step_index, ids, detail, reason, text))
        counters = self.s.counters
        counters[kind.value] = counters.get(kind.value, 0) + 1

    def once(self, kind: IncidentKind, key: str, ids: tuple[str, ...], detail: str) -> None:
        if (kind.value, key) not in self.s.reported:
            self.s.reported.add((kind.value, key))
            self.incident(kind, ids, detail)

    def bump(self, name: str, by: int = 1) -> None:
        self.s.counters[name] = self.s.counters.get(name, 0) + by

    def new_message_id(self) -> str:
        mid = f"m{self.s.next_message}"
        self.s.next_message += 1
        return mid

    def new_call_id(self) -> str:
        cid = f"c{self.s.next_call}"
        self.s.next_call += 1
        return cid

    def where(self) -> str:
        return f"step {self.s.step_index}"

    # -- structure
    def recheck(self, unit: str) -> None:
        """Update orphan / unanswered-call bookkeeping for one unit.
        O(unit size + batch width)."""
        s, ctx = self.s, self.ctx
        batch = s.batches.get(unit)
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
                    if mid not in s.orphans:
                        s.orphans.add(mid)
                        self.once(IncidentKind.ORPHANED_RESULT, mid, (mid, message.call_id or ""),
                                  f"result {mid} for call {message.call_id} is in the context but "
                                  f"the assistant message {unit} that issued the call is not")
                else:
                    s.orphans.discard(mid)
        for cid in batch.calls:
            gone = (has_call and cid not in answered
                    and s.calls[cid].status is not CallStatus.PENDING)
            if gone:
                if cid not in s.unanswered:
                    s.unanswered.add(cid)
                    self.once(IncidentKind.UNANSWERED_CALL, cid, (unit, cid),
                              f"call {cid} of {unit} has completed but no result for it is "
                              "in the context")
            else:
                s.unanswered.discard(cid)
        if not members:
            s.orphans.difference_update(m for m in list(s.orphans) if m not in ctx)

    def forget_removed(self, removed: list[Message]) -> None:
        for message in removed:
            self.s.orphans.discard(message.id)
        for unit in dict.fromkeys(m.unit_id for m in removed):
            self.recheck(unit)

    # -- appends
    def append(self, message: Message) -> None:
        self.ctx.append(message)
        if self.s.record:
            self.note(NoteKind.APPEND, _describe(message), (message.id,))

    def after_append(self, unit_done: bool) -> None:
        """The runtime's own budget check, per the ``check_at`` knob."""
        when = self.s.config.check_at
        if when is CheckAt.AFTER_APPEND or (when is CheckAt.AFTER_BATCH and unit_done):
            self.budget_check()

    def plain(self, role: Role, tokens: int, text: str) -> Message:
        mid = self.new_message_id()
        message = Message(mid, role, tokens, self.s.turn, self.s.now, unit_id=mid, text=text)
        self.append(message)
        return message

    # -- budget
    def protected(self, message: Message) -> bool:
        return message.role is Role.SYSTEM or message.id == self.s.last_user

    def budget_check(self) -> None:
        s, ctx, cfg = self.s, self.ctx, self.s.config
        self.bump("checks")
        need = ctx.used - cfg.budget
        s.deferred = False
        if need > 0:
            if cfg.gate.defers and s.pending:
                s.deferred = True
                self.bump("deferred_checks")
                calls = tuple(s.pending)
                self.incident(IncidentKind.DEFERRAL, calls,
                              f"over budget by {need} tokens; deferred while "
                              f"{len(calls)} call(s) pending", reason="pending_call")
                self.note(NoteKind.DEFER, f"deferred: {len(calls)} call(s) pending "
                          f"({', '.join(calls)}); over budget by {need}", calls)
            else:
                self.prune(need)
                need = ctx.used - cfg.budget
                if need > 0 and cfg.gate.defers and ctx.has_open():
                    s.deferred = True
                    self.bump("deferred_checks")
                    opened = ctx.open_ids()
                    self.incident(IncidentKind.DEFERRAL, opened,
                                  f"over budget by {need} tokens; the rest would touch open "
                                  "message(s)", reason="open_message")
                    self.note(NoteKind.DEFER, f"deferred: budget cannot be met without "
                              f"touching open {', '.join(opened)}", opened)
            if cfg.gate is Gate.SPILL and ctx.used > cfg.hard_ceiling:
                self.spill(ctx.used - cfg.budget)
        self.ceiling("budget check")

    def ceiling(self, at: str) -> None:
        s, used, limit = self.s, self.ctx.used, self.s.config.hard_ceiling
        if used > limit:
            if not s.over_ceiling:
                s.over_ceiling = True
                self.incident(IncidentKind.HARD_CEILING_OVERRUN, (),
                              f"{used} tokens in context at {at}, over the hard ceiling {limit}")
                self.note(NoteKind.OVERRUN, f"hard ceiling overrun: {used} > {limit} — fail "
                          "loudly (recoverable), context left intact")
        else:
            s.over_ceiling = False

    def ask_policy(self, need: int) -> Proposal:
        s = self.s
        view = ContextView(self.ctx, pending_calls=frozenset(s.pending),
                           budget=s.config.budget, now=s.now, turn=s.turn)
        name = getattr(s.policy, "name", type(s.policy).__name__)
        self.bump("policy_calls")
        try:
            result = s.policy.select(view, need)
            return proposal_from(result, self.ctx, name, s.step_index)
        except PolicyError as exc:
            if " at step " in exc.subject:
                raise
            raise PolicyError(f"{exc.subject} at step {s.step_index}", exc.rule,
                              exc.hint) from None
        except Exception as exc:
            raise PolicyError(
                f"policy {name!r} at step {s.step_index}",
                f"select(view, need={need}) raised {type(exc).__name__}: {exc}.",
                "fix the policy; prunecheck records this as a policy error for the run.",
            ) from exc

    def prune(self, need: int) -> None:
        s = self.s
        proposal = self.ask_policy(need)
        decision = decide(s.config.gate, self.ctx, proposal, self.protected)
        for v in decision.violations:
            self.incident(IncidentKind.INVALID_PRUNE, (v.unit_id, *v.ids),
                          f"prune applied that {v.describe()}", reason=v.reason.value)
        if decision.refused:
            self.bump("refused_prunes")
            self.note(NoteKind.REFUSE, "refused prune: " + "; ".join(
                v.describe() for v in decision.refused), proposal.removed())
        if decision.grown or decision.shrunk:
            self.note(NoteKind.CHECK, f"gate {s.config.gate}: grew {list(decision.grown)}, "
                      f"shrank {list(decision.shrunk)}")
        self.note(NoteKind.CHECK, f"budget check: {self.ctx.used} used > budget "
                  f"{s.config.budget}; policy {getattr(s.policy, 'name', '?')} proposed "
                  f"{_proposal_text(proposal)}")
        self.execute(decision.apply)

    def execute(self, proposal: Proposal) -> None:
        ctx = self.ctx
        if proposal.is_empty():
            return
        self.bump("prunes")
        touched: list[Message] = []
        for mid in proposal.clear:
            message = ctx.get(mid)
            if message is None or message.cleared:
                continue
            if message.closed:
                new = replace(message, tokens=min(message.tokens, PLACEHOLDER_TOKENS),
                              cleared=True, text="[cleared]")
            else:  # a streaming message loses what it had so far
                new = replace(message, tokens=0, first_chunk=message.first_chunk + message.chunks,
                              chunks=0)
            ctx.update(new)
            self.note(NoteKind.CLEAR, f"cleared {mid} ({message.tokens} → {new.tokens} tokens)",
                      (mid,))
        if proposal.evict:
            removed = ctx.remove(proposal.evict)
            self.bump("evicted", len(removed))
            touched.extend(removed)
            self.note(NoteKind.EVICT, "evicted " + ", ".join(proposal.evict), proposal.evict)
        for group in proposal.summarize:
            ids = tuple(m for m in group.message_ids if m in ctx)
            if not ids:
                continue
            total = sum(ctx[m].tokens for m in ids)
            sid = self.new_message_id()
            summary = Message(sid, Role.USER, group.tokens or max(1, total // 10), self.s.turn,
                              self.s.now, unit_id=sid, summary_of=ids,
                              text=group.text or f"summary of {len(ids)} messages")
            removed = ctx.summarize(ids, summary)
            touched.extend(removed)
            self.note(NoteKind.SUMMARIZE, f"summarized {', '.join(ids)} into {sid} "
                      f"({total} → {summary.tokens} tokens)", (*ids, sid))
        self.forget_removed(touched)

    def spill(self, excess: int) -> None:
        s = self.s
        for ids in spill_plan(self.ctx, excess, self.protected):
            unit = self.ctx[ids[0]].unit_id
            removed = self.ctx.remove(ids)
            s.spilled[unit] = tuple(removed)
            self.forget_removed(removed)
            self.bump("spills")
            self.incident(IncidentKind.SPILL, ids, f"spilled unit {unit} "
                          f"({sum(m.tokens for m in removed)} tokens) to the side store")
            self.note(NoteKind.SPILL, f"spilled unit {unit} ({', '.join(ids)})", ids)

    def reinject(self, paths: set[str]) -> None:
        s = self.s
        for unit, messages in list(s.spilled.items()):
            batch = s.batches.get(unit)
            if batch is None or not any(s.calls[c].spec.path in paths for c in batch.calls):
                continue
            del s.spilled[unit]
            for message in messages:
                self.ctx.append(message)
            self.recheck(unit)
            ids = tuple(m.id for m in messages)
            self.bump("reinjections")
            self.incident(IncidentKind.REINJECTION, ids, f"re-injected spilled unit {unit}")
            self.note(NoteKind.REINJECT, f"re-injected unit {unit} ({', '.join(ids)})", ids)

    # -- tool execution
    def execute_call(self, spec: CallSpec) -> int:
        world = self.s.world
        if spec.effect is Effect.WRITE:
            world[spec.path] = world.get(spec.path, 0) + 1
        return world.get(spec.path, 0)

    def close_call(self, record: CallRecord, status: CallStatus) -> CallRecord:
        s = self.s
        record = _evolve(record, status=status)
        s.calls[record.id] = record
        s.pending.pop(record.id, None)
        self.ctx.resolve(record.batch, record.id)
        return record


# -------------------------------------------------------------------- handlers
def _on_system(run: _Step, event: SystemPrompt) -> None:
    run.plain(Role.SYSTEM, event.tokens, event.text or "system prompt")
    run.after_append(True)


def _on_user(run: _Step, event: UserMessage) -> None:
    run.s.turn += 1
    message = run.plain(Role.USER, event.tokens, event.text)
    run.s.last_user = message.id
    run.after_append(True)


def _model_may_speak(run: _Step, what: str) -> None:
    if run.s.pending:
        raise TraceError(run.where(), f"{what} while call(s) {', '.join(run.s.pending)} are "
                         "pending: the model is not invoked until every result is in.",
                         "deliver or fail the pending calls first.")


def _on_assistant(run: _Step, event: AssistantChunk) -> None:
    s = run.s
    _model_may_speak(run, "assistant text")
    stream = s.assistant_stream
    if stream is None:
        mid = run.new_message_id()
        message = Message(mid, Role.ASSISTANT, event.tokens, s.turn, s.now, closed=event.last,
                          unit_id=mid, text=event.text)
        run.append(message)
        if not event.last:
            s.assistant_stream = CallRecord("", mid, CallSpec("assistant"), chunks=1,
                                            tokens=event.tokens, target=mid)
        run.after_append(event.last)
        return
    stream = _evolve(stream, chunks=stream.chunks + 1, tokens=stream.tokens + event.tokens,
                     lost=stream.lost or _is_lost(run, stream))
    target = _stream_target(run, stream, Role.ASSISTANT, event.tokens, event.last, None)
    stream = _evolve(stream, target=target)
    s.assistant_stream = None if event.last else stream
    if event.last:
        _check_truncation(run, stream, target, "assistant text")
    run.after_append(event.last)


def _stream_target(run: _Step, stream: CallRecord, role: Role, tokens: int, last: bool,
                   call_id: str | None) -> str | None:
    """Append one chunk to a stream's message; if that message was evicted,
    do what the ``on_stream_loss`` knob says.  Returns the message now
    receiving the stream (None if the stream lost its message for good)."""
    s, ctx = run.s, run.ctx
    target = stream.target
    if target is not None and target in ctx:
        old = ctx[target]
        ctx.update(_evolve(old, tokens=old.tokens + tokens, chunks=old.chunks + 1,
                           closed=last))
        if s.record:
            run.note(NoteKind.CHUNK, f"{target} +{tokens} tokens"
                     + (" (complete)" if last else " (streaming)"), (target,))
        return target
    mode = s.config.on_stream_loss
    if target is not None:
        run.note(NoteKind.STREAM_LOST, f"stream for {target} continues, but {target} was "
                 f"evicted; runtime does '{mode}'", (target,))
    if mode is StreamLoss.REAPPEND:
        mid = run.new_message_id()
        text = f"(continued) {stream.spec.tool} {stream.spec.path}".strip()
        message = Message(mid, role, tokens, s.turn, s.now, call_id=call_id, closed=last,
                          unit_id=stream.batch if call_id else mid, text=text,
                          first_chunk=stream.chunks - 1, chunks=1)
        run.append(message)
        return mid
    return None


def _is_lost(run: _Step, stream: CallRecord) -> bool:
    return stream.target is not None and stream.target not in run.ctx


def _check_truncation(run: _Step, stream: CallRecord, target: str | None, what: str) -> None:
    message = run.ctx.get(target) if target is not None else None
    if message is None:
        if stream.lost and run.s.config.on_stream_loss is StreamLoss.DROP:
            ident = stream.id or stream.batch
            run.once(IncidentKind.TRUNCATED_PAYLOAD, ident, (ident,),
                     f"{what} of {stream.tokens} tokens was produced but none of it reached "
                     "the context (stream dropped after its message was evicted)")
        return
    if message.first_chunk > 0 and not message.cleared:
        lost = stream.tokens - message.tokens
        run.once(IncidentKind.TRUNCATED_PAYLOAD, message.id,
                 (message.id, *((stream.id,) if stream.id else ())),
                 f"{what} {message.id} holds chunks {message.first_chunk + 1}–{stream.chunks} of "
                 f"{stream.chunks}: the first {lost} of {stream.tokens} tokens are missing")


def _on_batch(run: _Step, event: IssueBatch) -> None:
    s = run.s
    _model_may_speak(run, "a tool batch")
    if s.assistant_stream is not None:
        raise TraceError(run.where(), "a tool batch while assistant text is still streaming.",
                         "close the assistant stream (last=true) first.")
    if s.spilled:
        run.reinject({c.path for c in event.calls if c.path})
    mid = run.new_message_id()
    ids = []
    for spec in event.calls:
        cid = run.new_call_id()
        version = run.execute_call(spec)
        s.calls[cid] = CallRecord(cid, mid, spec, version_seen=version)
        s.pending[cid] = None
        run.ctx.mark_pending(mid, cid)
        ids.append(cid)
    s.batches[mid] = BatchRecord(tuple(ids), event.tokens, event.text)
    run.append(Message(mid, Role.ASSISTANT, event.tokens, s.turn, s.now, tool_calls=tuple(ids),
                       unit_id=mid, text=event.text or _calls_text(event.calls)))
    run.after_append(False)


def _pending_call(run: _Step, call: str, what: str) -> CallRecord | None:
    record = run.s.calls.get(call)
    if record is None:
        raise TraceError(run.where(), f"{what} for unknown call {call!r}.",
                         "calls are numbered c1, c2 … in the order batches issue them.")
    if record.status is not CallStatus.PENDING:
        if record.status is CallStatus.FAILED:
            run.note(NoteKind.CHUNK, f"{what} for {call} ignored: the call already failed")
            return None
        raise TraceError(run.where(), f"{what} for call {call!r}, whose result is already "
                         "complete.", "each call gets one result; its last chunk has last=true.")
    return record


def _on_result(run: _Step, event: ResultChunk) -> None:
    s, ctx = run.s, run.ctx
    record = _pending_call(run, event.call, "a result chunk")
    if record is None:
        return
    record = _evolve(record, chunks=record.chunks + 1, tokens=record.tokens + event.tokens,
                     lost=record.lost or _is_lost(run, record))
    spec = record.spec
    if record.target is None and record.chunks == 1:
        mid = run.new_message_id()
        run.append(Message(mid, Role.TOOL, event.tokens, s.turn, s.now, call_id=record.id,
                           closed=event.last, unit_id=record.batch,
                           text=f"{spec.tool} {spec.path} @v{record.version_seen}".strip()))
        target: str | None = mid
    elif record.target is not None and record.target not in ctx and \
            s.config.on_stream_loss is StreamLoss.ERROR:
        run.note(NoteKind.STREAM_LOST, f"stream for {record.target} errors: its message was "
                 "evicted; the call fails loudly", (record.target,))
        s.calls[record.id] = record
        _fail(run, record, "stream error: result message removed mid-stream", 20)
        run.after_append(True)
        return
    else:
        target = _stream_target(run, record, Role.TOOL, event.tokens, event.last, record.id)
    record = _evolve(record, target=target)
    s.calls[record.id] = record
    if event.last:
        record = run.close_call(record, CallStatus.DONE)
        _check_truncation(run, record, target, "result")
    run.recheck(record.batch)
    run.after_append(event.last and not ctx.pending_in(record.batch))


def _fail(run: _Step, record: CallRecord, reason: str, tokens: int) -> None:
    s, ctx = run.s, run.ctx
    if record.target is not None and record.target in ctx:
        removed = ctx.remove([record.target])
        run.note(NoteKind.EVICT, f"dropped partial result {record.target}", (record.target,))
        run.forget_removed(removed)
    record = run.close_call(record, CallStatus.FAILED)
    mid = run.new_message_id()
    run.append(Message(mid, Role.TOOL, tokens, s.turn, s.now, call_id=record.id,
                       unit_id=record.batch, text=f"error: {reason}"))
    s.calls[record.id] = replace(record, target=mid)
    run.recheck(record.batch)


def _on_failure(run: _Step, event: ToolFailure) -> None:
    record = _pending_call(run, event.call, f"a tool {event.reason}")
    if record is None:
        return
    _fail(run, record, f"tool {event.reason}", event.tokens)
    run.after_append(not run.ctx.pending_in(record.batch))


def _on_check(run: _Step, event: BudgetCheck) -> None:
    run.budget_check()


def _on_write(run: _Step, event: ExternalWrite) -> None:
    world = run.s.world
    world[event.path] = world.get(event.path, 0) + 1
    run.note(NoteKind.WORLD, f"{event.path} changed outside the agent (now v{world[event.path]})")


def _on_invoke(run: _Step, event: Invoke) -> None:
    s, ctx = run.s, run.ctx
    if s.pending or s.assistant_stream is not None:
        run.bump("blocked_invocations")
        run.note(NoteKind.BLOCK, f"invocation waits: {len(s.pending)} call(s) pending")
        return
    if s.config.check_at is CheckAt.BEFORE_INVOKE:
        run.budget_check()
    if s.config.repair is not Repair.NONE and (s.orphans or s.unanswered):
        _repair(run)
    run.bump("invocations")
    errors: list[ProviderError] = []
    if s.orphans or s.unanswered:
        # Only a broken history needs rendering: the index already knows it is.
        body = render(ctx, s.config.provider, tools=_tools(s))
        errors = validate(body, s.config.provider)
    if errors:
        first = errors[0]
        calls = sorted({c for e in errors for c in e.ids})
        # The provider names only its first error, so that is all a retry
        # knows: it re-runs the batch behind that error, not every broken one.
        s.rejected_units = tuple(dict.fromkeys(s.calls[c].batch for c in first.ids
                                               if c in s.calls))
        run.incident(IncidentKind.PROVIDER_REJECTION, tuple(calls),
                     f"the provider answers HTTP {first.status} to the invocation",
                     reason=first.kind, text=first.text)
        run.note(NoteKind.REJECT, f"HTTP {first.status}: {first.text}", tuple(calls))
    else:
        s.rejected_units = None
        run.note(NoteKind.INVOKE, f"model invoked with {len(ctx)} messages, {ctx.used} tokens")
    run.ceiling("invocation")


def _repair(run: _Step) -> None:
    s, ctx = run.s, run.ctx
    orphans = sorted(s.orphans, key=lambda m: int(m[1:]))
    dropped: list[Message] = ctx.remove(orphans) if orphans else []
    for cid in sorted(s.unanswered, key=lambda c: int(c[1:])):
        record = s.calls[cid]
        if s.config.repair is Repair.SYNTHESIZE:
            mid = run.new_message_id()
            run.append(Message(mid, Role.TOOL, PLACEHOLDER_TOKENS, s.turn, s.now, call_id=cid,
                               unit_id=record.batch, synthetic=True,
                               text="[tool result unavailable]"))
            run.incident(IncidentKind.SYNTHESIZED_RESULT, (mid, cid),
                         f"repair layer synthesized result {mid} for call {cid}: the model "
                         "will reason over a result no tool produced")
        elif record.batch in ctx:
            dropped.extend(ctx.remove(ctx.members(record.batch)))
    if dropped:
        run.note(NoteKind.REPAIR, "repair layer dropped " + ", ".join(m.id for m in dropped),
                 tuple(m.id for m in dropped))
    run.forget_removed(dropped)
    for unit in dict.fromkeys(s.calls[c].batch for c in list(s.unanswered)):
        run.recheck(unit)


def _on_retry(run: _Step, event: Retry) -> None:
    s = run.s
    if s.rejected_units is None:
        run.note(NoteKind.RETRY, "retry: the last invocation was not rejected; nothing to do")
        return
    units, s.rejected_units = s.rejected_units, None
    run.bump("retries")
    for unit in units:
        batch = s.batches[unit]
        mid = run.new_message_id()
        new_ids = []
        results = []
        for old in batch.calls:
            record = s.calls[old]
            spec = record.spec
            if s.config.retry is RetryMode.RERUN_BATCH:
                before = s.world.get(spec.path, 0)
                version = run.execute_call(spec)
                if spec.effect is Effect.WRITE:
                    run.incident(IncidentKind.DUPLICATED_SIDE_EFFECT, (old, spec.path),
                                 f"retry re-ran write {spec.tool}({spec.path}) of call {old}: "
                                 f"the file is now v{version}", reason="write")
                elif before != record.version_seen:
                    run.incident(IncidentKind.DUPLICATED_SIDE_EFFECT, (old, spec.path),
                                 f"retry re-ran {spec.tool}({spec.path}) of call {old} against "
                                 f"changed state: it saw v{record.version_seen}, now "
                                 f"v{before}", reason="changed_state")
            else:
                version = record.version_seen
            cid = run.new_call_id()
            new_ids.append(cid)
            s.calls[cid] = CallRecord(cid, mid, spec, CallStatus.DONE, version, 1,
                                      record.tokens or 1, retry_of=old)
            results.append((cid, spec, version, record.tokens or 1))
        s.batches[mid] = BatchRecord(tuple(new_ids), batch.tokens, batch.text)
        run.note(NoteKind.RETRY, f"retry ({s.config.retry}) re-issues batch {unit} as {mid}",
                 (unit, mid))
        run.append(Message(mid, Role.ASSISTANT, batch.tokens, s.turn, s.now,
                           tool_calls=tuple(new_ids), unit_id=mid,
                           text=batch.text or _calls_text(tuple(r[1] for r in results))))
        for cid, spec, version, tokens in results:
            rid = run.new_message_id()
            run.append(Message(rid, Role.TOOL, tokens, s.turn, s.now, call_id=cid, unit_id=mid,
                               text=f"{spec.tool} {spec.path} @v{version}".strip()))
            s.calls[cid] = replace(s.calls[cid], target=rid)
        run.after_append(True)


_HANDLERS: dict[type, Callable[[_Step, Any], None]] = {
    SystemPrompt: _on_system,
    UserMessage: _on_user,
    AssistantChunk: _on_assistant,
    IssueBatch: _on_batch,
    ResultChunk: _on_result,
    ToolFailure: _on_failure,
    BudgetCheck: _on_check,
    Invoke: _on_invoke,
    Retry: _on_retry,
    ExternalWrite: _on_write,
}


_FIELDS: dict[type, tuple[str, ...]] = {}


def _evolve(record: _R, **changes: Any) -> _R:
    """``dataclasses.replace`` for the runtime's hot path (result and stream
    chunks): the same new record, built without re-running ``__init__``'s
    per-field checks; about twice as fast.  Only for records without
    ``__post_init__``; others go through ``dataclasses.replace``."""
    cls = type(record)
    names = _FIELDS.get(cls)
    if names is None:
        if hasattr(cls, "__post_init__"):
            return replace(record, **changes)
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    new = object.__new__(cls)
    for name in names:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(record, name))
    return new


# --------------------------------------------------------------------- helpers
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


def _tools(s: RuntimeState) -> Mapping[str, tuple[str, str]]:
    return _CallTools(s.calls)


def _calls_text(calls: tuple[CallSpec, ...]) -> str:
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
