"""Adversarial search: a Hypothesis state machine whose rules are runtime
events and whose invariant is the model's incident check.

The machine drives a :class:`~prunecheck.model.system.System` — the
model runtime with a policy, or a runtime under test — applying each event
with ``system.apply`` (``record=False``: no notes are built in the hot
loop) and choosing the next one from ``system.truth``.  Rules are the
events of :mod:`.shape` — user messages (also mid-batch), streamed assistant
text, batches of any width, result chunks in any order, failures and
timeouts, invocations, retries, external writes — plus three macro-steps
(deliver every pending result in a drawn order; stream one or several
results at once, chunks interleaved; a whole turn).  Budget checks are the runtime's own, where its
``check_at`` knob puts them; no rule fires one elsewhere.  Each run first
draws its own bounds and opens as a session does (:mod:`.swarm`: system
prompt and user message, or a resumed persisted history, possibly cut off
by a crash) and how much time may pass between events (no gaps, or gaps
of up to half a minute, five minutes or half an hour: a ``wait`` rule lets
a slow tool run, and a ``later`` macro has the user come back while calls
run, so that a policy reading ``view.now`` and message ages meets old
units with calls still pending); Hypothesis also varies which rules a run
may use (its feature flags), and ``target()`` steers toward near misses:
tokens over budget while a call is pending or a message is open.

A run stops at the first incident that is a violation (or of a ``target``
kind).  Hypothesis then shrinks it, for at most ``shrink_runs`` runs (a
count, not a time, so that a seed always gives the same answer), and
:func:`minimize` polishes the shortest run seen — deleting and resizing
events while it still hits.  Its events become a replayable
:class:`~prunecheck.model.trace.Trace`.

:func:`random_walk` is the baseline the benchmark compares with: uniform
random choices over the same alphabet, no guidance, no shrinking.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import Event
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.system import S, System
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.coverage import Coverage, CoverageTally
from prunecheck.sim.drivers.found import found_trace
from prunecheck.sim.drivers.polish import minimize_timed
from prunecheck.sim.drivers.search_machine import (
    Enough,
    Fatal,
    Found,
    Progress,
    RunLog,
    build_machine,
)
from prunecheck.sim.drivers.shape import (
    Shape,
    Usage,
    enabled_events,
    ends_session,
    hits,
)
from prunecheck.sim.drivers.swarm import (
    max_gap,
    narrow,
    opening,
    opening_usage,
    persisted_history,
    random_draw,
)
from prunecheck.sim.support.seed_only import seed_only

__all__ = ["SHRINK_RUNS", "SearchResult", "random_walk", "search"]

#: Runs Hypothesis may spend shrinking one counterexample.
SHRINK_RUNS = 300


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found.

    Attributes
    ----------
    found: whether a run hit a violation (or a ``target`` kind).
    trace: the shrunk, replayable counterexample (None if not found).
    incidents: every incident of replaying ``trace``.
    examples: runs tried up to the first counterexample (all, if none).
    seconds: wall time of the whole search, shrinking included (informational).
    first_seconds: wall time to the first, unshrunk counterexample.
    first_length: events in that first counterexample.
    events: events applied over all runs up to the first counterexample.
    costs: cost incidents (deferrals, overruns, spills …) met before the
        first counterexample, by kind: reported, never failed on.
    timed_out: the time limit stopped the search (``examples`` says how
        many runs it covered; ``found`` whether one of them hit).
    coverage: what the runs up to the first counterexample exercised
        (:mod:`.coverage`).
    """

    found: bool
    trace: Trace | None
    incidents: tuple[Incident, ...]
    examples: int
    seconds: float
    first_seconds: float | None = None
    first_length: int | None = None
    events: int = 0
    costs: Mapping[str, int] = field(default_factory=dict)
    timed_out: bool = False
    coverage: Coverage = field(default_factory=Coverage)


