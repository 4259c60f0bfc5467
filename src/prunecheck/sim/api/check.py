"""``check_policy``: is this policy safe as it is?  The engine behind the
Python API, the pytest plugin and ``prunecheck check``.

A check runs a fixed, seeded suite — simulated runs at a few load levels ×
seeds (:func:`~prunecheck.sim.drivers.simulator.simulate`) — and then the adversarial
search (:func:`~prunecheck.sim.drivers.search.search`), under the runtime given
(gate ``none`` by default: the question is whether the policy itself keeps
the commit-boundary invariant).  A verdict is relative to *where the
runtime fires its budget check* (``check_at``: after every append, after a
batch completes, before each model call), so unless told one placement the
check runs once per placement and reports each (:mod:`.verdict`): a
trimmer that runs only on complete histories may be safe before model
calls and unsafe after every append.  The verdict is *unsafe* when any
violation was seen; the reproduction is the search's shrunk counterexample,
or else the shortest failing prefix of a simulated run, shrunk to a minimal
trace of the same incident class and run on to the harm it causes
(:mod:`.minimal`).  A policy that
raises, returns garbage, mutates its input or hangs gives the verdict
*error* with one paragraph naming the policy, the scenario and the step;
the scenarios finished before it stay in the result.

Work is bounded whatever the policy does: each scenario stops after
``DEFAULT_MAX_EVENTS`` events (a capped scenario says so), and a time
limit stops the check between scenarios and inside the search with an
honest partial verdict: *unsafe* if a violation was already found, else
*out of time* (no verdict), with what was covered.

Examples
--------
>>> result = check_policy("unit_safe", levels=(0.2,), seeds=(1,), max_examples=5)
>>> result.safe, result.reproduction is None
(True, True)
"""

from __future__ import annotations

import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import PolicyError, PrunecheckError
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem, reads_times
from prunecheck.model.policies import Policy
from prunecheck.model.provider import Provider
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.api.minimal import minimal_reproduction, shrink_note
from prunecheck.sim.api.options import check_options
from prunecheck.sim.api.providers import first_rejections, not_judged, parse_providers
from prunecheck.sim.api.repairs import judge_repairs
from prunecheck.sim.api.resolve import PolicyLike, format_of, resolve_policy
from prunecheck.sim.api.suite import (
    DEFAULT_HORIZON,
    DEFAULT_LEVELS,
    DEFAULT_MAX_EVENTS,
    DEFAULT_SEEDS,
    DEFAULT_SLOW_LEVELS,
    Suite,
    class_exposure,
    run_scenario,
)
from prunecheck.sim.api.vacuity import PrunecheckVacuousWarning, vacuous_clause
from prunecheck.sim.api.verdict import CheckResult, ScenarioResult, Verdict, combine
from prunecheck.sim.drivers.coverage import Coverage
from prunecheck.sim.evidence.failures import FailuresLike, open_database, warn_problems
from prunecheck.sim.evidence.narrative import narrate
from prunecheck.sim.subjects.cage import close_all
from prunecheck.sim.subjects.loader import load_runtime, model_system
from prunecheck.sim.subjects.policy_spec import parse_spec_or_none
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
from prunecheck.sim.subjects.tripwire import Tripwire, search_error
from prunecheck.sim.support.collector import fewer_full_collections
from prunecheck.sim.support.forked import available_jobs, fork_map
from prunecheck.sim.support.progress import Progress

__all__ = [
    "UnsafePolicy",
    "assert_policy_safe",
    "check_policy",
    "failure_report",
    "first_violation",
]


