"""Real code under test (:mod:`prunecheck.sim.subjects.runtimes.judged`): the
RuntimeUnderTest protocol, the judge, and drivers driving runtimes instead
of the model runtime."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from prunecheck.model.config import CheckAt, Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import VIOLATION_KINDS
from prunecheck.model.policies import BUILTINS
from prunecheck.model.provider import Provider
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import Trace, loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.report import HORIZON, LEVELS, SEEDS, TIGHT_LEVEL, TIGHTNESS
from prunecheck.sim.drivers.explore import explore
from prunecheck.sim.drivers.search import search
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.drivers.simulator import simulate
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.loader import load_policy, load_system
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
from prunecheck.sim.sweeps.runs import Row
from prunecheck.sim.sweeps.sweep import plan, run_sweep

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.json"))
LOOP = ROOT / "examples" / "agent_loop.py"


def _verdicts(trace: Trace) -> tuple[list[str], list[str]]:
    """Violation kinds of the model judging itself, and of the judge reading
    the model runtime through the protocol."""
    own = sorted(
        {i.kind.value for i in incidents_of(trace, load_system(trace.policy)) if i.is_violation}
    )
    through = load_system(f"runtime:model:{trace.policy}")
    seen = sorted({i.kind.value for i in incidents_of(trace, through) if i.is_violation})
    return own, seen


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_the_corpus_gives_the_same_verdicts_through_the_protocol(path: Path) -> None:
    trace = loads(path.read_text(encoding="utf-8"))
    trace = replace(trace, config=replace(trace.config, provider=Provider.OPENAI))
    own, seen = _verdicts(trace)
    assert own == seen and own  # every corpus trace has violations


def _knobs(trace: Trace, every: bool) -> list[RuntimeConfig]:
    """The trace's runtime under other knobs.  Left out: a budget check
    before the invocation together with a repair layer — both act inside one
    invocation, so an observer of requests sees the repaired history only
    (the repair hides the prune from outside; the model sees it inside)."""
    gates, losses = tuple(Gate), tuple(StreamLoss)
    repairs = tuple(Repair) if every else (trace.config.repair,)
    retries = tuple(RetryMode) if every else (trace.config.retry,)
    checks = tuple(CheckAt) if every else (trace.config.check_at,)
    return [
        replace(
            trace.config,
            provider=Provider.OPENAI,
            gate=g,
            on_stream_loss=s,
            repair=r,
            retry=y,
            check_at=c,
        )
        for g, s, r, y, c in itertools.product(gates, losses, repairs, retries, checks)
        if not (c is CheckAt.BEFORE_INVOKE and r is not Repair.NONE)
    ]


def _agree_under_knobs(every: bool) -> int:
    compared = 0
    for path in CORPUS:
        trace = loads(path.read_text(encoding="utf-8"))
        for config in _knobs(trace, every):
            variant = replace(trace, config=config)
            own, seen = _verdicts(variant)
            assert own == seen, (path.stem, config)
            compared += 1
    return compared


def test_the_corpus_agrees_under_every_gate_and_stream_loss_mode() -> None:
    assert _agree_under_knobs(every=False) == len(CORPUS) * 12


@pytest.mark.slow
def test_the_corpus_agrees_under_every_combination_of_knobs() -> None:
    assert _agree_under_knobs(every=True) == len(CORPUS) * (4 * 3 * 3 * 2 * 3 - 4 * 3 * 2 * 2)


def test_the_naive_asyncio_loop_shows_the_domain_documents_incidents() -> None:
    seed = loads((ROOT / "tests" / "corpus" / "seed_parallel_batch.json").read_text())
    naive = load_system(f"runtime:{LOOP}:NaiveLoop")
    kinds = {i.kind.value for i in incidents_of(seed, naive) if i.is_violation}
    assert kinds == {
        "invalid_prune",
        "orphaned_result",
        "provider_rejection",
        "duplicated_side_effect",
    }
    guarded = load_system(f"runtime:{LOOP}:GuardedLoop")
    assert not [i for i in incidents_of(seed, guarded) if i.is_violation]


@pytest.mark.slow  # a full CLI search and shrink; explore finds the same loop unsafe in make test
def test_search_runtime_exits_1_on_the_naive_loop(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status = main(["search", "--runtime", f"{LOOP}:NaiveLoop", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1 and "VIOLATION" in out and "runtime under test" in out
    assert (tmp_path / "trace.json").is_file() and (tmp_path / "request.json").is_file()
    trace = loads((tmp_path / "trace.json").read_text())
    # the bundle carries the runtime's file and its trace names the copy (issue 19)
    assert trace.policy == "runtime:agent_loop.py:NaiveLoop"
    assert (tmp_path / "agent_loop.py").read_text() == Path(LOOP).read_text()
    copy = load_system(f"runtime:{tmp_path / 'agent_loop.py'}:NaiveLoop")
    assert [i for i in incidents_of(trace, copy) if i.is_violation]


def test_search_runtime_exits_0_on_the_guarded_loop(capsys: pytest.CaptureFixture[str]) -> None:
    # the exit status and the words; the default search's safe verdict: below (make test-all)
    status = main(["search", "--runtime", f"{LOOP}:GuardedLoop", "--max-examples", "4"])
    out = capsys.readouterr().out
    assert status == 0 and "no violation" in out


@pytest.mark.slow
def test_the_default_search_of_the_guarded_loop_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["search", "--runtime", f"{LOOP}:GuardedLoop"])
    out = capsys.readouterr().out
    assert status == 0 and "no violation" in out


def test_a_bad_runtime_spec_is_one_paragraph_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--runtime", f"{LOOP}:Nope"]) == 2
    err = capsys.readouterr().err
    assert "has no attribute 'Nope'" in err and "Traceback" not in err
    assert main(["explore", "--runtime", "no_such_file.py:X", "--depth", "2"]) == 2


CONFIG = RuntimeConfig(budget=1000, hard_ceiling=1500)
GUARDED = [f"runtime:guard:{name}" for name in BUILTINS] + [
    f"runtime:guard:{ROOT / 'examples' / 'openai_keep_last.py'}:trim@openai",
    f"runtime:guard:{ROOT / 'examples' / 'anthropic_trim.py'}:trim@anthropic",
    "runtime:guard:langchain:strategy=last",
]


def _survives_search(spec: str, max_examples: int) -> None:
    result = search(load_system(spec), CONFIG, seed=1, max_examples=max_examples)
    assert not result.found, result.trace
    assert result.costs.get("deferral", 0) > 0 and result.costs.get("spill", 0) > 0


#: Four trimmers of different kinds behind the guard (an evicting and a
#: summarizing built-in, a list function from examples/, the LangChain
#: adapter) are searched in make test; the explorer (below) takes all of
#: them there, and the longer search (make test-all) searches each.
SEARCHED = [
    spec
    for spec in GUARDED
    if spec.endswith(("lowest_salience", "summarize_prefix", "@anthropic", "strategy=last"))
]


@pytest.mark.parametrize("spec", SEARCHED)
def test_the_guard_wrapping_each_trimmer_survives_search(spec: str) -> None:
    # 10 runs meet 8-21 deferrals and 100-220 spills: the gate worked; 60 runs below
    _survives_search(spec, max_examples=10)


@pytest.mark.slow
@pytest.mark.parametrize("spec", GUARDED)
def test_the_guard_wrapping_each_trimmer_survives_a_longer_search(spec: str) -> None:
    _survives_search(spec, max_examples=60)


def _caught_without_the_guard(name: str) -> bool:
    # a find is the point, not its shrinking (shrink_runs=0)
    system = load_system(f"runtime:model:{name}")
    return search(system, CONFIG, seed=1, max_examples=60, shrink_runs=0).found


def test_a_trimmer_without_the_guard_is_caught() -> None:
    assert _caught_without_the_guard("lowest_salience")


@pytest.mark.slow
def test_the_same_trimmers_without_the_guard_are_caught() -> None:
    for name in ("lowest_salience", "token_span"):
        assert search(
            load_system(f"runtime:model:{name}"),
            CONFIG,
            seed=1,
            max_examples=60,
        ).found


@pytest.mark.parametrize("spec", GUARDED)
def test_the_guard_wrapping_each_trimmer_survives_explore_depth_3(spec: str) -> None:
    # 127 states, a fifth of depth 4's, where the guard already defers; depth 8
    # (below, make test-all) goes further
    result = explore(load_system(spec), CONFIG, depth=3, shape=Shape.small())
    assert result.counterexample is None and not result.capped and result.states > 100
    assert result.coverage.incidents.get("deferral", 0) > 0  # the gate worked


@pytest.mark.slow
@pytest.mark.parametrize("spec", GUARDED)
def test_the_guard_wrapping_each_trimmer_survives_explore_depth_8(spec: str) -> None:
    result = explore(load_system(spec), CONFIG, depth=8, shape=Shape.small(), max_states=400_000)
    print(
        f"{spec}: {result.states} states, {result.transitions} transitions, {result.seconds:.0f} s"
    )
    assert result.counterexample is None and not result.capped


def test_explore_finds_the_naive_loops_shortest_counterexample() -> None:
    result = explore(
        load_system(f"runtime:{LOOP}:NaiveLoop"),
        CONFIG,
        depth=4,
        shape=Shape.small(),
    )
    # The trace opens with the system prompt and the user's message; depth counts after them.
    # The small shape has a second user message (one may arrive mid-batch), so the shortest
    # break is 4 events; with one user message it was 5.
    assert result.counterexample is not None and len(result.counterexample.events) == 4
    assert [e.kind for e in result.counterexample.events[:2]] == ["system", "user"]


def _guard_sweep(
    tmp_path: Path,
    levels: tuple[float, ...],
    tightness: tuple[float, ...],
    seeds: list[int],
    horizon: float,
    specs: list[str],
) -> list[Row]:
    """The report's sweep for runtimes: every trimmer behind the guard ×
    load levels, and × budget tightness at the report's tight level."""
    base = [RuntimeConfig()]
    runs = plan(specs, base, levels, seeds, horizon=horizon)
    runs += plan(specs, base, [TIGHT_LEVEL], seeds, tightness=tightness, horizon=horizon)
    rows = list(run_sweep(runs, tmp_path / "guard.jsonl", jobs=1, quiet=True).rows)
    assert len(rows) == len({r.key for r in runs})  # every distinct run (a tightness run
    return rows  # may equal a level run: it runs once)


