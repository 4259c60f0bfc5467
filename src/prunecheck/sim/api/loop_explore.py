"""``prunecheck explore loop:…`` from Python: every schedule of one scenario class up to a depth.

The bounded driver of :mod:`prunecheck.sim.drivers.action_explore` over the
loop's System, as :func:`.loop_api.search_loop` is the search's: same
subject, same judge, same verdict cell, narrative and bundle.  Its finding
is a shortest schedule within the bounds it states (depth, values per
draw, runs), where a search's is shrunk from what it drew.

Examples
--------
>>> from prunecheck.sim.api.loop_explore import explore_loop
>>> found = explore_loop("loop:my_app/agent.py:agent", scenario="cancel", depth=5)  # doctest: +SKIP
>>> found.outcome.complete, found.cell.verdict  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.loop_api import loop_target
from prunecheck.sim.api.loop_verdict import Cell, CellVerdict, cell_of, not_applicable_reason
from prunecheck.sim.drivers.action_explore import ExploreOutcome, explore_actions
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.offline import offline
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, LoopShape, Scenario, ScenarioClass
from prunecheck.sim.subjects.loops.steps import Step
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget
from prunecheck.sim.support.progress import Progress

__all__ = ["LoopExplore", "explore_loop"]


@dataclass(frozen=True, slots=True)
class LoopExplore:
    """What exploring one scenario class of a loop found.

    Attributes
    ----------
    target : LoopTarget
        The agent explored.
    scenario : Scenario
        The class, with the shape it was explored in.
    outcome : ExploreOutcome
        The walk: its finding, the depth done, whether it was complete.
    """

    target: LoopTarget
    scenario: Scenario
    outcome: ExploreOutcome[Step]

    @property
    def cell(self) -> Cell:
        """The class's verdict cell, as a search's (a walk cut short with
        nothing found is out of time when a deadline cut it, else its
        verdict says how deep it got)."""
        cell = cell_of(self.scenario, self.outcome.search)
        if cell.verdict is CellVerdict.SAFE and not self.outcome.complete:
            bounds = self.outcome.bounds
            return replace(cell, note=f"{cell.note}; complete to depth {self.outcome.depth} of "
                                      f"{bounds['depth']} only (--max-states)")  # fmt: skip
        return cell


def explore_loop(
    agent: object,
    *,
    scenario: str | ScenarioClass = "parallel",
    depth: int = 5,
    values: int = 3,
    max_runs: int = 2_000,
    shape: LoopShape | None = None,
    time_limit: float | None = None,
    target: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> LoopExplore:
    """Walk every schedule of ``scenario`` up to ``depth`` steps, shortest
    first (``values`` alternatives per drawn value, at most ``max_runs``
    schedules, ``time_limit`` seconds); stop at the first that breaks the
    invariant (with a violation kind in ``target``, when given)."""
    subject = loop_target(agent)
    chosen = SCENARIOS[ScenarioClass(scenario)]
    if shape is not None:
        chosen = replace(chosen, shape=shape)
    if not chosen.applies(subject.adapter.capabilities(subject.target)):
        assert chosen.needs is not None
        raise ConfigError(
            f"scenario class {chosen.name.value}",
            f"does not apply to {subject.reference}: {not_applicable_reason(chosen.needs)}.",
            "prunecheck check prints which scenario classes apply.",
        )
    system = LoopSystem(subject, chosen, max(depth, 1))
    bar = progress or Progress()
    bar.start(depth, "depths")
    deadline = None if time_limit is None else time.monotonic() + time_limit

    def told(done: int, runs: int) -> None:
        bar.step(f"explore {subject.spec}, {chosen.title}: depth {done} done, {runs} schedules")

    try:
        kinds = None if target is None else frozenset(target)
        with confined(), offline():  # the agent's code: offline, in the cage
            outcome = explore_actions(system, depth=depth, values=values, max_runs=max_runs,
                                      deadline=deadline, kinds=kinds, on_depth=told)  # fmt: skip
    finally:
        bar.close()
    return LoopExplore(subject, chosen, outcome)