def check_policy(
    policy: PolicyLike,
    *,
    format: str | None = None,
    gate: Gate | str = "none",
    config: RuntimeConfig | None = None,
    levels: Sequence[float] = DEFAULT_LEVELS,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    horizon: float = DEFAULT_HORIZON,
    slow_levels: Sequence[float] = DEFAULT_SLOW_LEVELS,
    seed: int = 0,
    max_examples: int = 200,
    timeout: float = DEFAULT_TIMEOUT,
    name: str | None = None,
    placements: Sequence[CheckAt | str] | None = None,
    time_limit: float | None = None,
    max_events: int = DEFAULT_MAX_EVENTS,
    progress: Progress | None = None,
    failures: FailuresLike = None,
    jobs: int | None = None,
    providers: str | Sequence[Provider | str] | None = None,
) -> CheckResult:
    """Check a policy against the commit-boundary invariant.

    Parameters
    ----------
    policy:
        A spec (``"lowest_salience"``, ``"my_trim.py:trim"``), a policy
        object, a ``select(view, need)`` function, or a list function
        ``trim(messages) -> messages`` (give ``format``).
    format:
        ``"openai"`` or ``"anthropic"``: ``policy`` is a list function over
        that provider's message dicts (see :mod:`.adapters`).  Its
        provider's rules and error texts apply unless ``config`` says
        otherwise.
    gate:
        The gate between policy and context (``config.gate`` if ``config``
        is given and ``gate`` is left at ``"none"``).
    config:
        The runtime; defaults to per-append checks, naive retry, re-append
        on stream loss, no repair, provider = ``format`` or anthropic.
    levels, seeds, horizon:
        The suite: one simulated run per level × seed, ``horizon`` seconds.
    slow_levels:
        The suite's slow-call runs: one per slow level × seed, in which
        batches now and then start a test run or a build minutes long while
        the user writes and checks fire (see :mod:`.suite`); ``()`` for none.
    seed, max_examples:
        The adversarial search's seed and number of runs (0: no search).
    timeout:
        Seconds one policy call may take before it counts as hung.
    name:
        How to name a policy given as an object.
    placements:
        Where the runtime fires its budget check, one check per placement.
        None: every placement (``after_append``, ``after_batch``,
        ``before_invoke``) when ``config`` is None, else ``config.check_at``.
    time_limit:
        Seconds the whole check may take; at the limit it stops with a
        partial verdict (``timed_out``): unsafe if a violation was found,
        else ``out_of_time``.  None: no limit.
    max_events:
        Events one scenario may apply before it is capped.
    progress:
        Told what runs and how far it got (see :mod:`.progress`).
    failures:
        The failure database (:mod:`.failures`): a folder, a
        :class:`FailureDatabase`, False (none); None or True, the default
        of every entry point: ``$PRUNECHECK_FAILURES`` (a folder, or
        ``off``), else ``.prunecheck/failures`` in the current folder.
        Saved failures of this policy in this runtime
        are replayed first: one that still fails decides its placement at
        once (unsafe, its reproduction) and replaces the search; the suite
        still runs, so the table shows the same rows as when the failure was
        found; every new counterexample is saved.  What a database opened
        here discards is reported as a ``RuntimeWarning``.
    jobs:
        Processes to check placements in, side by side (forked; each starts
        its own policy worker).  None: one a placement when the machine has
        two cores or more (``$PRUNECHECK_JOBS`` caps it); 1: one after the
        other in this process.  Only a policy given as a spec is checked
        side by side (one given as an object may keep state here).  The
        results are the same either way.
    providers:
        Providers to judge the subject against (``"bedrock,gemini"`` or a
        list): the check runs under the first one (its rules and texts,
        whatever ``config.provider`` says), and every request of the
        reproductions is judged by each one's rules
        (:mod:`.providers`); :attr:`CheckResult.providers` holds each
        one's first rejection, or that it accepts.  None: the runtime's
        provider alone, and no judgments.

    Returns
    -------
    CheckResult
        Never raises for a misbehaving policy: the verdict is ``error``.

    Raises
    ------
    PolicyError
        if the policy cannot be loaded at all.
    """
    check_options(  # a bad option is one paragraph, before any work
        format=format,
        gate=gate,
        levels=levels,
        seeds=seeds,
        horizon=horizon,
        slow_levels=slow_levels,
        seed=seed,
        max_examples=max_examples,
        timeout=timeout,
        placements=placements,
        time_limit=time_limit,
        max_events=max_events,
        jobs=jobs,
        providers=providers,
    )
    named = parse_providers(providers, flag="providers")
    runtime = _runtime(policy, format, timeout)
    loaded: Policy | None = None
    if runtime is not None:  # a runtime under test: its own code is checked
        spec = runtime.name
    else:
        spec, loaded = resolve_policy(policy, format=format, name=name)
        if format is None and (found := format_of(loaded)) is not None:
            format = found
    base = config or RuntimeConfig(provider=Provider(format) if format else Provider.ANTHROPIC)
    if config is None or Gate(gate) is not Gate.NONE:
        base = replace(base, gate=Gate(gate))
    if named:  # the first provider named runs the check
        base = replace(base, provider=named[0])
    if placements is None:
        placements = tuple(CheckAt) if config is None else (base.check_at,)
    wanted = tuple(dict.fromkeys(CheckAt(p) for p in placements))
    deadline = None if time_limit is None else time.monotonic() + time_limit
    db = open_database(failures)
    bar = progress or Progress()
    suite = Suite(tuple(levels), tuple(seeds), horizon, tuple(slow_levels))
    bar.start(len(wanted) * (suite.size() + (1 if max_examples > 0 else 0)))
    done: dict[CheckAt, CheckResult] = {}
    todo: list[CheckAt] = []
    saved_by: dict[CheckAt, Trace] = {}  # placements a saved failure answers
    subject = _Subject(spec, loaded, runtime, timeout)
    with fewer_full_collections():  # see :mod:`.collector`
        try:
            for check_at in wanted:  # saved failures first: a bug that came back, at once
                run = _Check(subject, replace(base, check_at=check_at), deadline, bar)
                try:
                    saved = (
                        db.still_failing(spec, run.system, run.config) if db is not None else None
                    )
                except PolicyError as exc:
                    run.error = f"replaying a saved failure: {exc.paragraph()}"
                    done[check_at] = run.result(None)
                    break
                if saved is not None:  # unsafe at once; the suite still runs for its table
                    saved_by[check_at] = saved.trace
                todo.append(check_at)
            if not any(r.verdict is Verdict.ERROR for r in done.values()):
                one = _placement(
                    subject, base, deadline, suite, seed, max_examples, max_events, saved_by
                )
                # a policy given as an object may keep state in this process: one by one
                # (a runtime under test is checked one placement after the other: its
                # worker's failures are reported by the process that started it)
                many = (
                    len(todo) > 1
                    and isinstance(policy, str)
                    and runtime is None
                    and (jobs if jobs is not None else available_jobs()) > 1
                )
                if many:  # side by side, one process a placement (see :mod:`.forked`)
                    if max_examples > 0:
                        _ready_to_search()  # once here, not in each forked process
                    bar.start(len(todo), "placements")  # what this process sees of them

                    def finished(i: int) -> None:
                        bar.finished(f"checks {todo[i]} done")

                    results = fork_map(one, todo, jobs=jobs, done=finished)
                    results = [
                        replace(r, policy_object=loaded, system_object=subject.system)
                        for r in results
                    ]
                else:
                    results = []
                    for check_at in todo:
                        results.append(one(check_at, bar))
                        if results[-1].verdict is Verdict.ERROR:
                            break
                for check_at, result in zip(todo, results, strict=False):
                    done[check_at] = result
                    repro = result.reproduction
                    unsafe = result.verdict is Verdict.UNSAFE and check_at not in saved_by
                    if db is not None and unsafe and repro is not None:  # a new one: saved
                        db.save(repro, spec)
        finally:
            bar.close()
    warn_problems(db, failures)
    ordered = [done[c] for c in wanted if c in done]
    first_error = next((i for i, r in enumerate(ordered) if r.verdict is Verdict.ERROR), None)
    result = combine(ordered if first_error is None else ordered[: first_error + 1])
    return _judged(result, named) if named else result


