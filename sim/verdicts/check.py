"""``check_policy``: is this policy safe as it is?  The engine behind the
Python API, the pytest plugin and ``prunecheck check``.

A check runs a fixed, seeded suite — simulated runs at a few load levels ×
seeds (:func:`~prunecheck.sim.drivers.simulator.simulate`) — and then the adversarial
search (:func:`~prunecheck.sim.drivers.search.search`), under the runtime given
(gate ``none`` by default: the question is whether the policy itself keeps
the commit-boundary invariant).  A verdict is relative to *where the
runtime fires its budget check* (``check_at``: after every append, after a
batch completes, before each model call), so unless told one placement the
check runs once per placement and reports each (:mod:`.placements`): a
trimmer that runs only on complete histories may be safe before model
calls and unsafe after every append.  The verdict is *unsafe* when any
violation was seen; the reproduction is the search's shrunk counterexample,
or else the shortest failing prefix of a simulated run.  A policy that
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
>>> result = check_policy("unit_safe", levels=(0.2,), seeds=(1,), max_examples=20)
>>> result.safe, result.reproduction is None
(True, True)
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import FunctionPolicy, Policy, as_policy
from prunecheck.model.provider import Provider
from prunecheck.model.runtime import CheckAt, RuntimeConfig
from prunecheck.model.trace import Trace, dumps, replay
from prunecheck.sim.adapters.lists import list_policy
from prunecheck.sim.adapters.loader import DEFAULT_TIMEOUT, guarded, load_policy
from prunecheck.sim.adapters.policy_spec import list_format
from prunecheck.sim.adapters.tripwire import Tripwire, search_error
from prunecheck.sim.reproductions.narrative import narrate
from prunecheck.sim.support.progress import Progress

__all__ = [
    "DEFAULT_HORIZON",
    "DEFAULT_LEVELS",
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_SEEDS",
    "CheckResult",
    "Scenario",
    "ScenarioResult",
    "UnsafePolicy",
    "Verdict",
    "assert_policy_safe",
    "check_policy",
    "failure_report",
    "resolve_policy",
]

#: Load levels of the fixed suite (0: one patient agent … 1: four busy ones).
DEFAULT_LEVELS: tuple[float, ...] = (0.2, 0.6, 1.0)
#: Seeds of the fixed suite.
DEFAULT_SEEDS: tuple[int, ...] = (1, 2, 3)
#: Simulated seconds per scenario.
DEFAULT_HORIZON = 300.0
#: Events one scenario may apply (all agents together) before it is capped.
DEFAULT_MAX_EVENTS = 50_000

PolicyLike = str | Policy | Callable[..., Any]


class Verdict(StrEnum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    ERROR = "error"
    #: The time limit came before a verdict: no violation in what was covered.
    OUT_OF_TIME = "out_of_time"


@dataclass(frozen=True, slots=True)
class Scenario:
    """One simulated run of the suite."""

    level: float
    seed: int
    check_at: CheckAt | None = None

    @property
    def name(self) -> str:
        return f"load {self.level:g}, seed {self.seed}"


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """What one scenario produced: incidents per kind, and invocations that
    met each kind (``exposed``, with ``any_violation``), non-zero only."""

    scenario: Scenario
    incidents: Mapping[str, int]
    invocations: int
    events: int
    error: str | None = None
    exposed: Mapping[str, int] = field(default_factory=dict)
    capped: bool = False

    @property
    def violations(self) -> int:
        return sum(n for k, n in self.incidents.items() if IncidentKind(k).is_violation)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on one policy in one runtime.

    Attributes
    ----------
    policy: the policy's spec (or name).
    config: the runtime it was checked in.
    verdict: safe, unsafe, or error (the policy raised, hung, returned garbage).
    scenarios: the suite's runs that finished, in order.
    incidents: every incident kind seen in the suite and the reproduction,
        with counts (costs included; see :attr:`violations`).
    reproduction: the shortest failing trace found (None when safe).
    narrative: the reproduction replayed step by step (or the error).
    error: the policy error, as one paragraph, or None.
    search_examples: runs the adversarial search tried.
    placements: one result per budget-check placement checked (each with
        its own verdict and reproduction), in ``CheckAt`` order; this
        result combines them: unsafe if any is, and its reproduction is
        that of the first unsafe placement.
    timed_out: the time limit stopped the check; what it covered is in
        ``scenarios`` and ``search_examples``.
    """

    policy: str
    config: RuntimeConfig
    verdict: Verdict
    scenarios: tuple[ScenarioResult, ...]
    incidents: Mapping[str, int]
    reproduction: Trace | None
    narrative: str
    error: str | None = None
    search_examples: int = 0
    policy_object: Policy | None = field(default=None, repr=False, compare=False)
    placements: tuple[CheckResult, ...] = ()
    timed_out: bool = False

    @property
    def safe(self) -> bool:
        return self.verdict is Verdict.SAFE

    def placement(self, check_at: CheckAt | str) -> CheckResult | None:
        """The result for one placement, or None if it was not checked."""
        return next((p for p in self.placements if p.config.check_at == CheckAt(check_at)),
                    None)

    @property
    def violations(self) -> dict[str, int]:
        return {k: n for k, n in self.incidents.items() if IncidentKind(k).is_violation}

    def summary(self, *, verdict: bool = True) -> str:
        """A plain-text table of the scenarios, one row per placement with
        its verdict, and the verdict line (see :mod:`.placements`)."""
        from prunecheck.sim.verdicts.placements import summary

        return summary(self, verdict=verdict)

    def verdict_line(self, bundles: Mapping[str, Path] | None = None) -> str:
        """One line: the verdict and, when placements disagree, which
        runtime it holds for; ``bundles`` names where reproductions went."""
        from prunecheck.sim.verdicts.placements import verdict_line

        return verdict_line(self, bundles)

    def bundle(self, out_dir: str | Path, *, force: bool = False) -> Path:
        """Write the reproduction bundle (trace, narrative, …) to ``out_dir``.

        Raises
        ------
        TraceError
            if there is no reproduction (the policy was found safe).
        """
        if self.reproduction is None:
            raise TraceError(f"check of {self.policy!r}", "has no reproduction to write.",
                             "only an unsafe verdict comes with a reproduction.")
        out = Path(out_dir)
        try:
            bundles = importlib.import_module("prunecheck.sim.reproductions.bundle")
        except ImportError:  # the bundle writer of the search issue is not installed
            out.mkdir(parents=True, exist_ok=True)
            (out / "trace.json").write_text(dumps(self.reproduction), encoding="utf-8")
            (out / "narrative.md").write_text(self.narrative, encoding="utf-8")
            return out
        return Path(bundles.write_bundle(self.reproduction, out, policy=self.policy_object,
                                         force=force))


