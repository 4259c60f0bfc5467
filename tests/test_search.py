"""The adversarial search: it finds the domain document's two incident
classes from scratch, shrinks them to near the explorer's shortest, is
deterministic for a seed, and finds nothing behind the safe gates."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from check_runs import QUICK_FIND

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Event,
    ExternalWrite,
    IssueBatch,
    ResultChunk,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import BUILTINS, builtin_policy
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.explore import explore
from prunecheck.sim.drivers.polish import minimize
from prunecheck.sim.drivers.search import SearchResult, random_walk, search
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.subjects.loader import load_system, model_system

CONFIG = RuntimeConfig(budget=1000, hard_ceiling=1500)
ORPHAN = frozenset({IncidentKind.ORPHANED_RESULT})
TRUNCATED = frozenset({IncidentKind.TRUNCATED_PAYLOAD})


@pytest.fixture(scope="module")
def found() -> dict[str, SearchResult]:
    """lowest_salience, gate none, from scratch, aimed at each incident class.
    Hypothesis shrinks for 50 runs, not the default 300: the same traces here
    (minimize polishes the rest), at a fifth of the cost."""
    shape = Shape.small()
    return {
        name: search(
            load_system("lowest_salience"),
            CONFIG,
            seed=0,
            shape=shape,
            target=target,
            shrink_runs=50,
        )
        for name, target in (("orphan", ORPHAN), ("truncated", TRUNCATED))
    }


@pytest.mark.parametrize(
    "name, kind",
    [("orphan", IncidentKind.ORPHANED_RESULT), ("truncated", IncidentKind.TRUNCATED_PAYLOAD)],
)
def test_search_finds_both_incident_classes(
    found: dict[str, SearchResult], name: str, kind: IncidentKind
) -> None:
    result = found[name]
    assert result.found and result.trace is not None
    # The trace replays on its own, and ends at the step that produced the target kind.
    replayed = incidents_of(result.trace, ModelSystem(BUILTINS["lowest_salience"]()))
    assert replayed == list(result.incidents)
    last = len(result.trace.events) - 1
    assert kind in {i.kind for i in replayed if i.step == last}
    assert kind not in {i.kind for i in replayed if i.step < last}
    assert result.trace.meta["expect"]["violations"] == sorted(
        {i.kind.value for i in replayed if i.is_violation}
    )
    assert result.first_length is not None and result.first_length >= len(result.trace.events)


@pytest.mark.parametrize("name, target", [("orphan", ORPHAN), ("truncated", TRUNCATED)])
def test_shrunk_trace_is_at_most_two_longer_than_the_shortest(
    found: dict[str, SearchResult], name: str, target: frozenset[IncidentKind]
) -> None:
    shortest = explore(
        load_system("lowest_salience"),
        CONFIG,
        depth=8,
        shape=Shape.small(),
        target=target,
    )
    assert shortest.counterexample is not None
    trace = found[name].trace
    assert trace is not None
    assert len(trace.events) <= len(shortest.counterexample.events) + 2


def test_the_stream_case_is_a_stream_evicted_mid_append(found: dict[str, SearchResult]) -> None:
    trace = found["truncated"].trace
    assert trace is not None
    # Some message was open (a chunk without last) when it was evicted, and the
    # rest re-appended: the truncation names the missing tokens.
    assert any(isinstance(e, ResultChunk | AssistantChunk) and not e.last for e in trace.events)
    truncated = [
        i for i in found["truncated"].incidents if i.kind is IncidentKind.TRUNCATED_PAYLOAD
    ]
    assert "tokens are missing" in truncated[0].detail


def test_same_seed_same_trace_other_seed_may_differ() -> None:
    shape = Shape.small()
    one = search(
        load_system("lowest_salience"),
        CONFIG,
        seed=7,
        shape=shape,
        max_examples=60,
        shrink_runs=50,  # the shrinking too is the same for a seed; its length is not the point
    )
    two = search(
        load_system("lowest_salience"),
        CONFIG,
        seed=7,
        shape=shape,
        max_examples=60,
        shrink_runs=50,  # the shrinking too is the same for a seed; its length is not the point
    )
    assert one.trace is not None and two.trace is not None
    assert dumps(one.trace) == dumps(two.trace)
    assert one.examples == two.examples


@pytest.mark.parametrize(
    "policy, gate",
    [  # one per gate in make test; make test-all adds two and the full matrix below
        ("lowest_salience", Gate.COMMIT),
        ("clear_old_results", Gate.SPILL),
        pytest.param("summarize_prefix", Gate.COMMIT, marks=pytest.mark.slow),
        pytest.param("turn_window", Gate.SPILL, marks=pytest.mark.slow),
    ],
)
def test_safe_gates_reduced(policy: str, gate: Gate) -> None:
    config = replace(CONFIG, gate=gate)
    result = search(load_system(policy), config, seed=1, max_examples=40)
    assert not result.found and result.trace is None
    assert result.examples >= 40
    # The search did push the runtime over budget: the gate paid for it.
    assert result.costs.get("deferral", 0) + result.costs.get("spill", 0) > 0


@pytest.mark.slow
@pytest.mark.parametrize("gate", [Gate.COMMIT, Gate.SPILL])
@pytest.mark.parametrize("policy", list(BUILTINS))
def test_safe_gates_full_matrix(policy: str, gate: Gate) -> None:
    result = search(load_system(policy), replace(CONFIG, gate=gate), seed=0)
    assert not result.found, result.trace and dumps(result.trace)


def test_unsafe_gate_is_not_vacuous_for_every_raw_policy() -> None:
    # a find is the point, not its shrinking (shrink_runs=0: minimize alone polishes it)
    for policy in ("recency", "token_span", "similarity", "summarize_prefix"):
        found = search(load_system(policy), CONFIG, seed=0, max_examples=50, shrink_runs=0)
        assert found.found, policy


def test_minimize_deletes_noise_and_renumbers_calls() -> None:
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    read = CallSpec("read_file", "a.txt")
    events: list[Event] = [
        UserMessage(30, "noise"),
        IssueBatch((read,), 30),  # c1: unrelated batch, delivered
        ResultChunk("c1", 30),
        ExternalWrite("a.txt"),
        BudgetCheck(),
        UserMessage(400, "fix a.txt"),
        IssueBatch((read, read), 50),  # c2, c3
        ResultChunk("c2", 400),
        ResultChunk("c3", 400),
    ]
    trace = Trace("lowest_salience", CONFIG, tuple(events))
    assert any(
        i.kind is IncidentKind.ORPHANED_RESULT for i in incidents_of(trace, ModelSystem(policy))
    )
    short = minimize(events, CONFIG, ModelSystem(policy), Shape.small(), ORPHAN)
    assert len(short) < len(events)
    # The first batch went with its result; the kept calls were renumbered from c1.
    calls = {e.call for e in short if isinstance(e, ResultChunk)}
    assert calls and all(int(c[1:]) <= 2 for c in calls)
    kinds = {i.kind for i in incidents_of(trace.with_events(short), ModelSystem(policy))}
    assert IncidentKind.ORPHANED_RESULT in kinds


def test_random_walk_is_the_unguided_baseline() -> None:
    result = random_walk(
        load_system("lowest_salience"),
        CONFIG,
        seed=3,
        shape=Shape.small(),
        target=ORPHAN,
    )
    assert result.found and result.trace is not None
    assert result.trace.meta["found_by"]["driver"] == "random"
    assert IncidentKind.ORPHANED_RESULT in {i.kind for i in result.incidents}


def test_a_raising_policy_is_a_policy_error(tmp_path: Path) -> None:
    def broken(view: object, need: int) -> list[str]:
        raise RuntimeError("boom")

    from prunecheck.model.policies import as_policy

    with pytest.raises(PolicyError, match="boom"):
        search(model_system("broken", as_policy(broken, "broken")), CONFIG, seed=0, max_examples=20)


# ------------------------------------------------------------------ command line
def test_cli_search_writes_a_bundle_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "repro"
    status = main(
        [
            "search",
            "--policy",
            "lowest_salience",
            "--target",
            "orphaned_result",
            "--max-examples",
            "50",
            *QUICK_FIND,
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert status == 1
    assert "orphaned result" in text and "bundle written to" in text
    trace = loads((out / "trace.json").read_text(), "trace.json")
    assert trace.policy == "lowest_salience" and trace.events


def test_cli_search_behind_commit_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["search", "--policy", "recency", "--gate", "commit", "--max-examples", "10"])
    text = capsys.readouterr().out
    assert status == 0
    assert "no violation in" in text and "costs met" in text


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--policy", "no_such_policy"], "no_such_policy"),
        (["--policy", "recency", "--target", "bogus"], "--target 'bogus'"),
        (["--policy", "recency", "--budget", "0"], "budget"),
        (["--policy", "recency", "--ceiling", "10"], "--hard-ceiling"),
        (["--policy", "recency", "--sizes", "1,x"], "--sizes"),
        (["--policy", "recency", "--max-calls", "0"], "max_calls"),
    ],
)
def test_cli_search_bad_input_exits_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_cli_search_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--help"]) == 0
    out = capsys.readouterr().out
    assert "example:" in out and "prunecheck search lowest_salience" in out
