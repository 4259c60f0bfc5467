"""A counterexample as a trace: what every driver (the search, the random
walk, the explorer) hands back when a run hits, replayed for its incidents
and titled for the regression corpus."""

from __future__ import annotations

from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Event
from prunecheck.model.incidents import Incident
from prunecheck.model.system import S, System, incidents_of
from prunecheck.model.trace import Trace

__all__ = ["found_trace"]


def found_trace(
    system: System[S],
    config: RuntimeConfig,
    events: list[Event],
    seed: int,
    found_by: dict[str, Any],
) -> tuple[Trace, tuple[Incident, ...]]:
    """The trace of a counterexample, with its replayed incidents and a
    ``meta`` ready for the regression corpus (``expect.violations``); the
    trace names ``system`` by its spec."""
    policy_spec = system.name
    bare = Trace(policy_spec, config, tuple(events), seed)
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
    return Trace(policy_spec, config, tuple(events), seed, None, meta), incidents
