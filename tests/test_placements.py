"""One runtime, every driver: budget checks fire only where ``check_at``
puts them, and ``check`` reports a verdict per placement in one table
(issue 8, acceptance 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_runs import QUICK_FIND, SMALL_SUITE, CheckRun

from prunecheck import Verdict, check_policy
from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.events import BudgetCheck
from prunecheck.model.provider import Provider
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.model.trace import loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.search import random_walk, search
from prunecheck.sim.drivers.shape import Shape, Usage, enabled_events
from prunecheck.sim.drivers.swarm import opening, persisted_history
from prunecheck.sim.subjects.loader import load_policy, load_system

POLICIES = Path(__file__).resolve().parent / "policies"
TRIM = {fmt: f"{POLICIES}/complete_history_trim.py:trim_{fmt}" for fmt in ("openai", "anthropic")}


# The anthropic rows take the same path with the other provider's rules: make test-all.
FORMATS = ["openai", pytest.param("anthropic", marks=pytest.mark.slow)]
#: Where shrinking a counterexample is not the point (a found one is): Hypothesis
#: spends no runs on it (minimize still polishes it), about a second less a find.
NO_SHRINK = 0


@pytest.mark.parametrize(
    ("fmt", "examples"),  # 40 runs in make test, 100 in make test-all
    [
        ("openai", "40"),
        pytest.param("openai", "100", marks=pytest.mark.slow),
        pytest.param("anthropic", "100", marks=pytest.mark.slow),
    ],
)
def test_search_finds_nothing_before_invoke_and_a_violation_after_append(
    fmt: str, examples: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A trimmer safe on every complete history: no violation when the
    runtime trims only before model calls, one when it trims after every append."""
    base = ["search", "--policy", TRIM[fmt], "--format", fmt, "--max-examples", examples]
    assert main([*base, "--check-at", "before_invoke"]) == 0
    out = capsys.readouterr().out
    assert "no violation in" in out and "checks before_invoke" in out
    assert f"provider {fmt}" in out
    assert main([*base, "--check-at", "after_append", *QUICK_FIND]) == 1
    out = capsys.readouterr().out
    assert "found after" in out and "checks after_append" in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_shows_both_placements_in_one_table(
    fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    if fmt == "openai":  # this very check, run once for the JSON and JUnit tests too
        run: CheckRun = request.getfixturevalue("unsafe_check")
        assert run.out is not None
        status, out, folder = run.status, run.err, run.out  # --json: the text on stderr
    else:
        folder = tmp_path / "r"
        status = main(["check", TRIM[fmt], "--format", fmt, "--out", str(folder), *SMALL_SUITE])
        out = capsys.readouterr().out
    assert status == 1  # unsafe at one placement or more
    table = out[out.index("checks at      scenarios") :]
    rows = {line.split()[0]: line for line in table.splitlines()[1:4]}
    assert set(rows) == {"after_append", "after_batch", "before_invoke"}
    assert "UNSAFE" in rows["after_append"] and " safe " in rows["before_invoke"]
    line = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert line.startswith(
        "verdict: safe if your runtime trims only before model calls; "
        "UNSAFE if it trims after every append"
    )
    assert f"{folder}/" in line  # where the reproduction went
    trace = loads((folder / "trace.json").read_text(), "trace.json")
    assert trace.config.check_at is CheckAt.AFTER_APPEND
    assert trace.config.provider == fmt


def test_check_at_given_checks_that_runtime_only(capsys: pytest.CaptureFixture[str]) -> None:
    # what is printed is the point, not the search's thoroughness: a short one
    short = ["--levels", "0.6", "--seeds", "1", "--max-examples", "10"]
    status = main(
        ["check", TRIM["openai"], "--format", "openai", "--check-at", "before_invoke", *short]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "checks before_invoke · provider openai" in out
    assert "after_append" not in out
    assert (
        "verdict: safe — no violation in the suite or the search (checks only before "
        "model calls)" in out
    )


def test_python_api_carries_a_result_per_placement() -> None:
    # the result's shape is the point: the suite alone (no search) gives each verdict,
    # one placement after the other (side by side: tests/test_check.py)
    result = check_policy(
        TRIM["openai"], format="openai", levels=(0.6,), seeds=(1,), max_examples=0, jobs=1
    )
    assert [str(p.config.check_at) for p in result.placements] == [
        "after_append",
        "after_batch",
        "before_invoke",
    ]
    assert not result.safe and result.verdict is Verdict.UNSAFE
    before = result.placement("before_invoke")
    after = result.placement(CheckAt.AFTER_APPEND)
    assert before is not None and before.safe and before.reproduction is None
    assert after is not None and after.reproduction is not None
    assert result.reproduction == after.reproduction  # the first unsafe placement's
    assert result.violations and result.narrative and "verdict: safe if" in result.verdict_line()
    # One placement by config, as before.
    one = check_policy(
        TRIM["openai"],
        format="openai",
        levels=(0.6,),
        seeds=(1,),
        max_examples=20,
        config=RuntimeConfig(check_at=CheckAt.BEFORE_INVOKE, provider=Provider.OPENAI),
    )
    assert one.safe and len(one.placements) == 1


def test_no_driver_fires_a_budget_check_of_its_own() -> None:
    policy = load_policy("lowest_salience")
    shape = Shape.for_budget(1000)
    state = initial_state(RuntimeConfig(budget=1000, hard_ceiling=1500), policy, record=False)
    for event in persisted_history(shape, rounds=3, crashed=True):
        apply(state, event)
    assert state.pending  # the crashed batch
    assert not any(isinstance(e, BudgetCheck) for e in enabled_events(state, Usage(), shape))
    for found in (
        search(
            load_system("lowest_salience"),
            RuntimeConfig(budget=1000, hard_ceiling=1500),
            seed=1,
            max_examples=50,
            shrink_runs=NO_SHRINK,
        ),
        random_walk(
            load_system("lowest_salience"),
            RuntimeConfig(budget=1000, hard_ceiling=1500),
            seed=1,
            max_runs=500,
        ),
    ):
        assert found.trace is not None
        assert not any(isinstance(e, BudgetCheck) for e in found.trace.events)


@pytest.mark.parametrize(
    ("check_at", "runs"),  # one placement, 20 runs in make test; every one, 80, in make test-all
    [
        (CheckAt.AFTER_APPEND, 20),
        *(pytest.param(c, 80, marks=pytest.mark.slow) for c in CheckAt),
    ],
)
def test_unit_safe_stays_safe_and_lowest_salience_unsafe_at_every_placement(
    check_at: CheckAt, runs: int
) -> None:
    config = RuntimeConfig(budget=1000, hard_ceiling=1500, check_at=check_at)
    assert not search(load_system("unit_safe"), config, seed=2, max_examples=runs).found
    found = search(
        load_system("lowest_salience"), config, seed=2, max_examples=200, shrink_runs=NO_SHRINK
    )
    assert found.found


def test_generated_histories_open_with_system_prompt_then_user() -> None:
    shape = Shape.for_budget(1000)
    assert [e.kind for e in opening(shape)] == ["system", "user"]
    config = RuntimeConfig(budget=1000, hard_ceiling=1500)
    found = search(
        load_system("lowest_salience"), config, seed=3, max_examples=60, shrink_runs=NO_SHRINK
    )
    walked = random_walk(load_system("lowest_salience"), config, seed=3)
    for result in (found, walked):
        assert result.trace is not None
        assert [e.kind for e in result.trace.events[:2]] == ["system", "user"]


def test_a_session_abort_ends_a_generated_run() -> None:
    """Where the runtime gives up after its retries (a ``session_abort``
    incident), search, explore and the random walk end the run there."""
    from prunecheck.model.incidents import Incident, IncidentKind
    from prunecheck.sim.drivers.shape import SESSION_END, ends_session

    abort = Incident(IncidentKind(SESSION_END), 3, (), "the session ends")
    other = Incident(IncidentKind.PROVIDER_REJECTION, 3, ("c1",), "HTTP 400")
    assert ends_session((other, abort))
    assert not ends_session((other,))


def test_retries_stop_at_the_runtime_retry_budget() -> None:
    """With ``max_retries`` 1, a generated run retries at most once before
    the session aborts, and the counterexample ends at the abort."""
    from prunecheck.model.events import Invoke, Retry
    from prunecheck.model.incidents import IncidentKind

    grows = f"{POLICIES}/keeps_batch_call.py:select"
    config = RuntimeConfig(max_retries=1)
    target = frozenset({IncidentKind.SESSION_ABORT})
    for result in (
        search(
            load_system(grows),
            config,
            seed=0,
            max_examples=100,
            target=target,
            shrink_runs=NO_SHRINK,
        ),
        random_walk(load_system(grows), config, seed=0, max_runs=500, target=target),
    ):
        assert result.trace is not None
        events = result.trace.events
        assert isinstance(events[-1], Invoke)
        assert 1 <= sum(isinstance(e, Retry) for e in events) <= 1
