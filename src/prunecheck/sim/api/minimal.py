"""Shrinking any failing trace to a minimal one with the same incident class.

A trace from ``check``'s simulated suite, a sweep, ``explore``, ``search``
or an imported incident carries times, several sessions, external writes
and stream chunks; :func:`shrink_trace` reduces it by delta debugging over
its events, with the one shrinker every subject shares
(:func:`prunecheck.sim.drivers.shrinking.ddmin`): remove a chunk of events,
replay, keep the removal if the replay still meets the same incident class;
halve the chunks when no chunk can go, down to single events.  Each removal is also
tried with the tokens it removed moved onto the nearest earlier plain
message (a user message or a whole assistant text), so that many small
messages that filled the budget become one large one and the budget
check still fires.  Results of a removed batch go with it; calls are
renumbered as the runtime numbers them; kept events keep their times
(time never runs backwards, and ages stay what they were).  A trace
without times is then polished by the search's own
:func:`~prunecheck.sim.drivers.polish.minimize` (pair deletions, resizes
within the search's sizes).

*The same incident class* is the class of the trace's first violation:
a candidate counts only if its first step with a violation has one of that
class; the shrunk trace ends at that step.  ``target`` names other classes
instead (the trace then ends at the first incident of one of them, e.g. a
provider rejection after the prune that caused it).

Work is bounded by a count of replays (``max_replays``), not a time, so
that the same trace gives the same result; a ``deadline`` may stop it
earlier.  :class:`Shrunk` says which bound it reached and why.

Examples
--------
>>> from prunecheck.model.events import SystemPrompt, UserMessage, IssueBatch, CallSpec
>>> from prunecheck.model.events import ResultChunk, ExternalWrite
>>> from prunecheck.model.policies import builtin_policy
>>> from prunecheck.model.model_system import ModelSystem
>>> from prunecheck.model.config import RuntimeConfig
>>> events = (SystemPrompt(100), UserMessage(100), ExternalWrite("a"),
...           IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 100),
...           ExternalWrite("b"), ResultChunk("c1", 900), ResultChunk("c2", 10))
>>> trace = Trace("lowest_salience", RuntimeConfig(budget=1000, hard_ceiling=2000), events)
>>> shrunk = shrink_trace(trace, ModelSystem(builtin_policy("lowest_salience")))
>>> shrunk.kinds, shrunk.original, len(shrunk.trace.events), shrunk.fixpoint
(('invalid_prune',), 6, 4, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.events import (
    AssistantChunk,
    Event,
    ExternalWrite,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.shrinking import ddmin
from prunecheck.sim.evidence.harm import extend_to_harm

__all__ = [
    "AIM",
    "DEFAULT_REPLAYS",
    "Shrunk",
    "incident_class",
    "minimal_reproduction",
    "shrink_note",
    "shrink_trace",
]

#: The length a shrunk reproduction should not exceed (events to the violation).
AIM = 15
#: Replays one shrink may spend (a count, so the same trace shrinks the same).
DEFAULT_REPLAYS = 4000


@dataclass(frozen=True, slots=True)
class Shrunk:
    """A shrunk trace and the bound it reached.

    Attributes
    ----------
    trace : Trace
        The shrunk trace; it ends at the step that meets the class.
    original : int
        Events of the trace given (up to its first hit).
    kinds : tuple of str
        The incident class(es) kept.
    replays : int
        Replays spent.
    fixpoint : bool
        No single event (nor any chunk tried) could be removed: 1-minimal.
    stopped : str
        Why shrinking stopped: ``"fixpoint"``, ``"replay limit"`` or ``"deadline"``.
    """

    trace: Trace
    original: int
    kinds: tuple[str, ...]
    replays: int
    fixpoint: bool
    stopped: str

    @property
    def events(self) -> int:
        return len(self.trace.events)

    def summary(self) -> str:
        """One sentence: the bound reached, and why not the aim if above it."""
        kinds = ", ".join(k.replace("_", " ") for k in self.kinds)
        head = f"shrunk from {self.original} to {self.events} events ({kinds})"
        if self.fixpoint:
            head += ", 1-minimal: no single event can be removed"
        else:
            head += f"; stopped at the {self.stopped} after {self.replays} replays"
        if self.events > AIM:
            why = (
                "no event can go without losing the class"
                if self.fixpoint
                else f"the {self.stopped} came first (raise --max-replays)"
            )
            head += f"; above the aim of {AIM} events: {why}"
        return head


@dataclass(frozen=True, slots=True)
class _Item:
    index: int  # position in the original trace
    event: Event
    at: float | None
    ref: tuple[int, int] | None  # (index of the issuing batch, position in it)


def incident_class(trace: Trace, system: System[Any]) -> IncidentKind | None:
    """The class of the trace's first violation, or None if it has none."""
    for step, _ in replay(trace, system, record=False):
        for incident in step.result.incidents:
            if incident.is_violation:
                return incident.kind
    return None