def resolve_policy(policy: PolicyLike, *, format: str | None = None,
                   name: str | None = None) -> tuple[str, Policy]:
    """``(spec, policy)`` for a spec, a policy object, a ``select`` function,
    or — with ``format`` — a list function ``trim(messages)``."""
    if isinstance(policy, str):
        spec = policy
        if format is not None and list_format(spec) is None:
            spec = f"{spec}@{format}"  # a built-in so named fails to load, and says so
        loaded = load_policy(spec)
        if _list_format(loaded) is not None:
            spec = loaded.name  # canonical for framework specs (langchain:..., autogen:...)
        return spec, loaded
    if format is not None:
        adapted = list_policy(policy, format, name=name)
        return adapted.name, adapted
    label = name or getattr(policy, "name", None) or getattr(policy, "__name__", "policy")
    if name is not None and callable(policy) and not hasattr(policy, "select"):
        return name, FunctionPolicy(policy, name)
    try:
        obj = as_policy(policy, str(label))
    except TypeError as exc:
        raise PolicyError(f"policy {label!r}", str(exc) + ".",
                          "pass a spec, a select(view, need) function or a policy object; "
                          "a trim(messages) list function needs format='openai' or "
                          "'anthropic'.") from None
    return str(getattr(obj, "name", label)), obj


