"""The SimPy simulator for subjects driven by their own actions (sim/drivers/action_simulator.py):
sessions in simulated time, where the order of completions comes from drawn latencies.

:class:`Race` is a subject with a known race: the model issues call ``a``,
then (a reply later) call ``b``; a session is violated when ``a`` completes
after ``b``.  With every tool call taking about as long, ``a`` (a reply
ahead) finishes first; the wider the tools' latency spread, the more often
the call issued first is the slow one.  A uniform choice among the enabled
actions would break sessions at one rate, whatever the latencies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.state import StepResult
from prunecheck.model.system import Actions, Draw
from prunecheck.sim.drivers.action_simulator import (
    Aimed,
    Clock,
    SessionRun,
    faults_of,
    session_rng,
    simulate_session,
)
from prunecheck.sim.drivers.event_actions import EventActions
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.drivers.workload import Load, load_at
from prunecheck.sim.stats.sessions import session_rate


@dataclass(slots=True)
class RaceState:
    issued: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: int = 0
    closed: bool = False


@dataclass(frozen=True, slots=True)
class Race:
    """Two calls issued a model reply apart; ``a`` finishing after ``b`` is a violation.
    A call may also fail (a fault): a failed call counts as finished."""

    name: str = "race"

    def start(self, draw: Draw | None = None) -> RaceState:
        return RaceState()

    def enabled(self, state: RaceState) -> list[str]:
        kinds = ["reply"] if len(state.issued) < 2 else []
        if len(state.done) < len(state.issued):
            kinds += ["complete", "fail"]
        return kinds

    def targets(self, state: RaceState, kind: str) -> Sequence[str]:
        return [c for c in state.issued if c not in state.done] if kind != "reply" else []

    def aimed(self, state: RaceState, kind: str, target: str, draw: Draw) -> tuple[str, str]:
        return (kind, target)

    def action(self, state: RaceState, kind: str, draw: Draw) -> tuple[str, str]:
        return (kind, "ab"[len(state.issued)] if kind == "reply" else "")

    def perform(self, state: RaceState, action: tuple[str, str]) -> StepResult:
        kind, call = action
        if kind == "reply":
            state.issued.append(call)
            return StepResult()
        state.done.append(call)
        state.failed += kind == "fail"
        if state.done == ["b", "a"]:
            late = Incident(IncidentKind.ORPHANED_RESULT, len(state.done), ("a",), "a after b")
            return StepResult((late,))
        return StepResult()

    def kind(self, action: tuple[str, str]) -> str:
        return action[0]

    def sent(self, state: RaceState) -> int:
        return len(state.issued)

    def close(self, state: RaceState) -> None:
        state.closed = True


def _sessions(load: Load, n: int, pressure: float = 0.0, seed: int = 0) -> list[SessionRun]:
    return [simulate_session(Race(), session_rng(seed, i), load=load, pressure=pressure)
            for i in range(n)]  # fmt: skip


def test_the_race_subject_is_an_aimed_actions_subject() -> None:
    assert isinstance(Race(), Actions) and isinstance(Race(), Aimed)


def test_the_violation_rate_rises_with_the_tools_latency_spread() -> None:
    rates = []
    for tail in (0.05, 0.5, 1.5):
        runs = _sessions(Load(latency_tail=tail), 300)
        assert all(r.error is None and r.steps >= 3 for r in runs)
        rates.append(session_rate(sum(r.violated for r in runs), len(runs)))
    assert [r.count for r in rates] == sorted(r.count for r in rates)
    assert rates[0].count == 0  # a reply apart, equal latencies never cross
    assert rates[2].low > rates[1].high  # the intervals apart: not noise
    assert rates[2].count < 150  # not a coin toss: time orders the completions


def test_a_violated_session_says_when_and_at_which_step() -> None:
    runs = _sessions(Load(latency_tail=1.5), 60)
    violated = [r for r in runs if r.violated]
    assert violated and all(r.violations == ("orphaned_result",) for r in violated)
    assert all(r.first_violation == r.steps == 4 for r in violated)
    assert all(0 < r.sim_time < 3600 for r in runs)


def test_faults_happen_only_under_pressure_and_more_under_more() -> None:
    calm = _sessions(Load(), 100, pressure=0.0)
    some = _sessions(Load(), 100, pressure=0.3)
    stormy = _sessions(Load(), 100, pressure=1.0)
    assert sum(r.faults for r in calm) == 0
    assert 0 < sum(r.faults for r in some) < sum(r.faults for r in stormy)
    assert faults_of() >= {"fail", "timeout", "cancel", "crash"}
    assert faults_of({"x": Clock.FAULT, "y": Clock.TOOL}) == {"x"}


def test_the_same_seed_gives_the_same_session_in_any_order() -> None:
    forward = _sessions(Load(latency_tail=1.0), 30, pressure=0.5, seed=7)
    assert forward == _sessions(Load(latency_tail=1.0), 30, pressure=0.5, seed=7)
    # a session is its own unit: its stream is its own, whatever ran before it
    alone = simulate_session(Race(), session_rng(7, 17), load=Load(latency_tail=1.0), pressure=0.5)
    assert alone == forward[17]
    assert _sessions(Load(latency_tail=1.0), 30, pressure=0.5, seed=8) != forward


def test_a_subject_that_raises_ends_its_session_with_the_error_and_is_closed() -> None:
    closed: list[RaceState] = []

    @dataclass(frozen=True, slots=True)
    class Broken(Race):
        def perform(self, state: RaceState, action: tuple[str, str]) -> StepResult:
            if action[0] == "complete":
                raise RuntimeError("the tool runner died")
            return Race.perform(self, state, action)

        def close(self, state: RaceState) -> None:
            closed.append(state)

    run = simulate_session(Broken(), session_rng(0, 0), load=Load(), pressure=0.0)
    assert run.error == "RuntimeError: the tool runner died" and not run.violated
    assert len(closed) == 1 and run.steps == run.requests == len(closed[0].issued) >= 1


def test_the_horizon_ends_a_session_that_never_ends() -> None:
    @dataclass(frozen=True, slots=True)
    class Chatty(Race):
        def enabled(self, state: RaceState) -> list[str]:
            return ["user"]

        def perform(self, state: RaceState, action: tuple[str, str]) -> StepResult:
            return StepResult()

    run = simulate_session(Chatty(), session_rng(0, 0), load=load_at(1.0), horizon=120.0)
    assert run.sim_time == 120.0 and run.steps > 3 and not run.violated


def test_a_model_runtime_session_runs_by_its_enabled_events() -> None:
    config = RuntimeConfig(budget=1000, hard_ceiling=2000)
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    subject = EventActions(ModelSystem(policy), config, Shape.small(config.budget), 40)
    runs = [simulate_session(subject, session_rng(1, i), load=load_at(0.5), pressure=0.5)
            for i in range(60)]  # fmt: skip
    assert all(r.error is None and r.steps > 0 for r in runs)
    assert any(r.violated for r in runs)  # the unsafe policy breaks some sessions
    assert runs == [simulate_session(subject, session_rng(1, i), load=load_at(0.5), pressure=0.5)
                    for i in range(60)]  # fmt: skip