def _items(trace: Trace, system: System[Any]) -> list[_Item]:
    """The trace's events with the batch each call-naming event refers to."""
    state = system.initial(trace.config)
    owner: dict[str, tuple[int, int]] = {}
    out = []
    for i, event in enumerate(trace.events):
        at = trace.times[i] if trace.times is not None else None
        ref = owner.get(event.call) if isinstance(event, ResultChunk | ToolFailure) else None
        if isinstance(event, IssueBatch):
            next_call = system.truth(state).next_call
            owner.update({f"c{next_call + k}": (i, k) for k in range(len(event.calls))})
        out.append(_Item(i, event, at, ref))
        try:
            system.apply(state, event, at)
        except (TraceError, PolicyError):
            break
    return out


Hit = Callable[[tuple[IncidentKind, ...]], bool | None]


def _hit_rule(kinds: frozenset[IncidentKind], strict: bool) -> Hit:
    """True: the step meets the class; False: it breaks the candidate (a
    violation of another class came first); None: go on."""

    def hit(found: tuple[IncidentKind, ...]) -> bool | None:
        if any(k in kinds for k in found):
            return True
        if strict and any(k.is_violation for k in found):
            return False
        return None

    return hit


class _Runner:
    """Replays candidates, counting the replays."""

    def __init__(
        self,
        config: RuntimeConfig,
        system: System[Any],
        hit: Hit,
        opening: bool,
        max_replays: int,
        deadline: float | None,
    ) -> None:
        self.config, self.system, self.hit, self.opening = config, system, hit, opening
        self.max_replays, self.deadline = max_replays, deadline
        self.replays = 0
        self.stopped = ""

    def spent(self) -> bool:
        if self.replays >= self.max_replays:
            self.stopped = "replay limit"
        elif self.deadline is not None and time.monotonic() >= self.deadline:
            self.stopped = "deadline"
        return bool(self.stopped)

    def run(self, items: Sequence[_Item]) -> tuple[list[_Item], list[Event]] | None:
        """The candidate's prefix up to its hit (items and renumbered events),
        or None if it is impossible or does not hit."""
        if self.opening and not _opens([i.event for i in items]):
            return None
        self.replays += 1
        system = self.system
        state = system.initial(self.config)
        first: dict[int, int] = {}
        kept: list[_Item] = []
        events: list[Event] = []
        for item in items:
            event = item.event
            if item.ref is not None and isinstance(event, ResultChunk | ToolFailure):
                if item.ref[0] not in first:
                    continue
                event = replace(event, call=f"c{first[item.ref[0]] + item.ref[1]}")
            if isinstance(event, IssueBatch):
                first[item.index] = system.truth(state).next_call
            try:
                result = system.apply(state, event, item.at)
            except (TraceError, PolicyError):
                return None
            kept.append(item)
            events.append(event)
            verdict = self.hit(tuple(i.kind for i in result.incidents))
            if verdict is not None:
                return (kept, events) if verdict else None
        return None


def _opens(events: Sequence[Event]) -> bool:
    """Whether a run opens as a session does: the system prompt, then (after
    any change to the world outside the agent) a user message."""
    if not events or not isinstance(events[0], SystemPrompt):
        return False
    after = next((e for e in events[1:] if not isinstance(e, ExternalWrite)), None)
    return isinstance(after, UserMessage)


def _tokens(event: Event) -> int:
    return int(getattr(event, "tokens", 0))


def _plain(event: Event) -> bool:
    return isinstance(event, UserMessage) or (isinstance(event, AssistantChunk) and event.last)


def _stream_key(item: _Item) -> object | None:
    """Which stream a non-final chunk belongs to (None if it is no such chunk)."""
    event = item.event
    if isinstance(event, ResultChunk) and not event.last:
        return item.ref or event.call
    if isinstance(event, AssistantChunk) and not event.last:
        return "assistant"
    return None


