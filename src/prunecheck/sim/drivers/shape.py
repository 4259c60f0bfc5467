"""The shape of a small configuration: the bounds every adversarial driver
works inside, and the finite alphabet of events they choose from.

The Hypothesis search, the exhaustive explorer and the plain random walk
all draw from :func:`enabled_events`, so what one driver can reach the
others can too, and a counterexample of one is comparable with another's.
The alphabet respects the runtime's preconditions (see
:func:`prunecheck.model.runtime.apply`): results only for pending calls,
assistant text and batches only when no call is pending, a batch only when
no assistant text is streaming.  It holds no explicit budget check: the
runtime fires its own where its ``check_at`` knob puts them (after every
append, after a batch completes, or before each model call), as the
user's runtime does, so no driver reports a state that runtime never
reaches.  A run opens with the system prompt and a user message (see
:mod:`.swarm`).

Examples
--------
>>> from prunecheck.model.config import RuntimeConfig
>>> from prunecheck.model.state import initial_state
>>> from prunecheck.model.policies import builtin_policy
>>> shape = Shape.for_budget(1000, max_batches=1, max_calls=1, calls=(CallSpec("grep", "src"),))
>>> state = initial_state(RuntimeConfig(budget=1000, hard_ceiling=1500),
...                       builtin_policy("recency"), record=False)
>>> sorted({e.kind for e in enabled_events(state, Usage(), shape)})
['assistant', 'batch', 'invoke', 'user', 'write']
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from itertools import combinations_with_replacement
from typing import Any

from prunecheck.model.config import CheckAt
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.state import CallRecord, RuntimeState

__all__ = [
    "DEFAULT_CALLS",
    "EXPLORE_TIME_STEPS",
    "SEARCH_TIME_STEPS",
    "Shape",
    "Usage",
    "enabled_events",
    "ends_session",
    "hits",
    "is_hit",
    "pending_records",
    "user_text",
]

#: The tools a small configuration calls: two reads, a write to the file one
#: read sees, and a long-running background call that may span turns.
DEFAULT_CALLS: tuple[CallSpec, ...] = (
    CallSpec("read_file", "a.txt"),
    CallSpec("grep", "src"),
    CallSpec("write_file", "a.txt", Effect.WRITE),
    CallSpec("run_tests", "tests", background=True),
)

#: The gaps a search run may draw up to (seconds; a run draws one of them,
#: or none): half a minute, five minutes, half an hour — past the thresholds
#: TTLs and "idle for a while" policies use.
SEARCH_TIME_STEPS: tuple[int, ...] = (30, 300, 1800)
#: The time jumps ``explore --time-steps`` suggests (seconds).
EXPLORE_TIME_STEPS: tuple[int, ...] = (30, 300)
#: Bounds that may be 0 (the rest must be at least 1).
_MAY_BE_ZERO = frozenset({"max_writes", "max_texts", "max_users", "max_resume", "max_waits"})

_USER_TEXTS = ("fix the bug in a.txt", "grep src for TODO", "run the tests", "and a.txt again")


def _percent(budget: int, *percents: int) -> tuple[int, ...]:
    return tuple(max(1, budget * p // 100) for p in percents)


def user_text(turn: int) -> str:
    """The text of the user message that opens ``turn`` (1-based): fixed, so
    that similarity policies have words to compare without widening the
    alphabet."""
    return _USER_TEXTS[(turn - 1) % len(_USER_TEXTS)]


@dataclass(frozen=True, slots=True)
class Shape:
    """Bounds of a small configuration.

    Attributes
    ----------
    max_batches: tool batches the model may issue (retries not counted).
    max_calls: calls per batch.
    max_chunks: chunks per stream (a tool result or assistant text).
    max_users: user messages.
    max_texts: assistant text messages.
    max_writes: external writes.
    user_sizes, text_sizes, batch_sizes, result_sizes: the token sizes a
        user message, an assistant text chunk, a batch's assistant message
        and a result chunk may have.
    calls: the call specs a batch draws from.
    max_steps: rules per run of the search and the random walk.
    system_tokens: the system prompt's size.
    max_resume: earlier turns a run may resume from (a persisted history;
        0: every run is a fresh session).
    time_steps: seconds the clock may jump between two events, ascending
        (besides the second every event takes): the explorer branches on a
        user message that comes that much later while a call is pending;
        each run of the search draws gaps up to one of them, or none (see
        :mod:`.swarm`).  Empty: time never jumps.
    max_waits: time jumps one explored history may take.
    crashed: the persisted history ends with a batch cut off by a crash
        (set by :func:`~.swarm.narrow` for one run).
    swarm: each run draws its own bounds within these (swarm testing,
        see :mod:`.swarm`); the explorer ignores it.
    """

    max_batches: int = 2
    max_calls: int = 3
    max_chunks: int = 3
    max_users: int = 3
    max_texts: int = 2
    max_writes: int = 1
    user_sizes: tuple[int, ...] = (30, 300, 700)
    text_sizes: tuple[int, ...] = (30, 300, 700)
    batch_sizes: tuple[int, ...] = (30, 300, 700)
    result_sizes: tuple[int, ...] = (30, 300, 700)
    calls: tuple[CallSpec, ...] = DEFAULT_CALLS
    max_steps: int = 30
    system_tokens: int = 20
    max_resume: int = 0
    time_steps: tuple[int, ...] = ()
    max_waits: int = 1
    crashed: bool = False
    swarm: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            least = 0 if f.name in _MAY_BE_ZERO else 1
            if isinstance(value, int) and not isinstance(value, bool) and value < least:
                raise ConfigError(f"shape {f.name}", f"must be at least {least}, got {value}.")
            if f.name.endswith("_sizes") and (not value or any(t <= 0 for t in value)):
                raise ConfigError(
                    f"shape {f.name}",
                    f"must be positive token counts, got {value}.",
                    "for example 30,300,700 for a budget of 1000.",
                )
        if not self.calls:
            raise ConfigError("shape calls", "must name at least one call spec.")
        steps = self.time_steps
        if any(t <= 0 for t in steps) or list(steps) != sorted(set(steps)):
            raise ConfigError(
                "shape time_steps",
                f"must be distinct positive seconds, ascending, got {steps}.",
                "for example 30,300 (half a minute, five minutes); none for no time jumps.",
            )

    @classmethod
    def for_budget(cls, budget: int, **bounds: Any) -> Shape:
        """The default shape of ``search`` and ``check``, every size scaled to
        ``budget``, wide enough for real runtimes' sizes; each run draws its
        own narrower bounds (``swarm``), most of them small.

        Up to 8 batches of up to 8 calls, 4 chunks per stream, 12 user turns,
        sessions resumed from up to 16 earlier turns (contexts of 60 and more
        messages); gaps between events of up to half a minute, five minutes
        or half an hour (each run draws which, or none).  Sizes: 1 %, 3 %,
        30 % and 70 % of the budget for every kind, and 130 % for a tool
        result (one output larger than the budget).

        >>> Shape.for_budget(32000).user_sizes
        (320, 960, 9600, 22400)
        >>> Shape.for_budget(32000).result_sizes[-1]
        41600
        """
        sizes = _percent(budget, 1, 3, 30, 70)
        wide: dict[str, Any] = dict(
            max_batches=8,
            max_calls=8,
            max_chunks=4,
            max_users=12,
            max_texts=4,
            max_writes=1,
            max_resume=16,
            time_steps=SEARCH_TIME_STEPS,
            swarm=True,
            system_tokens=_percent(budget, 2)[0],
            user_sizes=sizes,
            text_sizes=sizes,
            batch_sizes=sizes[:2],
            result_sizes=(*sizes, *_percent(budget, 130)),
        )
        return cls(**{**wide, **bounds})

    @classmethod
    def small(cls, budget: int = 1000, **bounds: Any) -> Shape:
        """The explorer's default: small enough to enumerate every
        interleaving to depth 8 and more.  One size per kind of message
        (user 40 %, text 30 %, batch 5 % of the budget) and two for result
        chunks (5 %: a short partial result; 40 %); up to 2 batches of up to
        2 calls of one tool, 2 chunks per stream, 2 user messages (the
        opening's, and one that may arrive while a batch is pending: two
        of them and a result are over the budget), 1 assistant text, no
        external write, no swarm, no time jump (each event a second after
        the one before: ``time_steps=EXPLORE_TIME_STEPS`` lets the user's
        message come half a minute or five minutes later while a call runs,
        at about twice the states).  The domain document's two incidents
        fit in it.
        """
        small: dict[str, Any] = dict(
            max_batches=2,
            max_calls=2,
            max_chunks=2,
            max_users=2,
            max_texts=1,
            max_writes=0,
            calls=DEFAULT_CALLS[:1],
            user_sizes=_percent(budget, 40),
            text_sizes=_percent(budget, 30),
            batch_sizes=_percent(budget, 5),
            result_sizes=_percent(budget, 5, 40),
            system_tokens=_percent(budget, 2)[0],
        )
        return cls(**{**small, **bounds})

    @property
    def sizes(self) -> tuple[int, ...]:
        """Every size of any kind, ascending."""
        return tuple(
            sorted({*self.user_sizes, *self.text_sizes, *self.batch_sizes, *self.result_sizes})
        )

    def sizes_for(self, event: Event) -> tuple[int, ...]:
        """The sizes an event of this kind may have (empty if it has none)."""
        if isinstance(event, UserMessage):
            return self.user_sizes
        if isinstance(event, AssistantChunk):
            return self.text_sizes
        if isinstance(event, IssueBatch):
            return self.batch_sizes
        if isinstance(event, ResultChunk):
            return self.result_sizes
        return ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("user_sizes", "text_sizes", "batch_sizes", "result_sizes", "time_steps"):
            out[name] = list(out[name])
        out["calls"] = [
            f"{c.tool}({c.path})"
            + (" write" if c.effect is Effect.WRITE else "")
            + (" background" if c.background else "")
            for c in self.calls
        ]
        return out


@dataclass(frozen=True, slots=True)
class Usage:
    """How much of a shape's bounds a run has used so far."""

    users: int = 0
    batches: int = 0
    texts: int = 0
    writes: int = 0
    waits: int = 0

    def after(self, event: Event, before: RuntimeState) -> Usage:
        """Usage after ``event`` is applied to a state that was ``before``."""
        if isinstance(event, UserMessage):
            return replace(self, users=self.users + 1)
        if isinstance(event, IssueBatch):
            return replace(self, batches=self.batches + 1)
        if isinstance(event, AssistantChunk) and before.assistant_stream is None:
            return replace(self, texts=self.texts + 1)
        if isinstance(event, ExternalWrite):
            return replace(self, writes=self.writes + 1)
        return self

    def waited(self) -> Usage:
        """Usage after one more time jump."""
        return replace(self, waits=self.waits + 1)

    def as_tuple(self) -> tuple[int, int, int, int, int]:
        return (self.users, self.batches, self.texts, self.writes, self.waits)


