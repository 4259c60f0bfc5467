"""Search, shrink, check and bundles of loop schedules (the generic action search
of sim/drivers/action_search.py driving a LoopSystem, sim/api/loop_verdict.py,
sim/evidence/loop_bundle.py), on the fake framework of tests/loops_fake.py."""

from __future__ import annotations

from pathlib import Path

import loops_fake
import pytest
from loops_fake import FakeAdapter, buggy, careful, repairing, trimming_buggy, trimming_careful

from prunecheck.sim.api.loop_verdict import CellVerdict, check_loop
from prunecheck.sim.drivers.action_search import random_walk, rerun, search
from prunecheck.sim.evidence.loop_bundle import BUNDLE_FILES, bundle_texts, write_bundle
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.steps import schedule_from_json
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget, load_target

FAKE = Path(loops_fake.__file__)


def _search(agent: object, scenario: ScenarioClass, seed: int = 1, *, short: bool = True):  # type: ignore[no-untyped-def]
    """The search of one scenario class.  ``short``: 20 runs and a short shrink
    (Hypothesis's 4 runs, 8 of step deletion), for the tests that ask what
    is found, not how short it gets; the first test below shrinks in full."""
    system = LoopSystem.of(FakeAdapter(), agent, SCENARIOS[scenario])
    if not short:
        return search(system, seed=seed, max_examples=40)
    return search(system, seed=seed, max_examples=20, shrink_runs=4, polish_runs=8)


def test_each_bug_of_the_buggy_fake_is_found_and_shrunk_to_a_short_schedule() -> None:
    expected = {
        ScenarioClass.CANCEL: "silent_loss",
        ScenarioClass.CRASH_RESUME: "duplicated_side_effect",
        ScenarioClass.CRASH_NEW_MESSAGE: "unanswered_call",
    }
    for scenario, kind in expected.items():
        result = _search(buggy, scenario, short=False)
        assert result.found is not None, scenario
        assert kind in result.found.kinds
        assert len(result.found.steps) <= 6  # the shortest stories are 4-6 steps
        again = rerun(LoopSystem.of(FakeAdapter(), buggy), result.found.steps)
        assert again is not None and again.kinds == result.found.kinds


def test_a_trim_that_cuts_units_is_found_and_one_at_unit_edges_is_safe() -> None:
    result = _search(trimming_buggy, ScenarioClass.TRIM)
    assert result.found is not None and "orphaned_result" in result.found.kinds
    assert _search(trimming_careful, ScenarioClass.TRIM).found is None


def test_a_repair_layer_that_invents_results_is_found() -> None:
    result = _search(repairing, ScenarioClass.CRASH_NEW_MESSAGE)
    assert result.found is not None and "synthesized_result" in result.found.kinds


def test_the_careful_fake_is_safe_in_plain_batches_and_cancellation() -> None:
    for scenario in (ScenarioClass.PARALLEL, ScenarioClass.CANCEL):
        result = _search(careful, scenario)
        assert result.found is None and result.exercised[SCENARIOS[scenario].key] > 0


def test_the_same_seed_gives_the_same_counterexample() -> None:
    a = _search(buggy, ScenarioClass.CRASH_NEW_MESSAGE, seed=7)
    b = _search(buggy, ScenarioClass.CRASH_NEW_MESSAGE, seed=7)
    assert a.found is not None and b.found is not None
    assert a.found.steps == b.found.steps and a.examples == b.examples


@pytest.mark.slow  # the command-line test (test_loop_runs) checks a loop in the fast suite
def test_check_reports_a_cell_per_scenario_class_with_reasons_for_those_that_do_not_apply() -> None:
    target = load_target(f"loop:{FAKE}:buggy")
    assert target.framework == "fake"
    result = check_loop(target, seed=1, max_examples=150)
    cells = {c.scenario.name: c for c in result.cells}
    assert len(cells) == 7 and result.verdict is CellVerdict.UNSAFE
    assert cells[ScenarioClass.CRASH_NEW_MESSAGE].verdict is CellVerdict.UNSAFE
    assert cells[ScenarioClass.PARALLEL].verdict is CellVerdict.SAFE
    assert cells[ScenarioClass.INTERRUPT].verdict is CellVerdict.NOT_APPLICABLE
    assert "approval" in cells[ScenarioClass.INTERRUPT].note
    table = result.table()
    assert "crash then a new message" in table and "UNSAFE" in table


def test_a_bundle_holds_the_schedule_narrative_requests_and_script_byte_for_byte(
    tmp_path: Path,
) -> None:
    target = LoopTarget("loop:fake", "fake.py:buggy", buggy, FakeAdapter())
    result = _search(buggy, ScenarioClass.CRASH_NEW_MESSAGE)
    assert result.found is not None
    texts = bundle_texts(target, result.found, seed=1, scenario="crash_new_message")
    assert sorted(texts) == sorted(BUNDLE_FILES)
    assert texts == bundle_texts(target, result.found, seed=1, scenario="crash_new_message")
    assert schedule_from_json(texts["schedule.json"]) == list(result.found.steps)
    assert '"expect": [' in texts["schedule.json"] and "unanswered_call" in texts["schedule.json"]
    assert "provider says: An assistant message with 'tool_calls'" in texts["narrative.txt"]
    assert texts["requests.jsonl"].count("\n") >= 2
    folder = write_bundle(target, result.found, tmp_path / "b", seed=1, scenario="x")
    assert sorted(p.name for p in folder.iterdir()) == sorted(BUNDLE_FILES)


def test_the_random_walk_baseline_finds_the_crash_bug_too() -> None:
    system = LoopSystem.of(FakeAdapter(), buggy, SCENARIOS[ScenarioClass.CRASH_NEW_MESSAGE])
    result = random_walk(system, seed=3, runs=80)
    assert result.found is not None