def _judged(result: CheckResult, providers: Sequence[Provider]) -> CheckResult:
    """``result`` with each provider's judgment of its reproductions' requests
    (the lead reproduction first, then each other unsafe placement's)."""
    placements = result.placements or (result,)
    lead = [p for p in placements if p.reproduction is result.reproduction]
    traces = [
        (str(p.config.check_at), p.reproduction)
        for p in [*lead, *(p for p in placements if p not in lead)]
        if p.reproduction is not None and p.verdict is Verdict.UNSAFE
    ]
    system = result.system
    if result.verdict is Verdict.SAFE:
        return replace(result, providers=first_rejections([], system, providers))
    reason = {
        Verdict.ERROR: "the check stopped on an error",
        Verdict.OUT_OF_TIME: "the check ran out of time before a reproduction",
    }.get(result.verdict, "the reproduction no longer replays")
    if system is not None and traces:
        try:
            judged = first_rejections(traces, system, providers)
            repairs = judge_repairs(traces, system, providers)
        except PrunecheckError:  # a policy that no longer replays: not judged
            pass
        else:
            return replace(result, providers=judged, repairs=repairs)
    return replace(result, providers=tuple(not_judged(p, reason) for p in providers))


def _placement(
    subject: _Subject,
    base: RuntimeConfig,
    deadline: float | None,
    suite: Suite,
    seed: int,
    max_examples: int,
    max_events: int,
    saved_by: dict[CheckAt, Trace],
) -> Callable[..., CheckResult]:
    """The check of one placement, as a task (in this process, or a forked one).
    A placement in ``saved_by`` runs the suite (its rows, the same as when
    the failure was found) and takes the saved failure as its
    reproduction instead of searching."""

    def one(check_at: CheckAt, progress: Progress | None = None) -> CheckResult:
        if progress is None:  # a forked process: its cage workers end with it
            _close_cages_at_exit()
        config = replace(base, check_at=check_at)
        run = _Check(subject, config, deadline, progress or Progress())
        result = run.run(suite, seed, max_examples, max_events, saved_by.get(check_at))
        if progress is not None:
            return result
        return replace(result, policy_object=None, system_object=None)  # not sent back

    return one