def is_hit(incident: Incident, target: frozenset[IncidentKind] | None) -> bool:
    """Whether a driver stops on ``incident``: a violation, or one of the
    ``target`` kinds when a target is given (a target may name costs)."""
    return incident.is_violation if target is None else incident.kind in target


def hits(
    incidents: tuple[Incident, ...], target: frozenset[IncidentKind] | None
) -> tuple[Incident, ...]:
    """The incidents a driver stops on."""
    return tuple(i for i in incidents if is_hit(i, target))


#: The incident kind (by value) that ends a session: the runtime's retry
#: budget is spent (``max_retries``) and the error surfaces.
SESSION_END = IncidentKind.SESSION_ABORT.value


def ends_session(incidents: tuple[Incident, ...]) -> bool:
    """Whether a step ended the session (a session abort): a driver's run
    ends there, as a real session does."""
    return any(i.kind.value == SESSION_END for i in incidents)


def pending_records(state: RuntimeState) -> list[CallRecord]:
    """Pending calls, in issue order."""
    return [state.calls[c] for c in sorted(state.pending, key=lambda c: int(c[1:]))]


def _is_noop_invoke(state: RuntimeState) -> bool:
    cfg = state.config
    return (
        state.rejected_units is None
        and not state.orphans
        and not state.unanswered
        and not (cfg.check_at is CheckAt.BEFORE_INVOKE and state.context.used > cfg.budget)
    )


