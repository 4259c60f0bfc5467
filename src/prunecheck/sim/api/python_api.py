"""The commands as Python functions, beside :func:`~.check.check_policy`.

``prunecheck search``, ``explore``, ``replay`` and ``validate`` are thin
layers over drivers and checks that Python code can call directly; these
functions are those layers without the printing, and return the drivers'
own result types.  A policy is given as :func:`~.check.check_policy` takes
it: a spec, a policy object, a ``select(view, need)`` function, or a list
function with ``format``.  The runtime is ``config`` (the raw runtime of the
domain document's incidents if None: gate none, checks after every append,
the list function's provider or else Anthropic), with ``gate`` on top.
``prunecheck validate``'s function, ``validate_request``, needs no part of
the harness: it is in :mod:`.requests`.

Examples
--------
>>> found = search_policy("lowest_salience", max_examples=30)
>>> found.found, len(replay_trace(found.trace).violations) > 0
(True, True)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.provider import Provider
from prunecheck.model.system import System, incidents_of, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.api.resolve import PolicyLike, format_of, resolve_policy
from prunecheck.sim.drivers.explore import MAX_STATES, ExploreResult, explore
from prunecheck.sim.drivers.search import SearchResult, search
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.evidence.failures import FailuresLike, open_database, warn_problems
from prunecheck.sim.evidence.narrative import narrate
from prunecheck.sim.evidence.trace_file import read_trace
from prunecheck.sim.subjects.loader import load_runtime, load_system, model_system
from prunecheck.sim.subjects.policy_spec import parse_spec_or_none
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
from prunecheck.sim.support.progress import Progress

__all__ = [
    "ReplayResult",
    "explore_policy",
    "replay_trace",
    "run_explore",
    "run_search",
    "saved_failure",
    "search_policy",
]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What replaying a trace showed.

    Attributes
    ----------
    trace : Trace
        The trace replayed (with the policy and gate it ran under).
    incidents : tuple[Incident, ...]
        Every incident of the replay, in order.
    narrative : str
        The replay told step by step, as ``prunecheck replay`` prints it.
    """

    trace: Trace
    incidents: tuple[Incident, ...]
    narrative: str

    @property
    def violations(self) -> tuple[Incident, ...]:
        """The incidents that break the invariant (costs left out)."""
        return tuple(i for i in self.incidents if i.is_violation)

    @property
    def safe(self) -> bool:
        """No violation was met (what ``prunecheck replay``'s exit 0 says)."""
        return not self.violations


def _runtime(
    policy: PolicyLike,
    format: str | None,
    name: str | None,
    gate: Gate | str | None,
    config: RuntimeConfig | None,
    timeout: float,
) -> tuple[System[Any], RuntimeConfig]:
    """The system a driver is given (the policy, time-limited, in the model
    runtime: wrapped once, here; or the runtime under test a ``runtime:``
    spec names) and its runtime."""
    if isinstance(policy, str) and format is None:
        parsed = parse_spec_or_none(policy)
        if parsed is not None and parsed.kind.is_runtime:
            base = config or RuntimeConfig()
            if gate is not None:
                base = replace(base, gate=Gate(gate))
            return load_runtime(parsed, timeout), base
    spec, loaded = resolve_policy(policy, format=format, name=name)
    fmt = format or format_of(loaded)
    base = config or RuntimeConfig(provider=Provider(fmt) if fmt else Provider.ANTHROPIC)
    if gate is not None:
        base = replace(base, gate=Gate(gate))
    return model_system(spec, loaded, timeout), base


def _deadline(time_limit: float | None) -> float | None:
    return None if time_limit is None else time.monotonic() + time_limit