def _close_cages_at_exit() -> None:
    """Stop (and wait for) this forked process's cage workers when it ends: a
    forked worker exits without running ``atexit``, which would leave them to
    die unreaped (and their CPU time unaccounted) when it is gone."""
    import multiprocessing.util

    pid = os.getpid()
    if pid not in _CLOSING:
        _CLOSING.add(pid)
        multiprocessing.util.Finalize(None, close_all, exitpriority=0)


#: Processes that stop their cage workers when they end (:func:`_close_cages_at_exit`).
_CLOSING: set[int] = set()


def _ready_to_search() -> None:
    """Import the search before forking, so the processes inherit it."""
    from prunecheck.sim.drivers import search  # noqa: F401 - imported, to be inherited


def _runtime(policy: PolicyLike, format: str | None, timeout: float) -> System[Any] | None:
    """The runtime under test a ``runtime:`` spec names (None for a policy)."""
    if not isinstance(policy, str) or format is not None:
        return None
    parsed = parse_spec_or_none(policy)
    if parsed is None or not parsed.kind.is_runtime:
        return None
    return load_runtime(parsed, timeout)


class _Subject:
    """What a check drives, wrapped once: the system of its scenarios, and
    that of each search (a policy's search runs it behind a fresh
    :class:`Tripwire`)."""

    def __init__(
        self, spec: str, loaded: Policy | None, runtime: System[Any] | None, timeout: float
    ) -> None:
        self.spec, self.loaded, self.timeout = spec, loaded, timeout
        if loaded is None:
            assert runtime is not None
            self.system: System[Any] = runtime
        else:
            self.system = model_system(spec, loaded, timeout)

    def searched(self) -> tuple[System[Any], Tripwire | None]:
        """The system a search drives, and its tripwire (None for a runtime
        under test, whose calls are limited in its own worker)."""
        if self.loaded is None:
            return self.system, None
        tripwire = Tripwire(self.loaded, self.timeout)
        return ModelSystem(tripwire, self.spec, timed=reads_times(self.loaded)), tripwire