def _no_violation(rows: list[Row]) -> tuple[int, int]:
    violations = {k.value for k in VIOLATION_KINDS}
    for row in rows:
        assert row.error is None, row.error
        bad = {k: n for k, n in row.incidents.items() if k in violations and n}
        assert not bad, (row.spec.policy, row.spec.level, row.spec.seed, bad)
    return sum(r.invocations for r in rows), sum(r.incidents.get("spill", 0) for r in rows)


def test_the_guard_wrapping_each_trimmer_survives_a_reduced_sweep(tmp_path: Path) -> None:
    # a minute of load per run (300 invocations in all); the default sweep
    # (below, make test-all) runs every level and tightness, several seeds
    rows = _guard_sweep(tmp_path, (1.0,), (0.2,), [1], 60.0, GUARDED)
    invocations, spills = _no_violation(rows)
    assert invocations > 20 * len(GUARDED) and spills > 0


@pytest.mark.slow
def test_the_guard_wrapping_each_trimmer_survives_the_default_sweep(tmp_path: Path) -> None:
    rows = _guard_sweep(tmp_path, LEVELS, TIGHTNESS, list(range(1, SEEDS + 1)), HORIZON, GUARDED)
    invocations, spills = _no_violation(rows)
    print(f"{len(rows)} runs, {invocations} invocations, {spills} spills, no violation")
    assert len(rows) >= len(LEVELS) * SEEDS * len(GUARDED) and invocations > 10_000


_SIMULATED = ["lowest_salience", "clear_old_results", "summarize_prefix"]


@pytest.mark.parametrize(
    ("name", "horizon"),  # a minute of load in make test; 150 s (more kinds met) in make test-all
    [(name, 60.0) for name in _SIMULATED]
    + [pytest.param(name, 150.0, marks=pytest.mark.slow) for name in _SIMULATED],
)
def test_simulated_traces_give_the_same_verdicts_through_the_protocol(
    name: str, horizon: float
) -> None:
    policy = load_policy(name)
    run = simulate(
        load_system(name, DEFAULT_TIMEOUT),
        RuntimeConfig(provider=Provider.OPENAI),
        load_at(1.0),
        1,
        horizon=horizon,
    )
    kinds = set()
    for trace in run.traces:
        own, seen = _verdicts(trace)
        assert own == seen
        kinds.update(own)
    assert "invalid_prune" in kinds and policy is not None  # the traces do break
