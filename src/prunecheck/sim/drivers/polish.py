"""Polishing a counterexample after Hypothesis has shrunk it: delete single
events while the run still hits (the one shrinker,
:func:`prunecheck.sim.drivers.shrinking.ddmin`, at its finest granularity);
then resize one within the shape's sizes for its kind, delete two, or
delete one and resize another (a batch goes with its results); repeat to a
fixpoint.  A run whose events came with gaps of time between them
(:func:`minimize_timed`) keeps each kept event's time when another is
deleted, and then has every gap cut to none, or to half, while it still
hits: toward a run without gaps.

The opening of a run — the system prompt and the user's first message —
is never deleted: a counterexample opens as a real session does.

Each round costs O(n² · |sizes|) replays of at most n events, n being
small after shrinking.  A ``deadline`` (a :func:`time.monotonic` instant)
stops polishing early with the shortest run found so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.events import (
    AssistantChunk,
    Event,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import S, System
from prunecheck.sim.drivers.shape import Shape, hits
from prunecheck.sim.drivers.shrinking import ddmin

__all__ = ["minimize", "minimize_timed", "opening_length"]


def opening_length(events: Sequence[Event]) -> int:
    """How many leading events are the run's opening (system prompt, then
    the user's first message): 2, or 0 for a run that opens otherwise."""
    if (
        len(events) >= 2
        and isinstance(events[0], SystemPrompt)
        and isinstance(events[1], UserMessage)
    ):
        return 2
    return 0


_Ref = tuple[int, int]  # (index of the issuing batch event, position in the batch)


def _refs(
    events: Sequence[Event], times: Sequence[float], config: RuntimeConfig, system: System[S]
) -> list[_Ref | None]:
    """For each event naming a call, which batch event issued that call."""
    state = system.initial(config)
    owner: dict[str, _Ref] = {}
    refs: list[_Ref | None] = []
    for i, event in enumerate(events):
        refs.append(owner.get(event.call) if isinstance(event, ResultChunk | ToolFailure) else None)
        if isinstance(event, IssueBatch):
            first = system.truth(state).next_call
            owner.update({f"c{first + k}": (i, k) for k in range(len(event.calls))})
        system.apply(state, event, times[i])
    return refs


def _rerun(
    items: list[_Item],
    config: RuntimeConfig,
    system: System[S],
    target: frozenset[IncidentKind] | None,
) -> tuple[list[Event], list[float]] | None:
    """Replay edited events, renumbering calls; the prefix up to the first
    hit and the gap before each of its events, or None if the edit is
    impossible or no longer hits.  Results of a deleted batch are deleted
    with it (their gaps too)."""
    state = system.initial(config)
    first_call: dict[int, int] = {}
    out: list[Event] = []
    gaps: list[float] = []
    at = -1.0
    for index, event, ref, gap in items:
        if ref is not None and isinstance(event, ResultChunk | ToolFailure):
            if ref[0] not in first_call:
                continue
            event = replace(event, call=f"c{first_call[ref[0]] + ref[1]}")
        if isinstance(event, IssueBatch):
            first_call[index] = system.truth(state).next_call
        at += 1.0 + gap
        try:
            result = system.apply(state, event, at)
        except (TraceError, PolicyError):
            return None
        out.append(event)
        gaps.append(gap)
        if hits(result.incidents, target):
            return out, gaps
    return None


def _resized(event: Event, tokens: int) -> Event:
    if isinstance(event, UserMessage | AssistantChunk | IssueBatch | ResultChunk):
        return replace(event, tokens=tokens)
    return event


def _gaps(times: Sequence[float], count: int) -> list[float]:
    """The seconds before each event besides the one every event takes."""
    if len(times) != count:
        raise ValueError(f"{len(times)} times for {count} events")
    return [t - (times[i - 1] + 1.0 if i else 0.0) for i, t in enumerate(times)]


def _times(gaps: list[float]) -> list[float]:
    out, at = [], -1.0
    for gap in gaps:
        at += 1.0 + gap
        out.append(at)
    return out


def minimize(
    events: Sequence[Event],
    config: RuntimeConfig,
    system: System[S],
    shape: Shape,
    target: frozenset[IncidentKind] | None = None,
    *,
    deadline: float | None = None,
) -> list[Event]:
    """Polish a counterexample of ``system`` (see the module's doc); the opening stays."""
    return minimize_timed(events, None, config, system, shape, target, deadline=deadline)[0]


def minimize_timed(
    events: Sequence[Event],
    times: Sequence[float] | None,
    config: RuntimeConfig,
    system: System[S],
    shape: Shape,
    target: frozenset[IncidentKind] | None = None,
    *,
    deadline: float | None = None,
) -> tuple[list[Event], list[float] | None]:
    """Polish a counterexample whose events happened at ``times`` (None:
    the step count, as a replay without times assumes); the polished events
    and their times (None if given None).

    Raises
    ------
    ValueError
        if ``times`` is not one time per event.
    """
    current = (list(events), None if times is None else _gaps(times, len(events)))
    while deadline is None or time.monotonic() < deadline:
        edits, settled = _delete_singles(current, config, system, target, deadline)
        current = edits.events, edits.gaps
        if not settled:
            break
        better = edits.other(shape, deadline)
        if better is None:
            break
        current = better
    kept, gaps = current
    return kept, None if gaps is None else _times(gaps)