class _Check:
    """One check's accumulating state (one placement): what finished stays."""

    def __init__(
        self,
        subject: _Subject,
        config: RuntimeConfig,
        deadline: float | None,
        progress: Progress,
    ) -> None:
        self.spec, self.loaded, self.config = subject.spec, subject.loaded, config
        self.subject, self.system = subject, subject.system
        self.deadline, self.progress = deadline, progress
        self.runs: list[ScenarioResult] = []
        self.totals: Counter[str] = Counter()
        self.failing: list[Trace] = []
        self.error: str | None = None
        self.examples = 0
        #: Wall seconds of the search (or of replaying a saved failure instead).
        self.search_seconds = 0.0
        self.timed_out = False
        #: What the suite and the search exercised (None: neither ran).
        self.coverage: Coverage | None = None
        self.observed = not self.system.facts.own_gate  # a runtime under test prunes by itself

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def run(
        self,
        suite: Suite,
        seed: int,
        max_examples: int,
        max_events: int,
        saved: Trace | None = None,
    ) -> CheckResult:
        """Run the suite, then the search (or, with a ``saved`` failure that
        still fails, take it as the reproduction: no search)."""
        where = f"checks {self.config.check_at}"
        if saved is not None:
            began = time.perf_counter()
            self.saved_incidents(saved)
            self.search_seconds = time.perf_counter() - began
        for scenario in suite.scenarios(self.config.check_at):
            if self.out_of_time():
                return self.result(saved or self.repro_from_suite())
            self.progress.step(f"{where}: {scenario.name}")
            began = time.perf_counter()
            result = run_scenario(
                self.system, self.config, scenario, suite.horizon, max_events=max_events
            )
            seconds = time.perf_counter() - began
            counts = {k: n for k, n in result.incidents.items() if n}
            error = f"scenario '{scenario.name}': {result.error}" if result.error else None
            exposed = class_exposure(result.exposed)
            capped = error is None and result.events >= max_events
            self.runs.append(
                ScenarioResult(
                    scenario,
                    counts,
                    result.invocations,
                    result.events,
                    error,
                    exposed,
                    capped,
                    seconds,
                )
            )
            self.totals.update(counts)
            self.covered(
                Coverage.from_counters(
                    result.counters,
                    runs=len(result.traces),
                    events=result.events,
                    placements=(self.config.check_at,),
                    proposals_observed=self.observed,
                )
            )
            if any(IncidentKind(k).is_violation for k in counts):
                self.failing.extend(result.traces)
            if error:
                self.error = error
                return self.result(None)
        if saved is not None:
            return self.result(saved)
        repro = None
        if max_examples > 0 and not self.out_of_time():
            from prunecheck.sim.drivers.search import search

            self.progress.step(f"{where}: adversarial search")
            searched, tripwire = self.subject.searched()
            began = time.perf_counter()
            try:
                found = search(
                    searched,
                    self.config,
                    seed=seed,
                    max_examples=max_examples,
                    deadline=self.deadline,
                    progress=self.progress.runs(max_examples),
                )
            except PolicyError as exc:
                named = search_error(exc, tripwire) if tripwire is not None else exc
                self.error = f"adversarial search: {named.paragraph()}"
                return self.result(None)
            self.examples = found.examples
            self.search_seconds = time.perf_counter() - began
            self.covered(found.coverage)
            self.timed_out = self.timed_out or found.timed_out
            if found.found and found.trace is not None:
                repro = found.trace
                self.totals.update(i.kind.value for i in found.incidents)
        return self.result(repro or self.repro_from_suite())

    def saved_incidents(self, saved: Trace) -> None:
        """Count a saved failure's incidents and coverage as the search's
        were counted when it found it."""
        state: Any = None
        for step, now in replay(saved, self.system, record=False):
            self.totals.update(i.kind.value for i in step.result.incidents)
            state = now
        if state is not None:
            self.covered(
                Coverage.from_counters(
                    self.system.truth(state).counters,
                    runs=1,
                    events=len(saved.events),
                    placements=(self.config.check_at,),
                    proposals_observed=self.observed,
                )
            )

    def covered(self, more: Coverage) -> None:
        self.coverage = more if self.coverage is None else self.coverage.merge(more)

    def repro_from_suite(self) -> Trace | None:
        return _shortest_prefix(self.failing, self.system) if self.failing else None

    def result(self, repro: Trace | None) -> CheckResult:
        narrative = ""
        if repro is not None:
            repro = minimal_reproduction(repro, self.system, deadline=self.deadline)
            steps = [step for step, _ in replay(repro, self.system, record=True)]
            story = narrate(repro, steps)
            narrative = story.text()
        if self.error is not None:
            verdict = Verdict.ERROR
            narrative = narrative or self.error
        elif any(IncidentKind(k).is_violation and n for k, n in self.totals.items()):
            verdict = Verdict.UNSAFE
        elif self.timed_out:
            verdict = Verdict.OUT_OF_TIME
        else:
            verdict = Verdict.SAFE
        totals = {k: n for k, n in sorted(self.totals.items()) if n}
        return CheckResult(
            self.spec,
            self.config,
            verdict,
            tuple(self.runs),
            totals,
            repro,
            narrative,
            self.error,
            self.examples,
            self.loaded,
            timed_out=self.timed_out,
            coverage=self.coverage,
            search_seconds=self.search_seconds,
        )


def _first_violation(trace: Trace, system: System[Any]) -> int | None:
    for step, _ in replay(trace, system, record=False):
        if any(i.is_violation for i in step.result.incidents):
            return step.index
    return None


def _shortest_prefix(traces: Sequence[Trace], system: System[Any]) -> Trace | None:
    """The shortest prefix, over ``traces``, that ends at a first violation."""
    best: Trace | None = None
    for trace in traces:
        try:
            at = _first_violation(trace, system)
        except PolicyError:
            continue
        if at is not None and (best is None or at + 1 < len(best.events)):
            times = trace.times[: at + 1] if trace.times is not None else None
            best = replace(
                trace,
                events=trace.events[: at + 1],
                times=times,
                meta={**trace.meta, "found_by": {"driver": "simulate"}},
            )
    return best


