"""Agent loops from Python: ``prunecheck.check_loop``, ``search_loop``, ``assert_loop_safe``.

The ``loop:`` spec (:mod:`prunecheck.sim.loops.target`) as the command line
takes it, or the agent object itself (its framework detected by the
adapters' ``accepts``).  The searches are the generic action search of the
loop's System (:mod:`.loop_verdict`), the bundle the generic package's
(:mod:`prunecheck.sim.reproductions.loop_bundle`).

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

from prunecheck.sim.drivers.action_search import SearchOutcome
from prunecheck.sim.loops.scenarios import SCENARIOS, LoopShape, Scenario, ScenarioClass
from prunecheck.sim.loops.steps import Step
from prunecheck.sim.loops.story import retell
from prunecheck.sim.loops.target import FRAMEWORKS, LoopTarget, adapter_named, load_target
from prunecheck.sim.reproductions.loop_bundle import write_bundle
from prunecheck.sim.reproductions.loop_narrative import narrative

from .loop_verdict import CellVerdict, LoopCheck, search_scenario
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
    from prunecheck.model.errors import PolicyError

    for name in FRAMEWORKS:
        try:
            adapter = adapter_named(name)
        except PolicyError:
            continue
        if adapter.accepts(agent):
            return LoopTarget(f"loop:{name}:<object>", "<object>", agent, adapter)
    raise PolicyError(
        f"agent {type(agent).__name__}",
        "is an agent of no framework prunecheck drives.",
        f"give a loop: spec or an agent of one of: {', '.join(FRAMEWORKS)}.",
    )


def _deadline(time_limit: float | None) -> float | None:
    return None if time_limit is None else time.monotonic() + time_limit


def check_loop(
    agent: object,
    *,
    seed: int = 0,
    max_examples: int = 200,
    scenarios: Sequence[str | ScenarioClass] | None = None,
    max_steps: int = 16,
    shape: LoopShape | None = None,
    time_limit: float | None = None,
    on_class: Callable[[Scenario], None] | None = None,
) -> LoopCheck:
    """``prunecheck check loop:…`` without the printing: a cell per scenario class.

    ``max_steps`` bounds a schedule (``--max-events``), ``shape`` the
    schedules of every class (:class:`~prunecheck.sim.loops.scenarios.LoopShape`), ``time_limit``
    (seconds) the search (classes it cuts short are out of time);
    ``on_class`` is told each class before it is searched.
    """
    chosen = [ScenarioClass(s) for s in scenarios] if scenarios is not None else None
    return _check(loop_target(agent), seed=seed, max_examples=max_examples, scenarios=chosen,
                  max_steps=max_steps, shape=shape, deadline=_deadline(time_limit),
                  on_class=on_class)  # fmt: skip


def search_loop(
    agent: object, *, scenario: str | ScenarioClass = "parallel", seed: int = 0,
    max_examples: int = 40, max_steps: int = 16, shape: LoopShape | None = None,
    time_limit: float | None = None, target: Iterable[str] | None = None,
) -> SearchOutcome[Step]:  # fmt: skip
    """``prunecheck search loop:… --scenario NAME`` without the printing.

    ``max_steps``, ``shape`` and ``time_limit`` as in :func:`check_loop`;
    ``target``: the violation kinds that count as a finding (``--target``).
    """
    subject = loop_target(agent)
    chosen = SCENARIOS[ScenarioClass(scenario)]
    if shape is not None:
        chosen = replace(chosen, shape=shape)
    kinds = None if target is None else frozenset(target)
    return search_scenario(subject, chosen, seed=seed, max_examples=max_examples,
                           max_steps=max_steps, deadline=_deadline(time_limit),
                           kinds=kinds)  # fmt: skip


def assert_loop_safe(
    agent: object,
    *,
    seed: int = 0,
    max_examples: int = 200,
    scenarios: Sequence[str | ScenarioClass] | None = None,
    bundle_dir: Path | str | None = None,
    force: bool = False,
) -> LoopCheck:
    """Check the loop; raise :class:`UnsafeLoop` (an ``AssertionError``) if a cell is unsafe.

    The message holds the scenario table and the first unsafe cell's
    narrative; ``bundle_dir`` gets that cell's bundle.
    """
    result = check_loop(agent, seed=seed, max_examples=max_examples, scenarios=scenarios)
    if result.verdict is not CellVerdict.UNSAFE:
        return result
    cell = result.unsafe[0]
    assert cell.found is not None
    folder = None
    if bundle_dir is not None:
        folder = write_bundle(result.target, cell.found, Path(bundle_dir), seed=seed,
                              scenario=cell.scenario.name.value, force=force)  # fmt: skip
    story = retell(result.target.adapter, result.target.target, cell.found.steps)
    message = (
        f"{result.verdict_line()}\n\n{result.table()}\n"
        f"minimal reproduction ({cell.scenario.title}, {len(story.steps)} steps):\n"
        + narrative(story)
        + (f"bundle: {folder}\n" if folder is not None else "")
    )
    raise UnsafeLoop(message, result, folder)