_Item = tuple[int, Event, _Ref | None, float]  # index, event, its batch, the gap before it
_Run = tuple[list[Event], list[float] | None]  # events and the gaps before them (None: no times)


class _Edits:
    """Edits of one run (deletions, resizes, cut gaps), each replayed."""

    def __init__(
        self,
        events: list[Event],
        gaps: list[float] | None,
        config: RuntimeConfig,
        system: System[S],
        target: frozenset[IncidentKind] | None,
    ) -> None:
        self.events, self.gaps, self.config, self.system = events, gaps, config, system
        self.target = target
        self.before = gaps or [0.0] * len(events)
        refs = _refs(events, _times(self.before), config, system)
        self.items = list(zip(range(len(events)), events, refs, self.before, strict=True))
        self.keep = opening_length(events)

    def attempt(
        self,
        drop: tuple[int, ...] | range,
        resize: tuple[int, int] | None = None,
        cut: tuple[int, float] | None = None,
    ) -> _Run | None:
        """The edited run up to its hit if it is shorter (or, for a cut gap,
        as long with less waiting), else None."""
        chosen: list[_Item] = []
        carry = 0.0  # a deleted event's time goes to the next one kept
        for index, event, ref, gap in self.items:
            if index in drop:
                if self.gaps is not None:
                    carry += 1.0 + gap
                continue
            if resize is not None and resize[0] == index:
                event = _resized(event, resize[1])
            if cut is not None and cut[0] == index:
                gap = cut[1]
            chosen.append((index, event, ref, gap + carry))
            carry = 0.0
        run = _rerun(chosen, self.config, self.system, self.target)
        if run is None:
            return None
        out, out_gaps = run
        n = len(self.items)
        if len(out) < n or (cut is not None and len(out) == n and sum(out_gaps) < sum(self.before)):
            return out, None if self.gaps is None else out_gaps
        return None

    def other(self, shape: Shape, deadline: float | None) -> _Run | None:
        """The first edit besides a single deletion that still hits: a
        resize, a pair deleted, one deleted and another resized, then every
        gap toward none."""
        events, keep, n = self.events, self.keep, len(self.items)
        resizes = [
            (k, size)
            for k in range(keep, n)
            for size in shape.sizes_for(events[k])
            if size != getattr(events[k], "tokens", size)
        ]
        edits: list[tuple[tuple[int, ...], tuple[int, int] | None]] = [((), r) for r in resizes]
        edits += [((i, j), None) for i in range(keep, n) for j in range(i + 1, n)]
        edits += [((i,), r) for i in range(keep, n) for r in resizes if r[0] != i]
        for count, (drop, resize) in enumerate(edits):
            if deadline is not None and count % 64 == 0 and time.monotonic() >= deadline:
                return None
            found = self.attempt(drop, resize)
            if found is not None:
                return found
        for k in range(n):  # then every gap toward none
            if self.before[k] > 0:
                found = _cut(k, self.before[k], self.attempt)
                if found is not None:
                    return found
        return None


def _delete_singles(
    run: _Run,
    config: RuntimeConfig,
    system: System[S],
    target: frozenset[IncidentKind] | None,
    deadline: float | None,
) -> tuple[_Edits, bool]:
    """Single events deleted, after the opening, while the run still hits:
    the one shrinker (:func:`~prunecheck.sim.drivers.shrinking.ddmin`) at
    its finest granularity.  The edits of the run reached, and whether it is
    1-minimal (False: the deadline came first)."""
    first = _Edits(*run, config, system, target)
    edits: _Edits | None = first
    now, keep = run, first.keep

    def attempt(events: Sequence[Event], drop: range) -> list[Event] | None:
        nonlocal edits, now
        if edits is None:  # the run changed: its calls and times are read again
            edits = _Edits(*now, config, system, target)
        got = edits.attempt(drop)
        if got is None:
            return None
        now, edits = got, None
        return got[0]

    def late() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    done = ddmin(run[0], attempt, keep=keep, parts=max(len(run[0]) - keep, 1), stop=late)
    return edits or _Edits(*now, config, system, target), done.fixpoint


_Attempt = Callable[..., tuple[list[Event], list[float] | None] | None]


def _cut(k: int, gap: float, attempt: _Attempt) -> tuple[list[Event], list[float] | None] | None:
    """The run with the ``k``-th gap cut to none if that still hits, else to
    the fewest whole seconds that still do (a bisection: a TTL's threshold
    shows as the gap just past it), or None if no cut hits."""
    found = attempt((), None, (k, 0.0))
    if found is not None:
        return found
    low, high = 0, int(gap)  # none does not hit; the gap itself does
    best = None
    while high - low > 1:
        mid = (low + high) // 2
        run = attempt((), None, (k, float(mid)))
        if run is None:
            low = mid
        else:
            high, best = mid, run
    return best
