"""What a runtime holds: call and batch records, the state, a step's result.

Records are immutable and shared between copies; the state's containers
are copied by :meth:`RuntimeState.copy`, which is what makes the pure
:func:`prunecheck.model.runtime.step` cheap to write on top of ``apply``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

from .config import RuntimeConfig
from .context import Context, Message
from .events import CallSpec
from .incidents import Incident
from .notes import Note
from .policies import Policy
from .server import ServerState

__all__ = [
    "BatchRecord",
    "CallRecord",
    "CallStatus",
    "CounterName",
    "RuntimeState",
    "StepResult",
    "evolve",
    "initial_state",
]

_R = TypeVar("_R", "Message", "CallRecord")


class CallStatus(StrEnum):
    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class CounterName(StrEnum):
    """What a runtime counts in ``RuntimeState.counters`` besides incidents
    (which it counts under their :class:`~prunecheck.model.incidents.IncidentKind`
    value).  Read with :meth:`RuntimeState.count`."""

    BLOCKED_INVOCATIONS = "blocked_invocations"
    CHECKS = "checks"
    DEFERRED_CHECKS = "deferred_checks"
    EVICTED = "evicted"
    INVOCATIONS = "invocations"
    #: Coverage (what a run exercised, read by the drivers' coverage record):
    #: checks that found the context over budget, those among them that came
    #: with a call pending or a message open, checks with a message open,
    #: non-empty proposals (and those made with live state), prunes applied
    #: with live state, user messages that arrived while a call was pending.
    LIVE_PRESSED_CHECKS = "live_pressed_checks"
    LIVE_PROPOSALS = "live_proposals"
    LIVE_PRUNES = "live_prunes"
    MID_BATCH_MESSAGES = "mid_batch_messages"
    OPEN_CHECKS = "open_checks"
    POLICY_CALLS = "policy_calls"
    PRESSED_CHECKS = "pressed_checks"
    PROPOSALS = "proposals"
    PRUNES = "prunes"
    REFUSED_PRUNES = "refused_prunes"
    REINJECTIONS = "reinjections"
    RETRIES = "retries"
    SESSION_ABORTS = "session_aborts"
    SESSIONS = "sessions"
    SPILLS = "spills"
    STREAM_LOSSES = "stream_losses"


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
    retry_streak: int = 0  # retries since the last accepted invocation
    over_ceiling: bool = False
    deferred: bool = False
    orphans: set[str] = field(default_factory=set)
    unanswered: set[str] = field(default_factory=set)
    reported: set[tuple[str, str]] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    record: bool = True
    #: What the provider's server holds and edits (None: nothing, the model
    #: sees the client's context as it is).
    server: ServerState | None = None
    #: Whether a batch came with a reasoning item: then every invocation asks
    #: the provider's rules (a reasoning item cut from its batch breaks none of
    #: the pairing the index tracks).
    reasoned: bool = False

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
            server=None if self.server is None else self.server.copy(),
        )

    def batch_of_call(self) -> dict[str, str]:
        return {c.id: c.batch for c in self.calls.values()}

    def count(self, name: str) -> int:
        return self.counters.get(name, 0)


def initial_state(config: RuntimeConfig, policy: Policy, *, record: bool = True) -> RuntimeState:
    """A runtime with an empty context."""
    return RuntimeState(config=config, policy=policy, record=record)


_EVOLVERS: dict[type, Callable[..., Any]] = {}


def evolve(record: _R, **changes: Any) -> _R:
    """``dataclasses.replace`` for the runtime's hot path (result and stream
    chunks): the same new record, built without re-running ``__init__``'s
    per-field checks, by a copier written once per record class (as
    ``dataclasses`` writes ``__init__``); about four times as fast.  Only
    for records without ``__post_init__``; others go through
    ``dataclasses.replace``."""
    cls = type(record)
    copier = _EVOLVERS.get(cls)
    if copier is None:
        if hasattr(cls, "__post_init__"):
            return replace(record, **changes)
        copier = _EVOLVERS[cls] = _copier(cls)
    new: _R = copier(record, changes)
    return new


def _copier(cls: type) -> Callable[..., Any]:
    """``copy(record, changes)`` for a frozen slotted record class: each
    field set through its slot, from ``changes`` or from ``record``."""
    names = tuple(f.name for f in fields(cls))
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    body = ["def copy(record, changes):", "    obj = new(cls)"]
    for i, name in enumerate(names):
        scope[f"set{i}"] = cls.__dict__[name].__set__  # the slot, past the frozen __setattr__
        body.append(f"    set{i}(obj, changes[{name!r}] if {name!r} in changes else record.{name})")
    body.append("    return obj")
    exec("\n".join(body), scope)
    copier: Callable[..., Any] = scope["copy"]
    return copier
