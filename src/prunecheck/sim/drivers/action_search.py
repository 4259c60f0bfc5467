"""Search and shrink action sequences of any subject driven by its own actions.

The driver of an :class:`~prunecheck.model.system.Actions` subject — a
framework's agent loop (:class:`prunecheck.sim.subjects.loops.system.LoopSystem`), or
any subject that says what it can do now.  Each generated run starts the
subject with Hypothesis's draws (it draws its own bounds: swarm testing),
then, step after step, draws one of the kinds of action the subject has
enabled now and an action of that kind: Hypothesis's choices are the
environment's.  A run stops at its first violation; Hypothesis shrinks the
choices for at most ``shrink_runs`` runs (a count, not a time: a seed always
gives the same answer), and :func:`minimize` then deletes actions of the
shortest sequence while it still fails the same way (the one shrinker of
every subject, :mod:`prunecheck.sim.drivers.shrinking`).  The result is a
concrete action sequence, replayable without the search (:func:`rerun`).

:func:`random_walk` is the baseline: uniform choices from a seeded
``random.Random``, no shrinking.  Nothing here knows what an action is.

**A subject that answers the same choices differently** (an agent in another
process whose timing the harness does not own, :mod:`prunecheck.sim.subjects.blackbox`)
makes Hypothesis's record of earlier runs disagree with a new one
(``FlakyStrategyDefinition``: a run drew where an earlier run with the same
choices had stopped, or from another range); so does one that raised an
error on a run and not on its replay (``FlakyFailure``: the harness's
patience with such an agent ran out once on a loaded machine, say, which
stops that run early).  A search never ends on either:
the run is dropped, generation starts again with a fresh record and a seed
derived from ``seed`` (the same seed still gives the same search for a
subject that does answer the same way), for the runs the budget has left,
and :attr:`SearchOutcome.inconsistent` counts such runs so that a verdict
can say so.  Every dropped run counted as one of ``max_examples``, so the
search still ends.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import Incident
from prunecheck.model.system import A, Actions, Draw, S
from prunecheck.sim.drivers.shrinking import ddmin
from prunecheck.sim.support.seed_only import seed_only

__all__ = [
    "POLISH_RUNS",
    "SHRINK_RUNS",
    "Outcome",
    "SearchOutcome",
    "Tally",
    "minimize",
    "random_walk",
    "rerun",
    "search",
]

#: Runs Hypothesis may spend shrinking one counterexample (read at each call).
SHRINK_RUNS = 60

#: Replays :func:`minimize` may spend deleting actions (read at each call).
POLISH_RUNS = 120


@dataclass(frozen=True, slots=True)
class Outcome(Generic[A]):
    """One run of an action sequence.

    Attributes
    ----------
    steps : tuple
        The actions performed (up to the first violation).
    incidents : tuple[Incident, ...]
        Every incident, in order.
    requests : int
        Requests the subject sent its model.
    """

    steps: tuple[A, ...]
    incidents: tuple[Incident, ...]
    requests: int

    @property
    def violations(self) -> tuple[Incident, ...]:
        return tuple(i for i in self.incidents if i.is_violation)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(i.kind.value for i in self.violations)


@dataclass(slots=True)
class Tally:
    """A subject's own figures over the generated runs (its optional
    ``measure(state)``: a mapping of names to integers per run).

    Attributes
    ----------
    runs : int
        Runs measured.
    most : dict[str, int]
        Each figure's largest value over the runs.
    hits : Counter[str]
        Runs in which each figure was above zero.
    """

    runs: int = 0
    most: dict[str, int] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)

    def add(self, figures: Mapping[str, int]) -> None:
        """One run's figures."""
        self.runs += 1
        for name, value in figures.items():
            self.most[name] = max(self.most.get(name, 0), value)
            if value > 0:
                self.hits[name] += 1

    def merged(self, other: Tally) -> Tally:
        """Both tallies' runs as one."""
        most = dict(self.most)
        for name, value in other.most.items():
            most[name] = max(most.get(name, 0), value)
        return Tally(self.runs + other.runs, most, self.hits + other.hits)


@dataclass(frozen=True, slots=True)
class SearchOutcome(Generic[A]):
    """What a search found.

    Attributes
    ----------
    found : Outcome or None
        The shrunk counterexample, or None.
    examples : int
        Runs generated (shrinking included).
    schedules : int
        Action sequences run in all (shrinking and polishing included).
    steps : int
        Actions performed over all generated runs.
    exercised : Counter[str]
        Actions performed over all generated runs, by kind.
    first_length : int or None
        Actions of the first counterexample, before shrinking.
    seconds : float
        Wall time (informational).
    timed_out : bool
        The deadline stopped the search (and cut its shrinking short).
    tally : Tally
        The subject's own figures over the generated runs (empty if it
        measures nothing).
    inconsistent : int
        Runs dropped because the subject answered choices an earlier run
        had made differently (see the module's docs); 0 for a subject that
        always answers the same.
    """

    found: Outcome[A] | None
    examples: int
    schedules: int
    steps: int
    exercised: Counter[str] = field(default_factory=Counter)
    first_length: int | None = None
    seconds: float = 0.0
    timed_out: bool = False
    tally: Tally = field(default_factory=Tally)
    inconsistent: int = 0


