"""Time as an adversarial dimension (issue 20): policies that read
``view.now`` and message ages get their bugs found by every driver, and a
correct one stays safe.

The policies are in ``tests/policies/``: ``age_based.py`` evicts whole units
idle for over a minute, judging idleness by ``closed`` alone (unsafe: a
batch's call message is closed while its call still runs) or rightly
(closed and no call pending); ``ignores_pending.py`` evicts closed units of
earlier turns ignoring pending calls, which only a user message arriving
mid-batch shows.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.events import Event, IssueBatch, ResultChunk, UserMessage
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import dumps, loads
from prunecheck.sim.api.check import check_policy
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.explore import explore
from prunecheck.sim.drivers.polish import minimize_timed
from prunecheck.sim.drivers.search import SHRINK_RUNS, search
from prunecheck.sim.drivers.shape import DEFAULT_CALLS, Shape
from prunecheck.sim.drivers.swarm import opening
from prunecheck.sim.subjects.loader import load_system

POLICIES = Path(__file__).resolve().parent / "policies"
BUGGY = f"{POLICIES}/age_based.py:closed_for_a_minute"
CORRECT = f"{POLICIES}/age_based.py:idle_for_a_minute"
IGNORES_PENDING = f"{POLICIES}/ignores_pending.py:select"
CONFIG = RuntimeConfig()  # the command line's: budget 32000, checks after every append
ORPHAN_OR_INVALID = {IncidentKind.INVALID_PRUNE, IncidentKind.ORPHANED_RESULT}


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policies run in-process (``PRUNECHECK_CAGE=0``): the same verdicts,
    cheaper, where the drivers are the point (the cage's: tests/test_cage.py)."""
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")


