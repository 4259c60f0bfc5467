"""A counterexample as a trace: what every driver (the search, the random
walk, the explorer) hands back when a run hits, replayed for its incidents
and titled for the regression corpus."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Event
from prunecheck.model.incidents import Incident
from prunecheck.model.system import S, System, incidents_of
from prunecheck.model.trace import Trace

__all__ = ["found_trace", "recorded_times"]


def found_trace(
    system: System[S],
    config: RuntimeConfig,
    events: list[Event],
    seed: int,
    found_by: dict[str, Any],
    *,
    times: Sequence[float] | None = None,
) -> tuple[Trace, tuple[Incident, ...]]:
    """The trace of a counterexample, with its replayed incidents and a
    ``meta`` ready for the regression corpus (``expect.violations``); the
    trace names ``system`` by its spec.

    ``times`` are when the events happened; left out of the trace (None)
    when time never jumped (each event a second after the one before, from
    0: what a replay assumes of a trace without times)."""
    policy_spec = system.name
    when = recorded_times(times, len(events))
    bare = Trace(policy_spec, config, tuple(events), seed, when)
    incidents = tuple(incidents_of(bare, system))
    kinds = sorted({i.kind.value for i in incidents if i.is_violation})
    last = [i for i in incidents if i.step == len(events) - 1] or list(incidents[-1:])
    title = f"{policy_spec} under gate {config.gate}: " + ", ".join(
        dict.fromkeys(i.kind.label for i in last)
    )
    meta = {
        "title": title,
        "story": f"found by prunecheck {found_by['driver']} (seed {seed}); {len(events)} events",
        "found_by": found_by,
        "expect": {"violations": kinds},
    }
    return Trace(policy_spec, config, tuple(events), seed, when, meta), incidents


def recorded_times(times: Sequence[float] | None, count: int) -> tuple[float, ...] | None:
    """``times`` as a trace records them: None if they are the step count
    (0, 1, 2 …), which is what a replay assumes without times.

    >>> recorded_times([0.0, 1.0, 2.0], 3) is None, recorded_times([0, 1, 92], 3)
    (True, (0.0, 1.0, 92.0))
    """
    if times is None:
        return None
    if len(times) != count:
        raise ValueError(f"{len(times)} times for {count} events")
    out = tuple(float(t) for t in times)
    return None if all(t == i for i, t in enumerate(out)) else out