def _same_stream(item: _Item, key: object) -> bool:
    event = item.event
    if isinstance(event, ResultChunk):
        return (item.ref or event.call) == key
    return isinstance(event, AssistantChunk) and key == "assistant"


def _grow(item: _Item, tokens: int) -> _Item:
    event: Any = item.event  # a message-bearing event: it has tokens
    return replace(item, event=replace(event, tokens=_tokens(event) + tokens))


def _without(items: list[_Item], drop: set[int], transfer: str) -> list[_Item] | None:
    """``items`` minus the positions ``drop`` (and the results of a dropped
    batch).  ``transfer`` moves the tokens removed: ``"plain"`` onto the
    nearest earlier kept plain message, ``"stream"`` (stream chunks only)
    onto the next kept chunk of the same stream; None when it cannot."""
    gone_batches = {items[p].index for p in drop if isinstance(items[p].event, IssueBatch)}
    removed = [
        p
        for p, item in enumerate(items)
        if p in drop or (item.ref is not None and item.ref[0] in gone_batches)
    ]
    gone = set(removed)
    grown: dict[int, int] = {}
    if transfer == "plain":
        moved = sum(_tokens(items[p].event) for p in removed)
        host = next(
            (p for p in range(min(drop) - 1, -1, -1) if p not in gone and _plain(items[p].event)),
            None,
        )
        if host is None or moved == 0:
            return None
        grown[host] = moved
    elif transfer == "stream":
        for p in removed:
            key = _stream_key(items[p])
            if key is None:
                return None
            host = next(
                (
                    q
                    for q in range(p + 1, len(items))
                    if q not in gone and _same_stream(items[q], key)
                ),
                None,
            )
            if host is None:
                return None
            grown[host] = grown.get(host, 0) + _tokens(items[p].event)
    return [
        _grow(item, grown[p]) if p in grown else item
        for p, item in enumerate(items)
        if p not in gone
    ]


def _shrink_items(items: list[_Item], runner: _Runner) -> tuple[list[_Item], list[Event], bool]:
    """Delta debugging by removal (:func:`~prunecheck.sim.drivers.shrinking.ddmin`):
    each chunk removed as is, then with its tokens moved onto a kept plain
    message, then onto the next chunk of its stream."""
    found = runner.run(items)
    if found is None:
        raise ValueError("the trace does not meet its own class")  # pragma: no cover
    events = found[1]

    def attempt(current: Sequence[_Item], drop: range) -> list[_Item] | None:
        nonlocal events
        for transfer in ("", "plain", "stream"):
            candidate = _without(list(current), set(drop), transfer)
            got = None if candidate is None else runner.run(candidate)
            if got is not None and len(got[0]) < len(current):
                events = got[1]
                return got[0]
        return None

    done = ddmin(found[0], attempt, stop=runner.spent)
    return list(done.items), events, done.fixpoint


def shrink_trace(
    trace: Trace,
    system: System[Any],
    *,
    target: Sequence[IncidentKind | str] | None = None,
    max_replays: int = DEFAULT_REPLAYS,
    deadline: float | None = None,
) -> Shrunk:
    """Shrink a failing trace to a minimal one with the same incident class.

    Parameters
    ----------
    trace : Trace
        Any failing trace (suite, sweep, explore, search, imported).
    system : System
        What to replay with (the model runtime with the policy
        ``trace.policy`` names, or the runtime under test).
    target : sequence of IncidentKind or str, optional
        Keep these classes instead of the first violation's.
    max_replays : int
        Replays it may spend.
    deadline : float, optional
        A :func:`time.monotonic` instant to stop at.

    Returns
    -------
    Shrunk
        The shrunk trace (``meta.shrunk`` says from what) and the bound reached.

    Raises
    ------
    TraceError
        if the trace meets no violation (or no ``target`` class).
    """
    if target:
        kinds = frozenset(IncidentKind(k) for k in target)
        strict = False
    else:
        first = incident_class(trace, system)
        if first is None:
            raise TraceError(
                "trace",
                "shows no violation: there is nothing to shrink.",
                "shrink a trace that fails (its replay shows a violation).",
            )
        kinds, strict = frozenset({first}), True
    opening = _opens(trace.events)
    runner = _Runner(trace.config, system, _hit_rule(kinds, strict), opening, max_replays, deadline)
    start = _items(trace, system)
    head = runner.run(start)
    if head is None:
        raise TraceError(
            "trace",
            f"never meets {', '.join(sorted(k.value for k in kinds))}.",
            "name a class the trace's replay shows (--target).",
        )
    original = len(head[0])
    items, events, fixpoint = _shrink_items(head[0], runner)
    if trace.times is None and len(events) > 1 and not runner.spent():
        events, fixpoint = _polish(trace, system, events, kinds, strict, runner, fixpoint)
        items = []
    times = (
        tuple(float(i.at) for i in items if i.at is not None)
        if items and trace.times is not None
        else None
    )
    names = tuple(sorted(k.value for k in kinds))
    bare = replace(trace, events=tuple(events), times=times)
    done = Shrunk(bare, original, names, runner.replays, fixpoint, runner.stopped or "fixpoint")
    meta = {
        **{k: v for k, v in trace.meta.items() if k not in ("expect", "story", "harm")},
        "shrunk": {
            "from": original,
            "to": len(events),
            "kinds": list(names),
            "fixpoint": fixpoint,
            "bound": done.summary(),
        },
        "expect": {"violations": _violations(trace, system, events, times)},
    }
    return replace(done, trace=replace(bare, meta=meta))