def _list_format(policy: Policy) -> str | None:
    """A list function's provider format (in-process or caged), else None."""
    fmt = getattr(policy, "format", None)
    return fmt.value if isinstance(fmt, Provider) else None


def check_policy(policy: PolicyLike, *, format: str | None = None, gate: Gate | str = "none",
                 config: RuntimeConfig | None = None, levels: Sequence[float] = DEFAULT_LEVELS,
                 seeds: Sequence[int] = DEFAULT_SEEDS, horizon: float = DEFAULT_HORIZON,
                 seed: int = 0, max_examples: int = 200, timeout: float = DEFAULT_TIMEOUT,
                 name: str | None = None,
                 placements: Sequence[CheckAt | str] | None = None,
                 time_limit: float | None = None, max_events: int = DEFAULT_MAX_EVENTS,
                 progress: Progress | None = None) -> CheckResult:
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

    Returns
    -------
    CheckResult
        Never raises for a misbehaving policy: the verdict is ``error``.

    Raises
    ------
    PolicyError
        if the policy cannot be loaded at all.
    """
    spec, loaded = resolve_policy(policy, format=format, name=name)
    if format is None and (found := _list_format(loaded)) is not None:
        format = found
    base = config or RuntimeConfig(provider=Provider(format) if format else Provider.ANTHROPIC)
    if config is None or Gate(gate) is not Gate.NONE:
        base = replace(base, gate=Gate(gate))
    if placements is None:
        placements = tuple(CheckAt) if config is None else (base.check_at,)
    wanted = tuple(dict.fromkeys(CheckAt(p) for p in placements))
    deadline = None if time_limit is None else time.monotonic() + time_limit
    bar = progress or Progress()
    bar.start(len(wanted) * (len(levels) * len(seeds) + (1 if max_examples > 0 else 0)))
    done: list[CheckResult] = []
    try:
        for check_at in wanted:
            run = _Check(spec, loaded, replace(base, check_at=check_at), timeout, deadline, bar)
            done.append(run.run(levels, seeds, horizon, seed, max_examples, max_events))
            if done[-1].verdict is Verdict.ERROR:
                break
    finally:
        bar.close()
    from prunecheck.sim.verdicts.placements import combine

    return combine(done)


class _Check:
    """One check's accumulating state (one placement): what finished stays."""

    def __init__(self, spec: str, loaded: Policy, config: RuntimeConfig, timeout: float,
                 deadline: float | None, progress: Progress) -> None:
        self.spec, self.loaded, self.config, self.timeout = spec, loaded, config, timeout
        self.deadline, self.progress = deadline, progress
        self.policy = guarded(loaded, timeout)
        self.runs: list[ScenarioResult] = []
        self.totals: dict[str, int] = {}
        self.failing: list[Trace] = []
        self.error: str | None = None
        self.examples = 0
        self.timed_out = False

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def run(self, levels: Sequence[float], seeds: Sequence[int], horizon: float, seed: int,
            max_examples: int, max_events: int) -> CheckResult:
        from prunecheck.sim.drivers.simulator import simulate
        from prunecheck.sim.drivers.workload import load_at

        where = f"checks {self.config.check_at}"
        for scenario in (Scenario(level, s, self.config.check_at)
                         for level in levels for s in seeds):
            if self.out_of_time():
                return self.result(self.repro_from_suite())
            self.progress.step(f"{where}: {scenario.name}")
            result = simulate(self.spec, self.config, load_at(scenario.level), scenario.seed,
                              policy=self.policy, horizon=horizon, max_events=max_events)
            counts = {k: n for k, n in result.incidents.items() if n}
            error = f"scenario '{scenario.name}': {result.error}" if result.error else None
            exposed = {k: n for k, n in result.exposed.items() if n and ":" not in k}
            capped = error is None and result.events >= max_events
            self.runs.append(ScenarioResult(scenario, counts, result.invocations, result.events,
                                            error, exposed, capped))
            _add(self.totals, counts)
            if any(IncidentKind(k).is_violation for k in counts):
                self.failing.extend(result.traces)
            if error:
                self.error = error
                return self.result(None)
        repro = None
        if max_examples > 0 and not self.out_of_time():
            from prunecheck.sim.drivers.search import search

            self.progress.step(f"{where}: adversarial search")
            tripwire = Tripwire(self.loaded, self.timeout)
            try:
                found = search(self.spec, self.config, seed=seed, max_examples=max_examples,
                               policy=tripwire, deadline=self.deadline,
                               progress=self.progress.runs(max_examples))
            except PolicyError as exc:
                self.error = f"adversarial search: {search_error(exc, tripwire).paragraph()}"
                return self.result(None)
            self.examples = found.examples
            self.timed_out = self.timed_out or found.timed_out
            if found.found and found.trace is not None:
                repro = found.trace
                _add(self.totals, _count(i.kind.value for i in found.incidents))
        return self.result(repro or self.repro_from_suite())

    def repro_from_suite(self) -> Trace | None:
        return _shortest_prefix(self.failing, self.policy) if self.failing else None

    def result(self, repro: Trace | None) -> CheckResult:
        narrative = ""
        if repro is not None:
            steps = [step for step, _ in replay(repro, self.policy, record=True)]
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
        return CheckResult(self.spec, self.config, verdict, tuple(self.runs), totals, repro,
                           narrative, self.error, self.examples, self.loaded,
                           timed_out=self.timed_out)


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for key, value in more.items():
        total[key] = total.get(key, 0) + value


