"""The bounded explorer of subjects driven by their own actions
(sim/drivers/action_explore.py): every run up to a depth, shortest first, with
its bounds stated; an agent loop is explored by the same driver as a toy."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from loops_fake import FakeAdapter, buggy, careful

from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.state import StepResult
from prunecheck.model.system import Draw
from prunecheck.sim.drivers.action_explore import explore_actions
from prunecheck.sim.drivers.action_search import rerun, search
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.system import LoopSystem


@dataclass(slots=True)
class _Count:
    value: int = 0
    seen: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Counter:
    """Add or subtract 1 or 2 (the value is drawn); reaching ``goal`` is a violation."""

    goal: int = 3
    name: str = "counter"

    def start(self, draw: Draw | None = None) -> _Count:
        return _Count()

    def enabled(self, state: _Count) -> list[str]:
        return ["add", "add", "sub"]  # weights: the explorer tries each kind once

    def action(self, state: _Count, kind: str, draw: Draw) -> int:
        return (1 + draw(2)) * (1 if kind == "add" else -1)

    def perform(self, state: _Count, action: int) -> StepResult:
        state.value += action
        state.seen.append(action)
        if state.value == self.goal:
            found = Incident(IncidentKind.INVALID_PRUNE, len(state.seen), (), "goal")
            return StepResult((found,))
        return StepResult()

    def kind(self, action: int) -> str:
        return "add" if action > 0 else "sub"

    def sent(self, state: _Count) -> int:
        return 0

    def close(self, state: _Count) -> None:
        pass


def test_the_first_breaking_run_is_a_shortest_one_in_odometer_order() -> None:
    result = explore_actions(_Counter(), depth=4)
    assert result.found is not None and result.found.steps == (1, 2)
    # depth 1: add or sub × 1 or 2 = 4 runs; depth 2: +1+1, then +1+2 breaks
    assert result.search.examples == 6
    assert (result.depth, result.complete) == (1, False)
    assert result.search.exercised == {"add": 2 + 4, "sub": 2}


def test_a_walk_with_no_finding_runs_every_path_and_says_it_is_complete() -> None:
    result = explore_actions(_Counter(goal=99), depth=3)
    assert result.found is None and result.complete and result.depth == 3
    assert result.search.examples == 4 + 4**2 + 4**3  # every path of every depth
    assert result.bounds == {"depth": 3, "values": 3, "max_runs": 5_000}


def test_values_bound_the_alternatives_of_a_drawn_value() -> None:
    one = explore_actions(_Counter(goal=99), depth=2, values=1)
    assert one.complete and one.search.examples == 2 + 2**2  # +1 and -1 only


def test_the_run_budget_cuts_the_walk_and_it_says_so() -> None:
    result = explore_actions(_Counter(goal=99), depth=3, max_runs=30)
    assert not result.complete and result.found is None
    assert result.depth == 2 and result.search.examples == 30


def test_a_violation_kind_outside_the_target_is_not_a_finding() -> None:
    result = explore_actions(_Counter(), depth=2, kinds=frozenset({"orphaned_result"}))
    assert result.found is None and result.complete


def test_an_agent_loop_is_explored_by_the_same_driver() -> None:
    scenario = SCENARIOS[ScenarioClass.CRASH_NEW_MESSAGE]
    system = LoopSystem.of(FakeAdapter(), buggy, scenario, max_steps=8)
    result = explore_actions(system, depth=5, max_runs=400)
    assert result.found is not None, result
    assert [s.kind for s in result.found.steps] == ["user", "reply", "crash", "new_message"]
    again = rerun(system, result.found.steps)
    assert again is not None and again.kinds == result.found.kinds
    shrunk = search(system, seed=1, max_examples=30).found
    assert shrunk is not None and len(shrunk.steps) >= len(result.found.steps)
    quiet = explore_actions(LoopSystem.of(FakeAdapter(), careful, scenario), depth=3)
    assert quiet.found is None and quiet.complete and quiet.search.steps > 0


@pytest.mark.slow
def test_a_cancel_needs_a_reply_of_two_calls_the_third_value() -> None:
    """The fake loop's cancel bug needs two parallel calls: two values per
    draw miss it (the walk completes, clean), three find it, at 5 steps as
    the search's shrunk schedule."""
    system = LoopSystem.of(FakeAdapter(), buggy, SCENARIOS[ScenarioClass.CANCEL], max_steps=8)
    two = explore_actions(system, depth=5, values=2, max_runs=3_000)
    assert two.found is None and two.complete
    three = explore_actions(system, depth=5, max_runs=3_000)
    assert three.found is not None and three.found.kinds == {"silent_loss"}
    shrunk = search(system, seed=1, max_examples=30).found
    assert shrunk is not None and len(three.found.steps) == len(shrunk.steps) == 5
