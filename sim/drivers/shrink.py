"""Polishing a counterexample after Hypothesis has shrunk it (delta
debugging over events): delete one or two events (a batch goes with its
results), or delete one and resize another within the shape's sizes for
its kind, while the run still hits; repeat to a fixpoint.

The opening of a run — the system prompt and the user's first message —
is never deleted: a counterexample opens as a real session does.

Each round costs O(n² · |sizes|) replays of at most n events, n being
small after shrinking.  A ``deadline`` (a :func:`time.monotonic` instant)
stops polishing early with the shortest run found so far.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
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

__all__ = ["minimize", "opening_length"]


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


def _refs(events: Sequence[Event], config: RuntimeConfig, system: System[S]) -> list[_Ref | None]:
    """For each event naming a call, which batch event issued that call."""
    state = system.initial(config)
    owner: dict[str, _Ref] = {}
    refs: list[_Ref | None] = []
    for i, event in enumerate(events):
        refs.append(owner.get(event.call) if isinstance(event, ResultChunk | ToolFailure) else None)
        if isinstance(event, IssueBatch):
            first = system.truth(state).next_call
            owner.update({f"c{first + k}": (i, k) for k in range(len(event.calls))})
        system.apply(state, event)
    return refs


def _rerun(
    items: list[tuple[int, Event, _Ref | None]],
    config: RuntimeConfig,
    system: System[S],
    target: frozenset[IncidentKind] | None,
) -> list[Event] | None:
    """Replay edited events, renumbering calls; the prefix up to the first
    hit, or None if the edit is impossible or no longer hits.  Results of a
    deleted batch are deleted with it."""
    state = system.initial(config)
    first_call: dict[int, int] = {}
    out: list[Event] = []
    for index, event, ref in items:
        if ref is not None and isinstance(event, ResultChunk | ToolFailure):
            if ref[0] not in first_call:
                continue
            event = replace(event, call=f"c{first_call[ref[0]] + ref[1]}")
        if isinstance(event, IssueBatch):
            first_call[index] = system.truth(state).next_call
        try:
            result = system.apply(state, event)
        except (TraceError, PolicyError):
            return None
        out.append(event)
        if hits(result.incidents, target):
            return out
    return None


def _resized(event: Event, tokens: int) -> Event:
    if isinstance(event, UserMessage | AssistantChunk | IssueBatch | ResultChunk):
        return replace(event, tokens=tokens)
    return event


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
    current = list(events)
    while deadline is None or time.monotonic() < deadline:
        better = _shorter(current, config, system, shape, target, deadline)
        if better is None:
            return current
        current = better
    return current


def _shorter(
    events: list[Event],
    config: RuntimeConfig,
    system: System[S],
    shape: Shape,
    target: frozenset[IncidentKind] | None,
    deadline: float | None,
) -> list[Event] | None:
    refs = _refs(events, config, system)
    items = list(zip(range(len(events)), events, refs, strict=True))
    n = len(items)
    keep = opening_length(events)

    def attempt(drop: tuple[int, ...], resize: tuple[int, int] | None = None) -> list[Event] | None:
        chosen = []
        for index, event, ref in items:
            if index in drop:
                continue
            if resize is not None and resize[0] == index:
                event = _resized(event, resize[1])
            chosen.append((index, event, ref))
        out = _rerun(chosen, config, system, target)
        return out if out is not None and len(out) < n else None

    resizes = [
        (k, size)
        for k in range(keep, n)
        for size in shape.sizes_for(events[k])
        if size != getattr(events[k], "tokens", size)
    ]
    edits: list[tuple[tuple[int, ...], tuple[int, int] | None]] = [
        ((i,), None) for i in range(keep, n)
    ]
    edits += [((), r) for r in resizes]
    edits += [((i, j), None) for i in range(keep, n) for j in range(i + 1, n)]
    edits += [((i,), r) for i in range(keep, n) for r in resizes if r[0] != i]
    for count, (drop, resize) in enumerate(edits):
        if deadline is not None and count % 64 == 0 and time.monotonic() >= deadline:
            return None
        found = attempt(drop, resize)
        if found is not None:
            return found
    return None
