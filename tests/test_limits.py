"""Never silent, never endless: ``--time-limit`` with an honest partial
verdict, exit 3 for "out of time, no verdict", event caps per scenario
(issue 8, point 3)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from prunecheck import Verdict, check_policy
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, exit_status
from prunecheck.sim.support.progress import Progress, progress_for

GROWS = f"{Path(__file__).resolve().parent / 'policies' / 'keeps_batch_call.py'}:select"


def test_the_growing_history_policy_gets_a_partial_verdict_not_a_hang() -> None:
    started = time.monotonic()
    # seeds from 2: the suite's first scenario (load 0.2, seed 2) already shows a
    # violation, and the first scenario always runs, however loaded the machine
    result = check_policy(GROWS, time_limit=0.5, seeds=(2, 3))
    took = time.monotonic() - started
    assert took < 60  # a generous bound: the limit is 0.5 s, a scenario is capped
    assert result.timed_out
    # A violation was found before the limit: the partial verdict says unsafe.
    assert result.verdict is Verdict.UNSAFE and result.reproduction is not None
    text = result.summary()
    assert "stopped at the time limit:" in text and "covered" in text


def test_out_of_time_without_a_violation_is_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "unit_safe", "--time-limit", "0.3"]) == EXIT_OUT_OF_TIME
    out = capsys.readouterr().out
    assert "OUT OF TIME" in out and "no verdict" in out and "covered" in out


def test_search_and_explore_stop_at_the_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    # limits far below what the work takes: any of them shows the stop
    assert (
        main(["search", "--policy", "unit_safe", "--max-examples", "100000", "--time-limit", "0.2"])
        == EXIT_OUT_OF_TIME
    )
    assert "out of time after" in capsys.readouterr().out
    assert (
        main(["explore", "--policy", "unit_safe", "--depth", "40", "--time-limit", "0.2"])
        == EXIT_OUT_OF_TIME
    )
    assert "out of time at --time-limit 0.2 s" in capsys.readouterr().out


def test_a_violation_found_before_the_limit_is_still_reported() -> None:
    # the first scenario (load 0.2, seed 2) shows the violation: found before
    # the limit on any machine, which then stops the rest of the check
    result = check_policy(
        "lowest_salience", time_limit=0.5, seeds=(2, 3), placements=("after_append",)
    )
    assert result.timed_out
    assert result.verdict is Verdict.UNSAFE and result.reproduction is not None
    assert result.scenarios[0].scenario.name == "load 0.2, seed 2"
    assert result.scenarios[0].incidents  # the first scenario is where it was found


def test_each_scenario_is_capped_and_says_so() -> None:
    result = check_policy(
        "unit_safe",
        levels=(1.0,),
        seeds=(1,),
        max_examples=0,
        max_events=300,
        placements=("after_append",),
    )
    assert len(result.scenarios) == 2  # the load-1 scenario and its slow-call sibling
    assert all(r.capped and r.events <= 300 for r in result.scenarios)
    assert "[capped at" in result.summary()


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_bad_time_limit_is_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "unit_safe", "--time-limit", value]) == 2
    err = capsys.readouterr().err
    assert "--time-limit" in err and "positive number of seconds" in err
    assert "Traceback" not in err


def test_exit_statuses() -> None:
    assert [exit_status(v) for v in Verdict] == [0, 1, 2, 3]


@pytest.mark.slow
def test_the_growing_history_policy_gets_a_full_verdict_in_under_two_minutes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    started = time.monotonic()
    assert main(["check", GROWS]) == 1
    assert time.monotonic() - started < 120
    assert "UNSAFE" in capsys.readouterr().out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # wide enough for the whole line
    screen = _Terminal()
    check_policy(
        "unit_safe",
        levels=(0.2,),
        seeds=(1,),
        max_examples=10,
        placements=("before_invoke",),
        progress=progress_for(30.0, screen),
    )
    shown = screen.getvalue()
    assert "checks before_invoke: load 0.2, seed 1" in shown
    assert "adversarial search" in shown and "time limit in" in shown
    piped = io.StringIO()
    assert type(progress_for(None, piped)) is Progress
