"""Agent loops from Python: ``prunecheck.check_loop``, ``search_loop``, ``assert_loop_safe``.

The ``loop:`` spec (:mod:`prunecheck.sim.subjects.loops.target`) as the command line
takes it, or the agent object itself (its framework detected by the
adapters' ``accepts``).  The searches are the generic action search of the
loop's System (:mod:`.loop_verdict`), the bundle the generic package's
(:mod:`prunecheck.sim.evidence.loop_bundle`).  The orchestration of
``prunecheck check`` and ``search`` of a loop lives here (the command line
prints what these return): the failure database replayed first and saved
after (:mod:`.loop_failures`), progress, the verdict per scenario class.

Examples
--------
>>> from prunecheck import check_loop
>>> result = check_loop("loop:my_app/agent.py:agent")  # doctest: +SKIP
>>> result.verdict, [c.verdict for c in result.cells]  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from prunecheck.sim.drivers.action_search import SearchOutcome
from prunecheck.sim.evidence.failures import FailuresLike, open_database, warn_problems
from prunecheck.sim.evidence.loop_bundle import write_bundle
from prunecheck.sim.evidence.loop_failures import LoopFailures, SavedOutcome
from prunecheck.sim.evidence.loop_narrative import narrative
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.offline import offline
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, LoopShape, Scenario, ScenarioClass
from prunecheck.sim.subjects.loops.steps import Step
from prunecheck.sim.subjects.loops.story import retell
from prunecheck.sim.subjects.loops.target import LoopTarget, detect, load_target
from prunecheck.sim.support.progress import Progress

from .loop_verdict import CLASS_EXAMPLES, LoopCheck, search_scenario
from .loop_verdict import check_loop as _check

__all__ = ["UnsafeLoop", "assert_loop_safe", "check_loop", "loop_target", "search_loop"]


class UnsafeLoop(AssertionError):
    """A loop was found unsafe; the message holds the table and the shortest reproduction.

    Attributes
    ----------
    result : LoopCheck
        The check.
    bundle : Path or None
        Where the reproduction bundle was written, if a folder was given.
    """

    def __init__(self, message: str, result: LoopCheck, bundle: Path | None) -> None:
        super().__init__(message)
        self.result, self.bundle = result, bundle


def loop_target(agent: object) -> LoopTarget:
    """A loop spec, or an agent object (the framework detected), as a :class:`LoopTarget`
    (one already loaded is returned as it is).

    Raises
    ------
    PolicyError
        If the spec is bad or no framework adapter accepts the object.
    """
    if isinstance(agent, LoopTarget):
        return agent
    if isinstance(agent, str):
        return load_target(agent)
    with confined(), offline():
        adapter = detect(agent, f"agent {type(agent).__name__}", "the object")
    return LoopTarget(f"loop:{adapter.framework}:<object>", "<object>", agent, adapter)


def _deadline(time_limit: float | None) -> float | None:
    return None if time_limit is None else time.monotonic() + time_limit


def _database(target: LoopTarget, failures: FailuresLike) -> LoopFailures | None:
    """The failure database's loop schedules for ``target`` (None: none, or
    an agent given as an object, which no file keys)."""
    db = open_database(failures)
    return LoopFailures(db) if db is not None and LoopFailures.keyed(target) else None


def check_loop(
    agent: object,
    *,
    seed: int = 0,
    max_examples: int | None = None,
    scenarios: Sequence[str | ScenarioClass] | None = None,
    max_steps: int = 16,
    shape: LoopShape | None = None,
    time_limit: float | None = None,
    on_class: Callable[[Scenario], None] | None = None,
    progress: Progress | None = None,
    failures: FailuresLike = None,
) -> LoopCheck:
    """``prunecheck check loop:…`` without the printing: a cell per scenario class.

    ``max_examples`` None (the default) gives each class its own
    :data:`~.loop_verdict.CLASS_EXAMPLES` runs (as many as ``search_loop``
    runs for one class, so each class runs the schedules a targeted search
    of it runs); a number is shared among the classes.
    ``max_steps`` bounds a schedule (``--max-events``), ``shape`` the
    schedules of every class (:class:`~prunecheck.sim.subjects.loops.scenarios.LoopShape`),
    ``time_limit`` (seconds) the search (classes it cuts short are out of
    time); ``on_class`` is told each class before it is searched, and
    ``progress`` (``prunecheck check``'s bar) each class as it starts.

    ``failures`` is the failure database, as :func:`prunecheck.check_policy`
    takes it (default ``$PRUNECHECK_FAILURES``, else ``.prunecheck/failures``):
    each class's saved schedules for this agent are replayed first, and one
    that still breaks the loop is the class's counterexample without a search
    (the cell's ``saved`` names it); every new one is saved
    (:mod:`.loop_failures`).
    """
    with confined(), offline():
        return _check_loop(agent, seed=seed, max_examples=max_examples, scenarios=scenarios,
                           max_steps=max_steps, shape=shape, time_limit=time_limit,
                           on_class=on_class, progress=progress, failures=failures)  # fmt: skip


def _check_loop(
    agent: object,
    *,
    seed: int,
    max_examples: int | None,
    scenarios: Sequence[str | ScenarioClass] | None,
    max_steps: int,
    shape: LoopShape | None,
    time_limit: float | None,
    on_class: Callable[[Scenario], None] | None,
    progress: Progress | None,
    failures: FailuresLike,
) -> LoopCheck:
    subject = loop_target(agent)
    chosen = [ScenarioClass(s) for s in scenarios] if scenarios is not None else None
    db = _database(subject, failures)
    caps = subject.adapter.capabilities(subject.target)
    bar = progress or Progress()
    bar.start(sum(1 for s in (chosen or list(SCENARIOS)) if SCENARIOS[s].applies(caps)),
              "scenario classes")  # fmt: skip

    def told(scenario: Scenario) -> None:
        bar.step(f"{subject.spec}: scenario class {scenario.title}")
        if on_class is not None:
            on_class(scenario)

    def replay(scenario: Scenario) -> SearchOutcome[Step] | None:
        saved = db.still_failing(subject, scenario) if db is not None else None
        return None if saved is None else SavedOutcome.of(saved)

    try:
        result = _check(subject, seed=seed, max_examples=max_examples, scenarios=chosen,
                        max_steps=max_steps, shape=shape, deadline=_deadline(time_limit),
                        on_class=told, replay=replay)  # fmt: skip
        if db is not None:
            for cell in result.unsafe:
                if cell.saved is None and cell.found is not None:
                    db.save(subject, cell.scenario, cell.found)
    finally:
        bar.close()
        if db is not None:
            warn_problems(db.db, failures)
    return result


def search_loop(
    agent: object, *, scenario: str | ScenarioClass = "parallel", seed: int = 0,
    max_examples: int = CLASS_EXAMPLES, max_steps: int = 16, shape: LoopShape | None = None,
    time_limit: float | None = None, target: Iterable[str] | None = None,
    progress: Progress | None = None, failures: FailuresLike = None,
) -> SearchOutcome[Step]:  # fmt: skip
    """``prunecheck search loop:… --scenario NAME`` without the printing.

    ``max_examples`` defaults to the runs ``check_loop`` gives each class
    (:data:`~.loop_verdict.CLASS_EXAMPLES`): with the same seed, a targeted
    search and ``check`` run the same schedules in that class.

    ``max_steps``, ``shape``, ``time_limit``, ``progress`` and ``failures``
    as in :func:`check_loop`: a saved schedule that still breaks the loop
    (with a ``target`` kind) is the outcome, a
    :class:`~.loop_failures.SavedOutcome` (``examples`` 0, ``saved`` its
    file); ``target``: the violation kinds that count as a finding
    (``--target``).
    """
    with confined(), offline():
        return _search_loop(agent, scenario=scenario, seed=seed, max_examples=max_examples,
                            max_steps=max_steps, shape=shape, time_limit=time_limit,
                            target=target, progress=progress, failures=failures)  # fmt: skip


def _search_loop(
    agent: object, *, scenario: str | ScenarioClass, seed: int, max_examples: int,
    max_steps: int, shape: LoopShape | None, time_limit: float | None,
    target: Iterable[str] | None, progress: Progress | None, failures: FailuresLike,
) -> SearchOutcome[Step]:  # fmt: skip
    subject = loop_target(agent)
    chosen = SCENARIOS[ScenarioClass(scenario)]
    if shape is not None:
        chosen = replace(chosen, shape=shape)
    kinds = None if target is None else frozenset(target)
    db = _database(subject, failures)
    try:
        saved = db.still_failing(subject, chosen, kinds) if db is not None else None
        if saved is not None:
            return SavedOutcome.of(saved)
        bar = progress or Progress()
        bar.start(1)
        bar.step(f"search {subject.spec}, scenario class {chosen.title}")
        try:
            result = search_scenario(subject, chosen, seed=seed, max_examples=max_examples,
                                     max_steps=max_steps, deadline=_deadline(time_limit),
                                     kinds=kinds)  # fmt: skip
        finally:
            bar.close()
        if db is not None and result.found is not None:
            db.save(subject, chosen, result.found)
        return result
    finally:
        if db is not None:
            warn_problems(db.db, failures)


def assert_loop_safe(
    agent: object,
    *,
    bundle_dir: Path | str | None = None,
    force: bool = False,
    fail_on_framework: bool = False,
    **options: Any,
) -> LoopCheck:
    """Check the loop; raise :class:`UnsafeLoop` (an ``AssertionError``) if a cell
    is unsafe by the user's configuration (by a framework finding too with
    ``fail_on_framework``, as ``--fail-on-framework``: :mod:`.loop_owner`).

    ``options`` are :func:`check_loop`'s (``seed``, ``max_examples``,
    ``scenarios``, ``max_steps``, ``shape``, ``time_limit``, ``failures`` …).
    The message holds the scenario table and the first unsafe cell's
    narrative; ``bundle_dir`` gets that cell's bundle (the bytes ``prunecheck
    check loop:… --out`` writes for the same agent and seed).
    """
    __tracebackhide__ = True  # pytest shows the test's line, not ours
    with confined(), offline():
        return _assert_loop_safe(agent, bundle_dir, force, fail_on_framework, options)


def _assert_loop_safe(
    agent: object,
    bundle_dir: Path | str | None,
    force: bool,
    fail_on_framework: bool,
    options: dict[str, Any],
) -> LoopCheck:
    __tracebackhide__ = True
    result = check_loop(agent, **options)
    failing = result.unsafe if fail_on_framework else result.configuration_unsafe
    if not failing:
        return result
    cell = failing[0]
    assert cell.found is not None
    folder = None
    if bundle_dir is not None:
        folder = write_bundle(result.target, cell.found, Path(bundle_dir), seed=result.seed,
                              scenario=cell.scenario.name.value, force=force)  # fmt: skip
    story = retell(result.target.adapter, result.target.target, cell.found.steps)
    message = (
        f"{result.verdict_line()}\n{result.rules}\n\n{result.table()}\n"
        f"minimal reproduction ({cell.scenario.title}, {len(story.steps)} steps):\n"
        + narrative(story)
        + (f"bundle: {folder}\n" if folder is not None else "")
    )
    raise UnsafeLoop(message, result, folder)
