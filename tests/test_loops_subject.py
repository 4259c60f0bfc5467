"""A loop is a subject, not a second checker (issue 30): sim/subjects/loops holds the
loop (contract, scheduler, clock, ledger, judge, adapters, scenarios as its
action vocabulary, its System) and no search, verdict, shrinker or bundle of
its own; the generic action search (sim/drivers/action_search.py) drives any
subject by its enabled actions, a loop among them.  The import side is the
``loops-are-a-subject`` contract of pyproject.toml (tests/test_layers.py)."""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from loops_fake import FakeAdapter, buggy, careful

from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.state import StepResult
from prunecheck.model.system import Actions, Draw, System
from prunecheck.sim.drivers.action_search import random_walk, rerun, search
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.steps import Cancel, ReplyStep, Resume, Step, User
from prunecheck.sim.subjects.loops.system import LoopSystem

ROOT = Path(__file__).resolve().parent.parent
LOOPS = ROOT / "src" / "prunecheck" / "sim" / "subjects" / "loops"

#: What only the generic packages may do, by the names their modules take.
CHECKER_MODULES = ("search", "verdict", "shrink", "bundle", "narrative", "api")
#: Calls that make a search, a shrink or a bundle (Hypothesis's engine, the one
#: shrinker, writing a bundle's folder).
CHECKER_CALLS = {"given", "run_state_machine_as_test", "ddmin", "write_bundle", "make_folder"}


def _modules() -> list[Path]:
    return sorted(p for p in LOOPS.rglob("*.py") if "__pycache__" not in p.parts)


def test_sim_loops_has_no_search_verdict_shrinker_or_bundle_module() -> None:
    named = [
        p.relative_to(LOOPS).as_posix()
        for p in _modules()
        if any(p.stem == n or p.stem.startswith(f"{n}_") for n in CHECKER_MODULES)
    ]
    assert named == [], f"sim/subjects/loops grew checker modules: {named}"


def test_sim_loops_calls_no_search_shrinker_or_bundle_writer() -> None:
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            if name in CHECKER_CALLS:
                found.append(f"{path.relative_to(LOOPS)}:{node.lineno} {name}")
    assert found == []


def test_the_lint_contract_names_what_a_loop_may_not_import() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}
    contract = contracts["loops-are-a-subject"]
    assert contract["source_modules"] == ["prunecheck.sim.subjects.loops"]
    assert {"hypothesis", "prunecheck.sim.drivers.shrinking",
            "prunecheck.sim.support.outputs"} <= set(contract["forbidden_modules"])  # fmt: skip


def test_a_loop_is_a_system_and_a_subject_of_its_own_actions() -> None:
    system = LoopSystem.of(FakeAdapter(), careful, SCENARIOS[ScenarioClass.CANCEL])
    assert isinstance(system, System) and isinstance(system, Actions)
    state = system.start(None)
    try:
        assert system.enabled(state) == ["user"]  # a fresh loop waits for its user
        system.perform(state, User("hi"))
        # the model is awaited, a turn runs: a reply, a cancel or a crash (a replay's
        # bounds allow every kind; a search's draw the class's)
        assert set(system.enabled(state)) == {"reply", "cancel", "crash"}
        with pytest.raises(TraceError, match="cannot take it now"):
            system.perform(state, Resume())  # nothing crashed
        system.perform(state, Cancel())
        assert system.sent(state) == 1
    finally:
        system.close(state)


def test_a_replay_of_a_step_not_enabled_is_none() -> None:
    system = LoopSystem.of(FakeAdapter(), careful)
    steps: list[Step] = [ReplyStep("no one asked")]
    assert rerun(system, steps) is None
    steps = [User("hi"), ReplyStep("hello")]
    again = rerun(system, steps)
    assert again is not None and again.requests == 1 and not again.violations


def test_the_drivers_choices_are_the_loops_enabled_actions() -> None:
    system = LoopSystem.of(FakeAdapter(), buggy, SCENARIOS[ScenarioClass.CANCEL], max_steps=8)
    walk = random_walk(system, seed=2, runs=6)
    assert walk.steps and set(walk.exercised) <= {"user", "reply", "complete", "fail", "cancel"}
    assert sum(walk.exercised.values()) == walk.steps


@dataclass(slots=True)
class _Count:
    value: int = 0
    sent: int = 0
    bound: int = 6
    seen: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Counter:
    """A toy subject: add or subtract; 3 is a violation.  Not a loop."""

    name: str = "counter"

    def start(self, draw: Draw | None = None) -> _Count:
        return _Count(bound=6 if draw is None else 2 + draw(5))

    def enabled(self, state: _Count) -> list[str]:
        return [] if len(state.seen) >= state.bound else ["add", "add", "sub"]

    def action(self, state: _Count, kind: str, draw: Draw) -> int:
        return (1 + draw(2)) * (1 if kind == "add" else -1)

    def perform(self, state: _Count, action: int) -> StepResult:
        state.value += action
        state.seen.append(self.kind(action))
        if state.value == 3:
            return StepResult((Incident(IncidentKind.INVALID_PRUNE, len(state.seen), (), "three"),))
        return StepResult()

    def kind(self, action: int) -> str:
        return "add" if action > 0 else "sub"

    def sent(self, state: _Count) -> int:
        return state.sent

    def close(self, state: _Count) -> None:
        pass


def test_the_action_search_and_the_one_shrinker_take_any_subject() -> None:
    result = search(_Counter(), seed=1, max_examples=50)
    assert result.found is not None and sum(result.found.steps) == 3
    assert result.found.kinds == {"invalid_prune"}
    assert len(result.found.steps) == 2, result.found.steps  # 1+2 or 2+1: shrunk