def search_policy(
    policy: PolicyLike,
    *,
    format: str | None = None,
    gate: Gate | str | None = None,
    config: RuntimeConfig | None = None,
    seed: int = 0,
    max_examples: int = 200,
    shape: Shape | None = None,
    target: frozenset[IncidentKind] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    name: str | None = None,
    time_limit: float | None = None,
    progress: Progress | None = None,
    failures: FailuresLike = None,
) -> SearchResult:
    """Search adversarially for a run on which the policy breaks (``prunecheck search``).

    The failure database is replayed first (as ``check_policy`` does): a
    saved counterexample of this policy in this runtime that still fails is
    the result at once (``examples`` 0; its trace's ``meta["found_by"]``
    names the saved file), and a new one is saved.

    Parameters
    ----------
    policy : PolicyLike
        A spec, a policy object, a ``select(view, need)`` function, or a
        list function ``trim(messages)`` (give ``format``).
    format : str, optional
        ``"openai"`` or ``"anthropic"`` for a list function.
    gate : Gate or str, optional
        The gate between policy and context (``config.gate`` if None).
    config : RuntimeConfig, optional
        The runtime (see the module docs for the default).
    seed : int
        The same seed gives the same result.
    max_examples : int
        Runs the search generates (shrinking comes on top).
    shape : Shape, optional
        Bounds of the events; ``Shape.for_budget(config.budget)`` if None.
    target : frozenset[IncidentKind], optional
        Stop only on these incident kinds (violations if None).
    timeout : float
        Seconds one policy call may take before it counts as hung.
    name : str, optional
        How to name a policy given as an object.
    time_limit : float, optional
        Seconds the search may take (``timed_out`` is then True).
    progress : Progress, optional
        Told what runs and how far it got (``prunecheck search``'s bar).
    failures : FailureDatabase, str, Path or bool, optional
        The failure database, as :func:`~.check.check_policy` takes it
        (default: ``$PRUNECHECK_FAILURES``, else ``.prunecheck/failures``).

    Returns
    -------
    SearchResult
        ``trace`` is the shrunk counterexample, or None if none was found.

    Raises
    ------
    PolicyError
        if the policy cannot be loaded, raised, hung or returned garbage.
    """
    system, base = _runtime(policy, format, name, gate, config, timeout)
    return run_search(
        system,
        base,
        seed=seed,
        max_examples=max_examples,
        shape=shape,
        target=target,
        time_limit=time_limit,
        progress=progress,
        failures=failures,
    )


def run_search(
    system: System[Any],
    config: RuntimeConfig,
    *,
    seed: int = 0,
    max_examples: int = 200,
    shape: Shape | None = None,
    target: frozenset[IncidentKind] | None = None,
    time_limit: float | None = None,
    progress: Progress | None = None,
    failures: FailuresLike = None,
) -> SearchResult:
    """:func:`search_policy` of a system already loaded (``prunecheck
    search`` loads it from its options): the failure database replayed
    first, the search with its progress, a new counterexample saved."""
    deadline = _deadline(time_limit)
    spec = system.name
    db = open_database(failures)
    try:
        saved = db.still_failing(spec, system, config) if db is not None else None
        if saved is not None:
            return SearchResult(True, saved.trace, tuple(incidents_of(saved.trace, system)), 0, 0.0)
        bar = progress or Progress()
        bar.start(max_examples, "runs")
        bar.step(f"search {spec} (checks {config.check_at})")
        try:
            result = search(
                system,
                config,
                seed=seed,
                max_examples=max_examples,
                shape=shape,
                target=target,
                deadline=deadline,
                progress=bar.runs(max_examples),
            )
        finally:
            bar.close()
        if db is not None and result.found and result.trace is not None:
            db.save(result.trace, spec)
        return result
    finally:
        warn_problems(db, failures)


def saved_failure(result: SearchResult) -> dict[str, Any] | None:
    """Where a search's result came from when the failure database answered
    (``{"driver", "path", "policy_digest"}``), else None."""
    if result.trace is None:
        return None
    found = result.trace.meta.get("found_by")
    if isinstance(found, dict) and found.get("driver") == "failure database":
        return found
    return None