class _Found(Exception):
    pass


class _Enough(Exception):
    pass


def _stops(found: Sequence[Incident], known: frozenset[str]) -> bool:
    """Whether a step's incidents end a run: a violation of a kind not ``known``."""
    return any(i.is_violation and i.kind.value not in known for i in found)


def _generate(
    system: Actions[S, A],
    draw: Draw,
    exercised: Counter[str],
    tally: Tally | None = None,
    *,
    known: frozenset[str] = frozenset(),
) -> Outcome[A]:
    """One run: start, then the drawn enabled actions until none or a violation
    (of a kind not ``known``: a run goes on past those); the subject's figures
    of the run (its optional ``measure``) go to ``tally``."""
    state = system.start(draw)
    try:
        steps: list[A] = []
        incidents: list[Incident] = []
        while kinds := system.enabled(state):
            kind = kinds[draw(len(kinds))]
            action = system.action(state, kind, draw)
            exercised[kind] += 1
            found = system.perform(state, action).incidents
            steps.append(action)
            incidents.extend(found)
            if _stops(found, known):
                break
        measure: Callable[[S], Mapping[str, int]] | None = getattr(system, "measure", None)
        if tally is not None and measure is not None:
            tally.add(measure(state))
        return Outcome(tuple(steps), tuple(incidents), system.sent(state))
    finally:
        system.close(state)


def rerun(
    system: Actions[S, A], actions: Sequence[A], *, known: frozenset[str] = frozenset()
) -> Outcome[A] | None:
    """Perform a concrete sequence; None if an action is not enabled when its turn comes.

    Stops at the first violation (of a kind not ``known``), as a search does.
    """
    state = system.start(None)
    try:
        steps: list[A] = []
        incidents: list[Incident] = []
        for action in actions:
            try:
                found = system.perform(state, action).incidents
            except TraceError:
                return None
            steps.append(action)
            incidents.extend(found)
            if _stops(found, known):
                break
        return Outcome(tuple(steps), tuple(incidents), system.sent(state))
    finally:
        system.close(state)


def minimize(
    system: Actions[S, A],
    found: Outcome[A],
    *,
    budget: int | None = None,
    on_run: Callable[[], None] | None = None,
    known: frozenset[str] = frozenset(),
    accept: Callable[[Outcome[A]], bool] | None = None,
) -> Outcome[A]:
    """Delete actions while the sequence still fails with the same violation kinds
    (those not ``known``: a run goes on past known kinds, as the search's did).

    The one shrinker (:func:`~prunecheck.sim.drivers.shrinking.ddmin`) with
    windows of 4, 3, 2 and 1 consecutive actions (a loop's turn — a user
    message and its reply — goes together), from the last to the first,
    again while any deletion helped; at most ``budget`` replays
    (:data:`POLISH_RUNS` by default).
    """
    best = found

    def attempt(steps: Sequence[A], drop: range) -> tuple[A, ...] | None:
        nonlocal best
        if on_run is not None:
            on_run()
        kept = [step for p, step in enumerate(steps) if p not in drop]
        trial = rerun(system, kept, known=known)
        if (
            trial is not None
            and trial.kinds - known
            and trial.kinds - known >= best.kinds - known
            and (accept is None or accept(trial))
        ):
            best = trial
            return trial.steps
        return None

    limit = POLISH_RUNS if budget is None else budget
    ddmin(found.steps, attempt, windows=(4, 3, 2, 1), limit=limit)
    return best