def _count(kinds: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in kinds:
        out[kind] = out.get(kind, 0) + 1
    return out


def _first_violation(trace: Trace, policy: Policy) -> int | None:
    for step, _ in replay(trace, policy, record=False):
        if any(i.is_violation for i in step.result.incidents):
            return step.index
    return None


def _shortest_prefix(traces: Sequence[Trace], policy: Policy) -> Trace | None:
    """The shortest prefix, over ``traces``, that ends at a first violation."""
    best: Trace | None = None
    for trace in traces:
        try:
            at = _first_violation(trace, policy)
        except PolicyError:
            continue
        if at is not None and (best is None or at + 1 < len(best.events)):
            times = trace.times[: at + 1] if trace.times is not None else None
            best = Trace(trace.policy, trace.config, trace.events[: at + 1], trace.seed, times,
                         {**trace.meta, "found_by": {"driver": "simulate"}})
    return best


class UnsafePolicy(AssertionError):
    """A check failed: the policy is unsafe or misbehaved.  ``result`` holds
    the whole :class:`CheckResult`; the message is :func:`failure_report`."""

    def __init__(self, result: CheckResult, bundle: Path | None = None) -> None:
        super().__init__(failure_report(result, bundle))
        self.result = result
        self.bundle = bundle


def failure_report(result: CheckResult, bundle: Path | None = None) -> str:
    """What a failed check says: the scenario table, the verdict, and the
    minimal reproduction step by step (or the policy error)."""
    state = {Verdict.UNSAFE: "UNSAFE", Verdict.OUT_OF_TIME: "OUT OF TIME (no verdict)"}
    head = (f"prunecheck: policy {result.policy} is "
            f"{state.get(result.verdict, 'in ERROR')} "
            f"(gate {result.config.gate}, checks {result.config.check_at})")
    parts = [head, "", result.summary()]
    if result.reproduction is not None:
        parts += [f"minimal reproduction ({len(result.reproduction.events)} events):",
                  result.narrative]
    if bundle is not None:
        parts.append(f"reproduction bundle: {bundle}")
    return "\n".join(parts).rstrip() + "\n"


def assert_policy_safe(policy: PolicyLike, *, bundle_dir: str | Path | None = None,
                       **options: Any) -> CheckResult:
    """Check ``policy`` (same options as :func:`check_policy`) and raise
    :class:`UnsafePolicy` — an ``AssertionError`` whose message is the
    minimal reproduction — unless it is safe.  With ``bundle_dir``, the
    reproduction bundle is written there first."""
    result = check_policy(policy, **options)
    if result.safe:
        return result
    bundle = result.bundle(bundle_dir) if bundle_dir and result.reproduction else None
    raise UnsafePolicy(result, bundle)