def explore_policy(
    policy: PolicyLike,
    *,
    depth: int = 6,
    format: str | None = None,
    gate: Gate | str | None = None,
    config: RuntimeConfig | None = None,
    shape: Shape | None = None,
    target: frozenset[IncidentKind] | None = None,
    max_states: int = MAX_STATES,
    timeout: float = DEFAULT_TIMEOUT,
    name: str | None = None,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> ExploreResult:
    """Explore every interleaving up to ``depth`` events (``prunecheck explore``).

    Parameters
    ----------
    policy : PolicyLike
        As :func:`search_policy` takes it.
    depth : int
        Events after the opening (system prompt, user message) considered.
    format, gate, config, target, timeout, name, time_limit
        As for :func:`search_policy`.
    shape : Shape, optional
        Bounds of the events; ``Shape.small(config.budget)`` if None (keep
        it small: every interleaving is enumerated).
    max_states : int
        Stop after this many distinct states (``capped`` is then True).
    progress : Progress, optional
        Told each level as it is explored (``prunecheck explore``'s bar).

    Returns
    -------
    ExploreResult
        ``counterexample`` is a shortest trace to a hit, or None.

    Raises
    ------
    PolicyError
        if the policy cannot be loaded, raised, hung or returned garbage.
    """
    system, base = _runtime(policy, format, name, gate, config, timeout)
    return run_explore(
        system,
        base,
        depth=depth,
        shape=shape or Shape.small(base.budget),
        target=target,
        max_states=max_states,
        time_limit=time_limit,
        progress=progress,
    )


def run_explore(
    system: System[Any],
    config: RuntimeConfig,
    *,
    depth: int,
    shape: Shape,
    target: frozenset[IncidentKind] | None = None,
    max_states: int = MAX_STATES,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> ExploreResult:
    """:func:`explore_policy` of a system already loaded (``prunecheck
    explore`` loads it from its options), with its progress: a step a level."""
    bar = progress or Progress()
    bar.start(depth, "levels")

    def tell(level: int, states: int) -> None:
        bar.step(f"explore {system.name}: depth {level + 1} of {depth}, {states} states")

    try:
        return explore(
            system,
            config,
            depth=depth,
            shape=shape,
            target=target,
            max_states=max_states,
            deadline=_deadline(time_limit),
            progress=tell,
        )
    finally:
        bar.close()


def replay_trace(
    trace: Trace | str | os.PathLike[str],
    policy: PolicyLike | None = None,
    *,
    format: str | None = None,
    gate: Gate | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> ReplayResult:
    """Re-run a trace and tell it step by step (``prunecheck replay``).

    Parameters
    ----------
    trace : Trace, str or os.PathLike
        A trace, or the path of a trace file (or of a bundle's folder).
    policy : PolicyLike, optional
        The policy to replay the events under; the trace's own if None.
        A trace's policy that is code is imported: pass a trace you trust,
        or a policy.
    format : str, optional
        ``"openai"`` or ``"anthropic"`` for a list function.
    gate : Gate or str, optional
        Replay under this gate instead of the trace's.
    timeout : float
        Seconds one policy call may take before it counts as hung.

    Returns
    -------
    ReplayResult
        The incidents met and the narrative.

    Raises
    ------
    TraceError
        if the file is not a trace or an event is impossible.
    """
    if not isinstance(trace, Trace):
        path = Path(trace)
        trace = read_trace(path / "trace.json" if path.is_dir() else path)
    if policy is None:
        system = load_system(trace.policy, timeout)  # a policy, or a runtime under test
    else:
        spec, loaded = resolve_policy(policy, format=format)
        trace = replace(trace, policy=spec)
        system = model_system(spec, loaded, timeout)
    if gate is not None:
        trace = replace(trace, config=replace(trace.config, gate=Gate(gate)))
    told = narrate(trace, (step for step, _ in replay(trace, system)))
    return ReplayResult(trace, tuple(told.incidents), told.text())