def search(
    system: System[S],
    config: RuntimeConfig,
    *,
    seed: int = 0,
    max_examples: int = 200,
    shape: Shape | None = None,
    target: frozenset[IncidentKind] | None = None,
    shrink_runs: int = SHRINK_RUNS,
    deadline: float | None = None,
    progress: Progress | None = None,
) -> SearchResult:
    """Search adversarially for an event sequence on which ``system`` breaks.

    Parameters
    ----------
    system:
        What is driven: the model runtime with a policy (time-limited by the
        caller if its calls need it), or a runtime under test; the trace
        records its ``name``.
    config:
        The runtime: budget, gate and knobs.
    seed:
        The same seed gives the same result.
    max_examples:
        Runs Hypothesis generates (shrinking comes on top).
    shape:
        Bounds of the events; ``Shape.for_budget(config.budget)`` if None.
    target:
        Stop only on incidents of these kinds (violations if None).
    shrink_runs:
        Runs Hypothesis may spend shrinking a counterexample (a count, not
        a time, so that a seed always gives the same answer); :func:`minimize`
        then polishes what it has.
    deadline:
        A :func:`time.monotonic` instant: no run starts after it, and
        shrinking stops there with the shortest run found so far
        (``timed_out`` is then True).  None: no limit.
    progress:
        Called with the number of runs so far as each run starts.

    Returns
    -------
    SearchResult
        ``trace`` is the shrunk counterexample, ending at the event of the hit.

    Raises
    ------
    PolicyError
        if the policy raised, hung or returned something invalid (or gave
        different answers to the same question).
    """
    shape = shape or Shape.for_budget(config.budget)
    log = RunLog(shrink_runs, deadline, progress)
    log.coverage = _tally(config, system)
    machine = build_machine(system, config, shape, target, log)
    hypothesis_seed(seed)(machine)
    run_settings = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.target, Phase.shrink),
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        stateful_step_count=shape.max_steps,
        report_multiple_bugs=False,
        print_blob=False,
    )
    try:
        with seed_only():  # the seed alone decides the draws (see that module)
            run_state_machine_as_test(machine, settings=run_settings)
    except (Found, Enough):
        pass
    except Fatal as fatal:
        raise fatal.error from None
    except Flaky as exc:
        # Stopping Hypothesis mid-shrink can look to it like a run that drew
        # less than before; only a flake without that stop is the policy's.
        if not log.spent:
            raise PolicyError(
                f"policy {system.name!r}",
                "gave different answers to the same "
                f"question during the search ({type(exc).__name__}).",
                "a policy must be a deterministic function of its view.",
            ) from None
    if log.events is not None:
        log.events, log.times = minimize_timed(
            log.events, log.times, config, system, shape, target, deadline=deadline
        )
    seconds = time.perf_counter() - log.started
    return _result(
        system,
        config,
        seed,
        log,
        seconds,
        {"driver": "search", "seed": seed, "max_examples": max_examples},
    )


def _result(
    system: System[S],
    config: RuntimeConfig,
    seed: int,
    log: RunLog,
    seconds: float,
    found_by: dict[str, Any],
) -> SearchResult:
    if log.events is None:
        return SearchResult(
            False,
            None,
            (),
            log.examples,
            seconds,
            events=log.applied,
            costs=dict(log.costs),
            timed_out=log.timed_out,
            coverage=log.coverage.freeze(),
        )
    trace, incidents = found_trace(system, config, log.events, seed, found_by, times=log.times)
    return SearchResult(
        True,
        trace,
        incidents,
        log.examples,
        seconds,
        log.first_seconds,
        log.first_length,
        log.applied,
        dict(log.costs),
        log.timed_out,
        log.coverage.freeze(),
    )


def _tally(config: RuntimeConfig, system: System[Any]) -> CoverageTally:
    """A coverage tally for ``config``'s placement (proposals are not
    observed for a subject that decides its own prunes: a runtime under
    test shows a shadow that keeps every message)."""
    return CoverageTally((config.check_at,), proposals_observed=not system.facts.own_gate)


def random_walk(
    system: System[S],
    config: RuntimeConfig,
    *,
    seed: int = 0,
    shape: Shape | None = None,
    target: frozenset[IncidentKind] | None = None,
    max_runs: int = 2000,
    deadline: float | None = None,
) -> SearchResult:
    """Plain random simulation over the same alphabet: each run draws its
    own bounds (if the shape is a swarm), opens as a session does, then
    picks events uniformly among those enabled, for ``shape.max_steps``
    events, until a run hits; no guidance, no shrinking.  A run whose bounds
    allow gaps of time waits before an event as often as it picks any one
    event, a uniform number of seconds up to its widest gap.  The baseline
    of the benchmark."""
    shape = shape or Shape.for_budget(config.budget)
    rng = random.Random(seed)
    draw = random_draw(rng)
    log = RunLog(deadline=deadline)
    log.coverage = _tally(config, system)
    for _ in range(max_runs):
        if log.out_of_time():
            break
        log.examples += 1
        bounds = narrow(shape, draw)
        state = system.initial(config)
        events: list[Event] = []
        prefix = (
            persisted_history(bounds, bounds.max_resume, bounds.crashed)
            if bounds.max_resume
            else opening(bounds)
        )
        steps = [*prefix, *([None] * shape.max_steps)]
        usage = Usage()
        widest = max_gap(bounds)
        times: list[float] = []
        for index, chosen in enumerate(steps):
            if index == len(prefix):
                usage = opening_usage()
            truth = system.truth(state)
            at = times[-1] + 1.0 if times else 0.0
            if chosen is None:
                enabled = enabled_events(truth, usage, bounds)
                pick = rng.randrange(len(enabled) + (1 if widest else 0))
                if pick == len(enabled):  # wait, then an event
                    at += rng.randint(1, widest)
                    pick = rng.randrange(len(enabled))
                chosen = enabled[pick]
            event = chosen
            usage = usage.after(event, truth)
            result = system.apply(state, event, at)
            events.append(event)
            times.append(at)
            log.applied += 1
            log.costs.update(i.kind.value for i in result.incidents if not i.is_violation)
            if hits(result.incidents, target):
                log.hit(events, times)
                break
            if ends_session(result.incidents):
                break
        log.coverage.run(system.truth(state).counters, len(events))
        if log.events is not None:
            break
    seconds = time.perf_counter() - log.started
    return _result(system, config, seed, log, seconds, {"driver": "random", "seed": seed})
