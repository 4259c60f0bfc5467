"""One run of a sweep: what decides its outcome (:class:`RunSpec`, keyed by
every input that changes a result — the simulator's source and the user's
policy file included), and what it gave (:class:`Row`, one JSON line).

:func:`run_one` loads the policy (once per process, time-limited) and simulates
the spec; a worker process — the pool's or Dask's — gets the spec, never a
policy object, and loads it there.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.system import System
from prunecheck.sim.drivers.simulator import DEFAULT_HORIZON, SIMULATOR_VERSION, simulate
from prunecheck.sim.drivers.workload import Load
from prunecheck.sim.stats.sessions import SessionRecord, sessions_from_json, sessions_to_json
from prunecheck.sim.subjects.digest import source_of
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.policy_spec import SpecKind, parse_spec_or_none
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT

__all__ = ["Row", "RunSpec", "policy_fingerprint", "run_one", "work"]


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One simulated run of a sweep: everything that decides its outcome."""

    policy: str
    config: RuntimeConfig
    level: float
    load: Load
    seed: int
    horizon: float = DEFAULT_HORIZON

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "config": self.config.to_json(),
            "level": self.level,
            "load": self.load.to_json(),
            "seed": self.seed,
            "horizon": self.horizon,
        }

    @property
    def key(self) -> str:
        """Readable, sortable and unique: the main knobs, then a digest of all
        (and of the simulator's version, so stale rows are never reused)."""
        identity = {
            **self.to_json(),
            "simulator": SIMULATOR_VERSION,
            "policy_source": policy_fingerprint(self.policy),
        }
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        c = self.config
        return (
            f"{self.policy}|{c.gate}|{c.check_at}|{c.retry}|L{self.level:.2f}"
            f"|t{self.load.tightness:g}|s{self.seed}#{digest[:12]}"
        )


@dataclass(frozen=True, slots=True)
class Row:
    """The outcome of one run, as stored in the results file."""

    key: str
    spec: RunSpec
    invocations: int
    events: int
    sim_time: float
    time_deferred: float
    incidents: dict[str, int]
    exposed: dict[str, int]
    counters: dict[str, int]
    error: str | None = None
    sessions: tuple[SessionRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            **self.spec.to_json(),
            "invocations": self.invocations,
            "events": self.events,
            "sim_time": self.sim_time,
            "time_deferred": self.time_deferred,
            "incidents": self.incidents,
            "exposed": self.exposed,
            "counters": self.counters,
            "error": self.error,
            "sessions": sessions_to_json(self.sessions),
        }

    @classmethod
    def from_json(cls, data: Any) -> Row:
        """Parse a stored row; ValueError/TypeError/KeyError/ConfigError if it is not one."""
        spec = RunSpec(
            str(data["policy"]),
            RuntimeConfig.from_json(data["config"]),
            float(data["level"]),
            Load.from_json(data["load"]),
            int(data["seed"]),
            float(data["horizon"]),
        )

        def counts(name: str) -> dict[str, int]:
            value = data[name]
            if not isinstance(value, dict):
                raise TypeError(f"{name} must be an object")
            return {str(k): int(v) for k, v in value.items()}

        error = data.get("error")
        return cls(
            str(data["key"]),
            spec,
            int(data["invocations"]),
            int(data["events"]),
            float(data["sim_time"]),
            float(data["time_deferred"]),
            counts("incidents"),
            counts("exposed"),
            counts("counters"),
            None if error is None else str(error),
            sessions_from_json(data["sessions"]),
        )


_SYSTEMS: dict[tuple[str, float], System[Any]] = {}


def _system(spec: str, timeout: float) -> System[Any]:
    """The system for ``spec`` (its policy time-limited), loaded once per process."""
    cached = _SYSTEMS.get((spec, timeout))
    if cached is None:
        cached = _SYSTEMS[(spec, timeout)] = load_system(spec, timeout)
    return cached


def run_one(spec: RunSpec, timeout: float = DEFAULT_TIMEOUT) -> Row:
    """Simulate one spec.  A policy that fails (raises, hangs, returns
    garbage, cannot be loaded) gives a row with its message in ``error``."""
    try:
        system = _system(spec.policy, timeout)
        result = simulate(system, spec.config, spec.load, spec.seed, horizon=spec.horizon)
    except PolicyError as exc:
        return Row(spec.key, spec, 0, 0, 0.0, 0.0, {}, {}, {}, exc.paragraph())
    return Row(
        spec.key,
        spec,
        result.invocations,
        result.events,
        result.sim_time,
        result.time_deferred,
        result.incidents,
        result.exposed,
        result.counters,
        result.error,
        result.sessions,
    )


def work(spec: RunSpec, timeout: float) -> Row:
    try:
        return run_one(spec, timeout)
    except Exception as exc:  # a crash must not stop the sweep; it is recorded
        return Row(
            spec.key, spec, 0, 0, 0.0, 0.0, {}, {}, {}, f"run crashed: {type(exc).__name__}: {exc}"
        )


@cache
def policy_fingerprint(spec: str) -> str:
    """A digest of the user's source file a spec names (:func:`source_of`:
    a policy's, a ``runtime:`` spec's runtime or inner policy, a framework
    spec's user file), '' for built-ins (the simulator's version covers
    them) and specs without a file: editing the file invalidates its rows."""
    parsed = parse_spec_or_none(spec)
    named = parsed.inner if parsed is not None and parsed.inner is not None else parsed
    if named is None or named.kind is SpecKind.BUILTIN:  # runtime:guard:recency too
        return ""
    path = source_of(spec)
    if path is None:
        return ""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return ""