class UnsafePolicy(AssertionError):
    """A check failed: the policy is unsafe or misbehaved.  ``result`` holds
    the whole :class:`CheckResult`; the message is :func:`failure_report`."""

    def __init__(self, result: CheckResult, bundle: Path | None = None) -> None:
        super().__init__(failure_report(result, bundle))
        self.result = result
        self.bundle = bundle


# pytest and tracebacks name it as it is imported: ``prunecheck.UnsafePolicy``.
UnsafePolicy.__module__ = "prunecheck"


def first_violation(result: CheckResult) -> str | None:
    """The reproduction's first violation in words — ``"orphaned result at
    step 7 of 7: result m4 for call c1 is …"`` — or None (safe, an error, or
    a policy that no longer replays)."""
    trace, system = result.reproduction, result.system
    if trace is None or system is None:
        return None
    try:
        for step, _ in replay(trace, system, record=False):
            bad = next((i for i in step.result.incidents if i.is_violation), None)
            if bad is not None:
                return (
                    f"{bad.kind.label} at step {step.index + 1} of {len(trace.events)}: "
                    f"{bad.detail}"
                )
    except PrunecheckError:
        return None
    return None


def failure_report(result: CheckResult, bundle: Path | None = None) -> str:
    """What a failed check says: a first line naming the policy and its first
    violation, a second naming the reproduction (its bundle's folder when
    written), then the scenario table, the verdict, and the minimal
    reproduction step by step (or the policy error)."""
    state = {Verdict.UNSAFE: "UNSAFE", Verdict.OUT_OF_TIME: "OUT OF TIME (no verdict)"}
    where = f"(gate {result.config.gate}, checks {result.config.check_at})"
    violation = first_violation(result)
    head = f"prunecheck: policy {result.policy} is {state.get(result.verdict, 'in ERROR')}"
    head += f": {violation} {where}" if violation else f" {where}"
    parts = [head]
    if bundle is not None:
        parts.append(f"reproduction bundle: {bundle}")
    elif result.reproduction is not None:
        parts.append(
            f"reproduction: {len(result.reproduction.events)} events, narrated below "
            "(pytest --prunecheck-out DIR, or result.bundle(DIR), writes its bundle)"
        )
    parts += ["", result.summary()]
    if result.reproduction is not None:
        note = shrink_note(result.reproduction)
        parts += [
            f"minimal reproduction ({len(result.reproduction.events)} events"
            + (f"; {note}" if note else "")
            + "):",
            result.narrative,
        ]
    return "\n".join(parts).rstrip() + "\n"


def assert_policy_safe(
    policy: PolicyLike,
    *,
    bundle_dir: str | Path | None = None,
    force: bool = False,
    _stacklevel: int = 2,
    **options: Any,
) -> CheckResult:
    """Check ``policy`` (same options as :func:`check_policy`) and raise
    :class:`UnsafePolicy` — an ``AssertionError`` whose message is
    :func:`failure_report` — unless it is safe.  A safe but vacuous verdict
    (:attr:`CheckResult.vacuous`: the policy never faced what the invariant
    is about) passes with a
    :class:`~prunecheck.sim.api.vacuity.PrunecheckVacuousWarning`
    saying what went unexercised; make that warning an error
    (``-W error::prunecheck.PrunecheckVacuousWarning``) to fail instead.

    The one assertion helper: the pytest fixture's
    ``prunecheck.assert_policy_safe`` is this function with ``bundle_dir``
    taken from ``--prunecheck-out`` and the options of the test's
    ``@pytest.mark.prunecheck(...)``.

    Parameters
    ----------
    policy : PolicyLike
        What :func:`check_policy` takes.
    bundle_dir : str or Path, optional
        Write the reproduction bundle there first (its path is the
        message's second line).
    force : bool
        Let the bundle replace a folder that already holds files.
    **options
        :func:`check_policy`'s options: ``format``, ``gate``, ``config``,
        ``placements``, ``levels``, ``seeds``, ``horizon``, ``seed``,
        ``max_examples``, ``timeout``, ``time_limit``, ``max_events``.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    result = check_policy(policy, **options)
    if result.safe:
        if result.vacuous:
            clause = vacuous_clause(result.coverage, "check")
            warnings.warn(
                f"prunecheck: policy {result.policy} is {clause}",
                PrunecheckVacuousWarning,
                stacklevel=_stacklevel,
            )
        return result
    bundle = result.bundle(bundle_dir, force=force) if bundle_dir and result.reproduction else None
    raise UnsafePolicy(result, bundle)