# ------------------------------------------------------------------ the explorer
@pytest.mark.usefixtures("in_process")
#: The spelling's parse is checked cheaply (test_explore.py, test_formats.py: --policy;
#: test_explore_says_what_it_did_with_time below: positional); make test explores once.
@pytest.mark.parametrize(
    "spelling",
    [["--policy", IGNORES_PENDING], pytest.param([IGNORES_PENDING], marks=pytest.mark.slow)],
)
def test_default_explore_catches_a_policy_that_ignores_pending_calls(
    spelling: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Its default shape has a user message that may arrive mid-batch and
    # sizes that reach the budget (issue 20: it said "no violation in
    # 26,046 states" with the opening user message alone).
    status = main(["explore", *spelling, "--depth", "8", "--out", str(tmp_path / "b")])
    text = capsys.readouterr().out
    assert status == 1, text
    assert "shortest counterexample" in text and "invalid prune" in text
    trace = loads((tmp_path / "b" / "trace.json").read_text(), "t")
    kinds = [e.kind for e in trace.events]
    # a user message lands between the batch and its last result
    assert kinds.index("batch") < kinds.index("user", 2) < len(kinds) - 1


@pytest.mark.usefixtures("in_process")
def test_explore_with_one_user_message_misses_it() -> None:
    # the shape of before: nothing outside the batch's turn can arrive
    result = explore(
        load_system(IGNORES_PENDING), CONFIG, depth=5, shape=Shape.small(CONFIG.budget, max_users=1)
    )
    assert result.counterexample is None and not result.capped


@pytest.mark.usefixtures("in_process")
def test_explore_branches_on_time_only_when_told_and_only_for_timed_policies() -> None:
    shape = Shape.small(CONFIG.budget, time_steps=(30, 300))
    timed = explore(load_system(BUGGY), CONFIG, depth=3, shape=shape)
    assert timed.time_steps == (30, 300) and timed.reads_times
    trace = timed.counterexample
    assert trace is not None and trace.times is not None
    jump = max(b - a for a, b in zip(trace.times, trace.times[1:], strict=False))
    assert jump > 60  # the user came back over a minute later, while a call ran
    assert ORPHAN_OR_INVALID & {i.kind for i in incidents_of(trace, load_system(BUGGY))}
    # without the jump the same depth finds nothing: time was the bug
    plain = explore(load_system(BUGGY), CONFIG, depth=3, shape=Shape.small(CONFIG.budget))
    assert plain.counterexample is None and plain.time_steps == ()
    # a policy that orders by time only is not branched on it
    ordered = explore(load_system("unit_safe"), CONFIG, depth=3, shape=shape)
    assert ordered.time_steps == () and not ordered.reads_times


def test_explore_says_what_it_did_with_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", CORRECT, "--depth", "2"]) == 0
    assert "time: not branched (each event a second after the one before)" in (
        capsys.readouterr().out
    )
    assert main(["explore", CORRECT, "--depth", "2", "--time-steps", "300,30"]) == 0
    assert "may come +30 s, +300 s later while a call runs" in capsys.readouterr().out
    assert main(["explore", "recency", "--depth", "2", "--time-steps", "30"]) == 0
    assert "not branched: the policy reads creation times only to order" in (
        capsys.readouterr().out
    )


@pytest.mark.usefixtures("in_process")
def test_explore_keeps_the_correct_age_policy_safe_across_time_jumps() -> None:
    shape = Shape.small(CONFIG.budget, time_steps=(30, 300))
    result = explore(load_system(CORRECT), CONFIG, depth=5, shape=shape)
    assert result.counterexample is None and not result.capped
    assert result.time_steps == (30, 300) and result.states > 1000


# -------------------------------------------------------------------- the search
@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize(
    ("seed", "shrink_runs"),
    [  # make test: a seed that finds it in 5 runs, 50 runs of shrinking (minimize
        # polishes the rest); make test-all: 28 runs to find it, the default shrinking
        # (seeds 0 and 5 find nothing in 200 runs since searches draw from the seed alone)
        (3, 50),
        pytest.param(1, SHRINK_RUNS, marks=pytest.mark.slow),
    ],
)
def test_search_draws_gaps_and_catches_the_age_policy(seed: int, shrink_runs: int) -> None:
    found = search(load_system(BUGGY), CONFIG, seed=seed, max_examples=200, shrink_runs=shrink_runs)
    trace = found.trace
    assert found.found and trace is not None and trace.times is not None
    assert len(trace.events) <= 8
    incidents = incidents_of(trace, load_system(BUGGY))
    assert ORPHAN_OR_INVALID & {i.kind for i in incidents if i.is_violation}
    # the times survive the trace file, and they are what makes it fail
    again = loads(dumps(trace), "t")
    assert again.times == trace.times
    assert incidents_of(again, load_system(BUGGY)) == incidents
    timeless = replace(trace, times=None)
    assert not any(i.is_violation for i in incidents_of(timeless, load_system(BUGGY)))
    # shrunk toward no gaps: what is left adds up to just past the minute
    gaps = [b - a - 1 for a, b in zip(trace.times, trace.times[1:], strict=False)]
    assert 55 <= sum(gaps) <= 62


@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize(
    ("check_at", "runs"),  # the strictest placement, 30 runs, in make test; 60 in make test-all
    [
        (CheckAt.AFTER_APPEND, 30),
        pytest.param(CheckAt.AFTER_APPEND, 60, marks=pytest.mark.slow),
        pytest.param(CheckAt.AFTER_BATCH, 60, marks=pytest.mark.slow),
    ],
)
def test_search_finds_the_correct_age_policy_safe(check_at: CheckAt, runs: int) -> None:
    config = replace(CONFIG, check_at=check_at)
    result = search(load_system(CORRECT), config, seed=0, max_examples=runs)
    assert not result.found, result.trace
    assert result.coverage.live_pressed > 0  # it met the budget with a call running


@pytest.mark.usefixtures("in_process")
def test_minimize_cuts_a_gap_to_just_past_the_threshold() -> None:
    # the issue's trace: a batch with a background test run, the user 90 s
    # later while it runs, the eviction, and the run's result: an orphan
    events: list[Event] = [
        *opening(Shape.for_budget(CONFIG.budget)),
        IssueBatch((DEFAULT_CALLS[3],), 960),
        UserMessage(9600, "hello"),
        UserMessage(22400, "are the tests done?"),
        ResultChunk("c1", 320),
    ]
    times = [0.0, 1.0, 2.0, 3.0, 94.0, 95.0]
    system = load_system(BUGGY)
    kept, when = minimize_timed(events, times, CONFIG, system, Shape.for_budget(CONFIG.budget))
    # up to the eviction (the hit), every event needed, and the user's 90 s
    # cut to the fewest that still fail: the batch message 61 s old
    assert kept == events[:5]
    assert when == [0.0, 1.0, 2.0, 3.0, 63.0]


# ------------------------------------------------------------ the simulated suite
def test_the_simulated_suite_catches_the_age_policy_during_slow_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # issue 20: the suite's slow-call scenarios (a test run or a build
    # minutes long, the user writing meanwhile, checks firing) meet the unit
    # over a minute old whose call still runs; the same load without them
    # does not, at this seed
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")  # in-process: the same verdicts, cheaper
    caught = check_policy(
        BUGGY, levels=(), seeds=(1,), max_examples=0, failures=False, placements=["after_append"]
    )
    assert caught.verdict.value == "unsafe" and caught.search_examples == 0
    (run,) = caught.scenarios
    assert run.scenario.slow_calls and run.scenario.name == "load 1, seed 1, slow calls"
    assert run.violations > 0
    trace = caught.reproduction
    assert trace is not None and trace.times is not None and len(trace.events) <= 15
    assert trace.meta["found_by"]["driver"] == "simulate"
    incidents = incidents_of(trace, load_system(BUGGY))
    assert ORPHAN_OR_INVALID & {i.kind for i in incidents}
    # a background call was pending for over a minute when a user message came
    batch, issued = next((i, e) for i, e in enumerate(trace.events) if isinstance(e, IssueBatch))
    assert any(c.background for c in issued.calls)
    user = max(i for i, e in enumerate(trace.events) if isinstance(e, UserMessage))
    assert batch < user and trace.times[user] - trace.times[batch] >= 59
    plain = check_policy(
        BUGGY,
        levels=(1.0,),
        seeds=(1,),
        slow_levels=(),
        max_examples=0,
        failures=False,
        placements=["after_append"],
    )
    assert plain.verdict.value == "safe"


def test_the_simulated_suite_keeps_the_correct_age_policy_safe_during_slow_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")
    for check_at in ("after_append", "after_batch"):
        result = check_policy(
            CORRECT, levels=(), seeds=(1, 2), max_examples=0, failures=False, placements=[check_at]
        )
        assert result.verdict.value == "safe", result.narrative
        assert all(s.scenario.slow_calls for s in result.scenarios) and len(result.scenarios) == 2
        # not vacuous: it evicted old units under pressure with calls pending
        coverage = result.coverage
        assert coverage is not None and (coverage.live_prunes or 0) > 0 and not coverage.gaps()


# --------------------------------------------------------------------- the check
@pytest.mark.slow
def test_check_with_no_flags_catches_the_age_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the failure database, if any, goes here
    assert main(["check", BUGGY]) == 1
    text = capsys.readouterr().out
    assert "UNSAFE" in text and ("invalid prune" in text or "orphaned result" in text)


@pytest.mark.slow
def test_check_with_no_flags_keeps_the_correct_age_policy_safe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", CORRECT]) == 0
    assert "verdict: safe" in capsys.readouterr().out