def shrink_note(trace: Trace) -> str:
    """What a reproduction's ``meta`` says of its shrinking and its harm,
    as one sentence ("" if it says nothing)."""
    parts = []
    shrunk = trace.meta.get("shrunk")
    if isinstance(shrunk, dict) and isinstance(shrunk.get("bound"), str):
        parts.append(shrunk["bound"])
    harm = trace.meta.get("harm")
    if isinstance(harm, dict) and harm.get("added"):
        kinds = ", ".join(str(k).replace("_", " ") for k in harm.get("kinds", []))
        parts.append(
            f"then {harm['added']} more event(s) the runtime makes show the harm ({kinds})"
        )
    return "; ".join(parts)


def _violations(
    trace: Trace, system: System[Any], events: list[Event], times: tuple[float, ...] | None
) -> list[str]:
    bare = replace(trace, events=tuple(events), times=times, meta={})
    kinds = {
        i.kind.value
        for step, _ in replay(bare, system, record=False)
        for i in step.result.incidents
        if i.is_violation
    }
    return sorted(kinds)


def _polish(
    trace: Trace,
    system: System[Any],
    events: list[Event],
    kinds: frozenset[IncidentKind],
    strict: bool,
    runner: _Runner,
    fixpoint: bool,
) -> tuple[list[Event], bool]:
    """The search's own polish (pair deletions, resizes) on a trace
    without times; kept only if the result still meets the class the
    strict way and is shorter."""
    from prunecheck.sim.drivers.polish import minimize
    from prunecheck.sim.drivers.shape import Shape

    try:
        polished = minimize(
            events,
            trace.config,
            system,
            Shape.for_budget(trace.config.budget),
            kinds,
            deadline=runner.deadline,
        )
    except (TraceError, PolicyError):
        return events, fixpoint
    if len(polished) >= len(events):
        return events, fixpoint
    check = runner.run([_Item(i, e, None, None) for i, e in enumerate(polished)])
    if check is None or len(check[1]) != len(polished):
        return events, fixpoint
    return polished, fixpoint


def minimal_reproduction(
    trace: Trace,
    system: System[Any],
    *,
    max_replays: int = DEFAULT_REPLAYS,
    deadline: float | None = None,
) -> Trace:
    """A reproduction as ``check`` shows it: ``trace`` shrunk to its first
    violation's class (:func:`shrink_trace`), then run on to the harm it
    causes (:func:`~prunecheck.sim.evidence.harm.extend_to_harm`).
    A trace that cannot be shrunk (no violation, a policy error) is only
    extended, and its ``meta.shrunk`` says why (so that :func:`shrink_note`
    names it wherever the reproduction is shown)."""
    try:
        trace = shrink_trace(trace, system, max_replays=max_replays, deadline=deadline).trace
    except (TraceError, PolicyError) as exc:
        why = f"not shrunk: {exc.paragraph()}"
        shrunk = {"from": len(trace.events), "to": len(trace.events), "bound": why}
        trace = replace(trace, meta={**trace.meta, "shrunk": shrunk})
    return extend_to_harm(trace, system)
