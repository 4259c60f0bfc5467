"""One System every driver takes (:mod:`prunecheck.model.system`).

The model runtime with a policy, the same model runtime driven through the
RuntimeUnderTest protocol (``runtime:model:POLICY``) and the example asyncio
loop (``examples/agent_loop.py``: NaiveLoop, GuardedLoop) are driven the
same way by every driver — search, explore, the simulator — and judged by
the one replay; the regression corpus gives its verdicts both ways."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Invoke, SystemPrompt, UserMessage
from prunecheck.model.incidents import VIOLATION_KINDS
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import BUILTINS
from prunecheck.model.provider import Provider
from prunecheck.model.system import Facts, System, incidents_of, replay
from prunecheck.model.trace import Trace, loads
from prunecheck.runtime import JudgedSystem
from prunecheck.sim.drivers.explore import explore
from prunecheck.sim.drivers.search import random_walk, search
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.drivers.simulator import simulate, tally_trace
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.loader import load_system

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.json"))
LOOP = ROOT / "examples" / "agent_loop.py"
CONFIG = RuntimeConfig(budget=1000, hard_ceiling=1500, provider=Provider.OPENAI)

#: Each subject by its spec, and whether it is unsafe (the loop behind the
#: guard is not; lowest_salience, however driven, and the naive loop are).
SUBJECTS = {
    "model": ("lowest_salience", True),
    "protocol": ("runtime:model:lowest_salience", True),
    "naive_loop": (f"runtime:{LOOP}:NaiveLoop", True),
    "guarded_loop": (f"runtime:{LOOP}:GuardedLoop", False),
}
_VIOLATIONS = {k.value for k in VIOLATION_KINDS}
#: The model runtime, and the same runtime through the protocol: each one's
#: counterexamples are the other's.  (A long simulated run of the protocol is
#: not a run of the model: the shadow retries idempotently, the model re-issues
#: calls under ``retry=rerun_batch``, so call numbers part; the other way holds.)
TWIN = {"model": "protocol", "protocol": "model"}


def _kinds(trace: Trace, system: System[Any]) -> list[str]:
    return sorted({i.kind.value for i in incidents_of(trace, system) if i.is_violation})


def test_every_subject_is_a_system_with_its_facts() -> None:
    model = load_system("lowest_salience")
    assert isinstance(model, ModelSystem) and isinstance(model, System)
    assert model.facts == Facts(reads_times=True) and model.name == "lowest_salience"
    # recency orders by creation time only: the explorer may fold times
    assert not ModelSystem(BUILTINS["recency"]()).facts.reads_times
    for key in ("protocol", "naive_loop", "guarded_loop"):
        system = load_system(SUBJECTS[key][0])
        assert isinstance(system, JudgedSystem) and isinstance(system, System)
        assert system.name == SUBJECTS[key][0]
        assert system.facts.own_gate and system.facts.provider is Provider.OPENAI


@pytest.mark.parametrize("key", list(SUBJECTS))
def test_the_ground_truth_is_the_models_state_whatever_the_subject(key: str) -> None:
    system = load_system(SUBJECTS[key][0])
    state = system.initial(CONFIG)
    for event in (SystemPrompt(50), UserMessage(80, "hello"), Invoke()):
        system.apply(state, event)
    truth = system.truth(state)
    assert [m.id for m in truth.context] == ["m1", "m2"] and truth.step_index == 3
    twin = system.copy(state)
    system.apply(twin, UserMessage(10))
    assert system.truth(state).step_index == 3 and system.truth(twin).step_index == 4
    body = system.request(state)
    assert len(body.body["messages"]) == 2  # type: ignore[arg-type]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_the_corpus_verdicts_hold_both_ways(path: Path) -> None:
    trace = loads(path.read_text(encoding="utf-8"))
    expected = sorted(trace.meta["expect"]["violations"])
    openai = replace(trace, config=replace(trace.config, provider=Provider.OPENAI))
    model = load_system(trace.policy)
    through = load_system(f"runtime:model:{trace.policy}")
    assert _kinds(trace, model) == expected
    assert _kinds(openai, model) == _kinds(openai, through) and _kinds(openai, through)


def _found(key: str, driver: str, short: bool = False) -> Trace | None:
    """The counterexample ``driver`` finds for subject ``key`` (None if none).
    ``short``: a third of the runs and one level less deep (the safe loop in
    process, in make test; its caged twin in make test-all goes the whole way)."""
    system = load_system(SUBJECTS[key][0])
    if driver == "search":
        return search(
            system, CONFIG, seed=1, max_examples=10 if short else 30, shrink_runs=20
        ).trace
    if driver == "random":
        return random_walk(system, CONFIG, seed=1, max_runs=20 if short else 60).trace
    result = explore(system, CONFIG, depth=3 if short else 4, shape=Shape.small())
    assert not result.capped
    assert result.counterexample is not None or result.states > 100  # a safe verdict explored
    return result.counterexample


#: The caged loop behind the guard is the slowest subject (two round trips
#: into its worker per event, and safe: every run goes to its end).  make test
#: drives it in process (PRUNECHECK_CAGE=0: the same loop, the same judge),
#: with shorter runs (``_found``'s ``short``), and the naive loop through the
#: cage; make test-all drives both through the cage, the whole way.
_SLOW_CAGED = "guarded_loop"


def _caged_or_not(key: str, *rest: str) -> list[Any]:
    """The params (key, *rest, caged) of one subject."""
    ident = "-".join((key, *rest))
    if key != _SLOW_CAGED:
        return [pytest.param(key, *rest, True, id=ident)]
    return [
        pytest.param(key, *rest, False, id=f"{ident}-in_process"),
        pytest.param(key, *rest, True, id=ident, marks=pytest.mark.slow),
    ]


DRIVEN = [p for k in SUBJECTS for d in ("search", "random", "explore") for p in _caged_or_not(k, d)]
#: Each subject simulated for a minute of load in make test (every violation
#: kind the subjects show in 120 s shows in 60 s), and for 120 s caged in
#: make test-all.
SIMULATED = [
    *(pytest.param(k, True, 60.0, id=k) for k in SUBJECTS if k != _SLOW_CAGED),
    pytest.param(_SLOW_CAGED, False, 60.0, id=f"{_SLOW_CAGED}-in_process"),
    *(pytest.param(k, True, 120.0, id=f"{k}-120s", marks=pytest.mark.slow) for k in SUBJECTS),
]


def _load(monkeypatch: pytest.MonkeyPatch, caged: bool) -> None:
    """Caged as a user would run it, or (``caged`` False) in process."""
    if not caged:
        monkeypatch.setenv("PRUNECHECK_CAGE", "0")


@pytest.mark.parametrize(("key", "driver", "caged"), DRIVEN)
def test_every_driver_drives_every_system(
    key: str, driver: str, caged: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(monkeypatch, caged)
    spec, unsafe = SUBJECTS[key]
    trace = _found(key, driver, short=not caged and key == _SLOW_CAGED)
    assert (trace is not None) == unsafe
    if trace is None:
        return
    assert trace.policy == spec and trace.meta["found_by"]["driver"] == driver
    kinds = _kinds(trace, load_system(trace.policy))  # the one replay, from the spec
    assert kinds and kinds == sorted(trace.meta["expect"]["violations"])
    if key in TWIN:  # the model's counterexample is the protocol's, and back
        assert _kinds(trace, load_system(SUBJECTS[TWIN[key]][0])) == kinds


@pytest.mark.parametrize(("key", "caged", "horizon"), SIMULATED)
def test_the_simulator_drives_every_system(
    key: str, caged: bool, horizon: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    _load(monkeypatch, caged)
    spec, unsafe = SUBJECTS[key]
    system = load_system(spec)
    run = simulate(system, CONFIG, load_at(1.0), 1, horizon=horizon)
    assert run.error is None and run.invocations > 0
    bad = {k for k, n in run.incidents.items() if n and k in _VIOLATIONS}
    assert bool(bad) == unsafe, bad
    replayed = 0
    for trace in run.traces:
        assert trace.policy == spec
        tally, error = tally_trace(trace, load_system(trace.policy))  # each trace replayed once
        assert error is None and tally.events == len(trace.events)
        replayed += sum(tally.incidents.get(k, 0) for k in bad)
        if key == "model":  # the model's runs, judged through the protocol
            assert _kinds(trace, load_system(SUBJECTS["protocol"][0])) == _kinds(trace, system)
    assert replayed == sum(run.incidents[k] for k in bad)


def test_replay_yields_the_systems_own_state_and_refuses_a_bare_policy() -> None:
    trace = loads((ROOT / "tests" / "corpus" / "seed_parallel_batch.json").read_text())
    system = load_system(f"runtime:{LOOP}:NaiveLoop")
    states = [state for _, state in replay(trace, system)]
    assert states and all(s is states[0] for s in states)  # one state, updated in place
    assert system.truth(states[-1]).step_index == len(trace.events)
    with pytest.raises(TypeError, match="wrap a policy once"):
        list(replay(trace, BUILTINS["recency"]()))  # type: ignore[arg-type]


def test_prunecheck_runtime_is_the_one_public_home_and_light() -> None:
    import prunecheck.runtime as public
    from prunecheck.sim.subjects.runtimes import stimuli

    assert sorted(public.__all__) == public.__all__
    assert all(getattr(public, name) is not None for name in public.__all__)
    assert public.RuntimeUnderTest is stimuli.RuntimeUnderTest and public.System is System
    probe = (
        "import json, sys, prunecheck.runtime\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = set(json.loads(done.stdout))
    assert loaded.isdisjoint({"simpy", "hypothesis", "networkx", "matplotlib", "tqdm", "dask"})
