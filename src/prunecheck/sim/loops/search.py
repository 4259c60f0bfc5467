"""Search and shrink schedules of a real agent loop (Hypothesis swarm search).

Each generated run draws its own bounds (length, batch width, which of the
class's optional steps it may use: swarm testing) and then, step after step,
one of the steps enabled by the run's state (:func:`.scenarios.next_step`):
Hypothesis's choices are the environment's.  A run stops at its first
violation; Hypothesis shrinks the choices for at most ``shrink_runs`` runs
(a count, not a time: a seed always gives the same answer), and
:func:`minimize` then deletes steps of the shortest schedule while it still
fails the same way (the one shrinker of every subject,
:mod:`prunecheck.sim.support.shrinking`).  The result is a concrete schedule
(:mod:`.steps`), replayable without the search.

:func:`random_walk` is the baseline: uniform choices from a seeded
``random.Random``, no shrinking.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from prunecheck.model.incidents import Incident
from prunecheck.sim.support.seed_only import seed_only
from prunecheck.sim.support.shrinking import ddmin

from .contract import Adapter
from .scenarios import Bounds, Draw, Scenario, next_step
from .scheduler import LoopRun, StepRefused
from .steps import Step

__all__ = ["SHRINK_RUNS", "Outcome", "SearchOutcome", "minimize", "random_walk", "rerun", "search"]

#: Runs Hypothesis may spend shrinking one counterexample.
SHRINK_RUNS = 60


@dataclass(frozen=True, slots=True)
class Outcome:
    """One run of a schedule.

    Attributes
    ----------
    steps : tuple[Step, ...]
        The steps applied (up to the first violation).
    incidents : tuple[Incident, ...]
        Every incident, in order.
    requests : int
        Requests the model received.
    """

    steps: tuple[Step, ...]
    incidents: tuple[Incident, ...]
    requests: int

    @property
    def violations(self) -> tuple[Incident, ...]:
        return tuple(i for i in self.incidents if i.is_violation)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(i.kind.value for i in self.violations)


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """What a search found.

    Attributes
    ----------
    found : Outcome or None
        The shrunk counterexample, or None.
    examples : int
        Runs generated (shrinking included).
    schedules : int
        Schedules run in all (shrinking and polishing included).
    steps : int
        Steps applied over all runs.
    exercised : Counter[str]
        Step kinds applied over all runs, by kind.
    first_length : int or None
        Steps of the first counterexample, before shrinking.
    seconds : float
        Wall time (informational).
    timed_out : bool
        The deadline stopped the search (and cut its shrinking short).
    """

    found: Outcome | None
    examples: int
    schedules: int
    steps: int
    exercised: Counter[str] = field(default_factory=Counter)
    first_length: int | None = None
    seconds: float = 0.0
    timed_out: bool = False


class _Found(Exception):
    pass


class _Enough(Exception):
    pass


def _generate(
    adapter: Adapter, target: object, scenario: Scenario, draw: Draw, max_steps: int,
    exercised: Counter[str],
) -> Outcome:  # fmt: skip
    bounds = Bounds.draw(scenario, draw, max_steps=max_steps)
    tools = adapter.tools(target)
    counter = [0, 0]
    with LoopRun(adapter, target) as run:
        for _ in range(bounds.steps):
            step = next_step(run, scenario, bounds, tools, draw, counter)
            if step is None:
                break
            exercised[step.kind] += 1
            run.apply(step)
            if any(i.is_violation for i in run.incidents):
                break
        return Outcome(tuple(run.steps), tuple(run.incidents), len(run.ledger.requests))


def rerun(adapter: Adapter, target: object, steps: Sequence[Step]) -> Outcome | None:
    """Run a concrete schedule; None if one of its steps is not enabled when its turn comes.

    Stops at the first violation, as a search does.
    """
    with LoopRun(adapter, target) as run:
        for step in steps:
            try:
                run.apply(step)
            except StepRefused:
                return None
            if any(i.is_violation for i in run.incidents):
                break
        return Outcome(tuple(run.steps), tuple(run.incidents), len(run.ledger.requests))


def minimize(
    adapter: Adapter,
    target: object,
    found: Outcome,
    *,
    budget: int = 60,
    on_run: Callable[[], None] | None = None,
) -> Outcome:
    """Delete steps while the schedule still fails with the same violation kinds.

    The one shrinker (:func:`~prunecheck.sim.support.shrinking.ddmin`) with
    windows of 4, 3, 2 and 1 consecutive steps (a turn's user message and
    reply go together), from the last to the first, again while any
    deletion helped; at most ``budget`` replays.
    """
    best = found

    def attempt(steps: Sequence[Step], drop: range) -> tuple[Step, ...] | None:
        nonlocal best
        if on_run is not None:
            on_run()
        kept = [step for p, step in enumerate(steps) if p not in drop]
        trial = rerun(adapter, target, kept)
        if trial is not None and trial.violations and trial.kinds >= best.kinds:
            best = trial
            return trial.steps
        return None

    ddmin(found.steps, attempt, windows=(4, 3, 2, 1), limit=budget)
    return best


def search(
    adapter: Adapter,
    target: object,
    scenario: Scenario,
    *,
    seed: int = 0,
    max_examples: int = 40,
    max_steps: int = 16,
    shrink_runs: int = SHRINK_RUNS,
    polish_runs: int = 120,
    deadline: float | None = None,
    kinds: frozenset[str] | None = None,
) -> SearchOutcome:
    """Search for a schedule on which the loop breaks (see the module's docs).

    Parameters
    ----------
    adapter, target : Adapter, object
        The framework's adapter and the user's agent.
    scenario : Scenario
        What the environment may do.
    seed : int
        The same seed gives the same schedules, verdict and counterexample.
    max_examples : int
        Runs generated before shrinking.
    max_steps : int
        Steps of one schedule at most.
    shrink_runs, polish_runs : int
        Runs spent shrinking (Hypothesis) and deleting steps (:func:`minimize`).
    deadline : float or None
        A ``time.monotonic()`` after which no run starts (``--time-limit``):
        the search stops with what it found, unshrunk past it.
    kinds : frozenset[str] or None
        Violation kinds that count as a finding (``--target``); a run whose
        first violations are of other kinds ends there and is no finding.
        None: any violation.
    """
    started = time.perf_counter()
    exercised: Counter[str] = Counter()
    state = {"examples": 0, "schedules": 0, "shrinking": 0, "timed_out": 0}
    best: list[Outcome] = []
    first: list[int] = []

    @given(st.data())
    def run(data: st.DataObject) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            state["timed_out"] = 1
            raise _Enough
        if best:
            state["shrinking"] += 1
            if state["shrinking"] > shrink_runs:
                raise _Enough
        state["examples"] += 1
        state["schedules"] += 1

        def draw(n: int) -> int:
            return int(data.draw(st.integers(0, max(0, n - 1)))) if n > 1 else 0

        outcome = _generate(adapter, target, scenario, draw, max_steps, exercised)
        if outcome.violations and (kinds is None or outcome.kinds & kinds):
            if not first:
                first.append(len(outcome.steps))
            if not best or len(outcome.steps) < len(best[0].steps):
                best[:] = [outcome]
            raise _Found

    hypothesis_seed(seed)(run)
    settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )(run)
    try:
        with seed_only():  # the seed alone decides the draws (see that module)
            run()
    except (_Found, _Enough):
        pass
    except Exception as exc:  # Hypothesis's Flaky after an early stop, or a framework error
        if not best:
            raise
        del exc
    found = best[0] if best else None
    if found is not None and not state["timed_out"]:

        def count() -> None:
            state["schedules"] += 1

        found = minimize(adapter, target, found, budget=polish_runs, on_run=count)
    return SearchOutcome(
        found,
        state["examples"],
        state["schedules"],
        sum(exercised.values()),
        exercised,
        first[0] if first else None,
        time.perf_counter() - started,
        bool(state["timed_out"]),
    )


def random_walk(
    adapter: Adapter,
    target: object,
    scenario: Scenario,
    *,
    seed: int = 0,
    runs: int = 50,
    max_steps: int = 16,
) -> SearchOutcome:
    """Uniform random schedules from ``random.Random(seed)``, until one fails; no shrinking."""
    started = time.perf_counter()
    rng = random.Random(seed)
    exercised: Counter[str] = Counter()
    found: Outcome | None = None
    done = 0
    for _ in range(runs):
        done += 1
        outcome = _generate(adapter, target, scenario, lambda n: rng.randrange(max(1, n)),
                            max_steps, exercised)  # fmt: skip
        if outcome.violations:
            found = outcome
            break
    length = len(found.steps) if found else None
    seconds = time.perf_counter() - started
    return SearchOutcome(found, done, done, sum(exercised.values()), exercised, length, seconds)