def enabled_events(
    state: RuntimeState, usage: Usage, shape: Shape, *, reduce: bool = False
) -> list[Event]:
    """Every event the shape allows in ``state``, in a fixed order.

    Parameters
    ----------
    state, usage:
        The runtime now, and what of the shape it has used.
    shape:
        The bounds.
    reduce:
        Leave out events that cannot change the state except for the step
        clock (an invocation that cannot be rejected and fires no budget
        check that could prune) and, of pending
        calls of one batch with the same spec and no result yet, keep only
        the first (they are interchangeable).  The explorer sets it.

    Returns
    -------
    list
        Events; applying any of them to ``state`` never raises TraceError.
    """
    out: list[Event] = []
    if usage.users < shape.max_users:
        text = user_text(state.turn + 1)
        out.extend(UserMessage(t, text) for t in shape.user_sizes)
    stream = state.assistant_stream
    texts = shape.text_sizes
    if not state.pending:
        if stream is not None:
            if stream.chunks + 1 < shape.max_chunks:
                out.extend(AssistantChunk(t, last=False) for t in texts)
            out.extend(AssistantChunk(t) for t in texts)
        elif usage.texts < shape.max_texts:
            out.extend(AssistantChunk(t) for t in texts)
            if shape.max_chunks > 1:
                out.extend(AssistantChunk(t, last=False) for t in texts)
        if stream is None and usage.batches < shape.max_batches:
            for width in range(1, shape.max_calls + 1):
                for calls in combinations_with_replacement(shape.calls, width):
                    out.extend(IssueBatch(calls, t) for t in shape.batch_sizes)
    seen: set[tuple[str, CallSpec, int]] = set()
    for record in pending_records(state):
        if reduce and record.chunks == 0 and record.target is None:
            twin = (record.batch, record.spec, record.version_seen)
            if twin in seen:
                continue
            seen.add(twin)
        if record.chunks + 1 < shape.max_chunks:
            out.extend(ResultChunk(record.id, t, last=False) for t in shape.result_sizes)
        out.extend(ResultChunk(record.id, t) for t in shape.result_sizes)
        out.append(ToolFailure(record.id))
        if not reduce:
            out.append(ToolFailure(record.id, FailureReason.TIMEOUT))
    if not state.pending and stream is None and not (reduce and _is_noop_invoke(state)):
        out.append(Invoke())
    if state.rejected_units is not None:
        out.append(Retry())
    if usage.writes < shape.max_writes:
        paths = dict.fromkeys(c.path for c in shape.calls if c.path)
        out.extend(ExternalWrite(p) for p in paths)
    return out