def search(
    system: Actions[S, A],
    *,
    seed: int = 0,
    max_examples: int = 40,
    shrink_runs: int | None = None,
    polish_runs: int | None = None,
    deadline: float | None = None,
    kinds: frozenset[str] | None = None,
    known: frozenset[str] = frozenset(),
    accept: Callable[[Outcome[A]], bool] | None = None,
) -> SearchOutcome[A]:
    """Search for an action sequence on which ``system`` breaks (see the module's docs).

    Parameters
    ----------
    system : Actions
        The subject, driven by its own enabled actions.
    seed : int
        The same seed gives the same runs, verdict and counterexample.
    max_examples : int
        Runs generated before shrinking.
    shrink_runs, polish_runs : int or None
        Runs spent shrinking (Hypothesis) and deleting actions
        (:func:`minimize`); None: :data:`SHRINK_RUNS`, :data:`POLISH_RUNS`.
    deadline : float or None
        A ``time.monotonic()`` after which no run starts (``--time-limit``):
        the search stops with what it found, unshrunk past it.
    kinds : frozenset[str] or None
        Violation kinds that count as a finding (``--target``); a run whose
        first violations are of other kinds ends there and is no finding.
        None: any violation.
    known : frozenset[str]
        Violation kinds already found: a run goes on past them, and a
        finding needs a kind not among them (every kind of a class is
        found by searching again with the kinds found so far).
    accept : callable or None
        A run that breaks the subject is a finding only if ``accept`` says
        so (a class's defining event: an agent loop's trimming class wants
        the user's trim to have caused it); shrinking keeps it so.  None: any.
    """
    shrink = SHRINK_RUNS if shrink_runs is None else shrink_runs
    polish = POLISH_RUNS if polish_runs is None else polish_runs
    started = time.perf_counter()
    exercised: Counter[str] = Counter()
    tally = Tally()
    state = {"examples": 0, "schedules": 0, "shrinking": 0, "timed_out": 0}
    best: list[Outcome[A]] = []
    first: list[int] = []
    inconsistent = 0

    def engine(attempt: int) -> None:
        """One Hypothesis engine over the runs left (a fresh record of runs)."""

        @given(st.data())
        def run(data: st.DataObject) -> None:
            if deadline is not None and time.monotonic() >= deadline:
                state["timed_out"] = 1
                raise _Enough
            if best:
                state["shrinking"] += 1
                if state["shrinking"] > shrink:
                    raise _Enough
            if attempt and not best and state["examples"] >= max_examples:
                raise _Enough  # a later engine: the budget is the search's
            state["examples"] += 1
            state["schedules"] += 1

            def draw(n: int) -> int:
                return int(data.draw(st.integers(0, max(0, n - 1)))) if n > 1 else 0

            outcome = _generate(system, draw, exercised, tally, known=known)
            new = outcome.kinds - known
            if new and (kinds is None or new & kinds) and (accept is None or accept(outcome)):
                if not first:
                    first.append(len(outcome.steps))
                if not best or len(outcome.steps) < len(best[0].steps):
                    best[:] = [outcome]
                raise _Found

        # the first engine is seeded as before; a later one (after the subject answered
        # differently) with a seed derived from it, so it does not replay the same runs
        hypothesis_seed(seed if attempt == 0 else seed * 1_000_003 + attempt)(run)
        settings(
            max_examples=max_examples if attempt == 0 else max_examples - state["examples"],
            deadline=None,
            database=None,
            derandomize=False,
            phases=(Phase.generate, Phase.shrink),
            verbosity=Verbosity.quiet,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            print_blob=False,
        )(run)
        with seed_only():  # the seed alone decides the draws (see that module)
            run()

    attempt = 0
    while True:
        try:
            engine(attempt)
        except (_Found, _Enough):
            pass
        except Flaky as exc:
            # the subject answered the same choices differently, or raised on a run and not
            # on its replay (see the module's docs)
            if not best and state["examples"] < max_examples:
                inconsistent += 1
                attempt += 1
                continue
            del exc
        except Exception as exc:  # Hypothesis's Flaky after an early stop, or the subject's error
            if not best:
                raise
            del exc
        break
    found = best[0] if best else None
    if found is not None and not state["timed_out"]:

        def count() -> None:
            state["schedules"] += 1

        found = minimize(system, found, budget=polish, on_run=count, known=known, accept=accept)
    return SearchOutcome(
        found,
        state["examples"],
        state["schedules"],
        sum(exercised.values()),
        exercised,
        first[0] if first else None,
        time.perf_counter() - started,
        bool(state["timed_out"]),
        tally,
        inconsistent,
    )


def random_walk(system: Actions[S, A], *, seed: int = 0, runs: int = 50) -> SearchOutcome[A]:
    """Uniform random runs from ``random.Random(seed)``, until one fails; no shrinking."""
    started = time.perf_counter()
    rng = random.Random(seed)
    exercised: Counter[str] = Counter()
    found: Outcome[A] | None = None
    done = 0
    for _ in range(runs):
        done += 1
        outcome = _generate(system, lambda n: rng.randrange(max(1, n)), exercised)
        if outcome.violations:
            found = outcome
            break
    length = len(found.steps) if found else None
    seconds = time.perf_counter() - started
    return SearchOutcome(found, done, done, sum(exercised.values()), exercised, length, seconds)
