"""Tests of ``prunecheck sweep`` (prunecheck.sim.cli.sweep)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main

GRID = ["--gate", "none,commit", "--levels", "0.5,1", "--seeds", "2", "--horizon", "60", "--quiet"]

OLDEST_FIRST = """
def select(view, need):
    out, freed = [], 0
    for m in view.messages:
        if m.role != "system" and freed < need:
            out.append(m.id)
            freed += m.tokens
    return out
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["sweep", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_sweep_prints_rates_next_to_user_policies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text(OLDEST_FIRST)
    out_file = tmp_path / "runs.jsonl"
    status, out, err = run(
        capsys,
        "--out",
        str(out_file),
        "--policy",
        f"{mine}:select",
        "--policy",
        "recency",
        "--jobs",
        "1",
        *GRID,
    )
    assert status == 0
    assert "16 runs (16 run now, 0 reused)" in err
    header, _rule, *rows = out.splitlines()
    assert header.split()[:7] == [
        "policy",
        "gate",
        "check_at",
        "retry",
        "runs",
        "sessions",
        "invocations",
    ]
    table = rows[: next(i for i, line in enumerate(rows) if line.startswith("unit: sessions"))]
    policies = {line.split()[0] for line in table}
    assert {f"{mine}:select", "recency"} <= policies
    commit = next(line for line in table if line.startswith("recency") and " commit " in line)
    sessions = int(commit.split()[5])
    assert f"0 of {sessions} [0–" in commit  # no violation, with its upper bound
    assert commit.split()[-2:] == ["reached", "0"]  # median "not reached", no errors
    stored = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert (
        sum(
            len(r["sessions"])
            for r in stored
            if r["policy"] == "recency" and r["config"]["gate"] == "commit"
        )
        == sessions
    )
    assert len(out_file.read_text().splitlines()) == 16
    status, _, err = run(
        capsys,
        "--out",
        str(out_file),
        "--policy",
        f"{mine}:select",
        "--policy",
        "recency",
        "--jobs",
        "1",
        *GRID,
    )
    assert status == 0 and "(0 run now, 16 reused)" in err


SLOW = """
import time

def select(view, need):
    time.sleep(0.01)  # a slow policy: every run (~0.4 s) takes well over the limits below
    return [m.id for m in view.messages if m.role == "tool"][:1]
"""


def test_a_time_limit_stops_with_the_finished_runs_and_exit_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    out_file = tmp_path / "runs.jsonl"
    argv = [
        "--out",
        str(out_file),
        "--policy",
        f"{slow}:select",
        "--gate",
        "none",
        "--levels",
        "1",
        "--seeds",
        "3",
        "--horizon",
        "120",
        "--quiet",
    ]
    status, out, err = run(capsys, *argv, "--jobs", "1", "--time-limit", "0.2")
    assert status == 3
    assert "out of time (--time-limit 0.2 s)" in err and "1 of 3 runs finished" in err
    assert len(out_file.read_text().splitlines()) == 1  # the finished run is kept ...
    assert "unit: sessions" in out and "slow.py:select" in out  # ... and reported
    status, _, err = run(capsys, *argv, "--jobs", "1")
    assert status == 0 and "(2 run now, 1 reused)" in err


def test_a_time_limit_in_parallel_keeps_what_finished(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    out_file = tmp_path / "runs.jsonl"
    status, _, err = run(
        capsys,
        "--out",
        str(out_file),
        "--policy",
        f"{slow}:select",
        "--gate",
        "none",
        "--levels",
        "1",
        "--seeds",
        "12",
        "--horizon",
        "120",
        "--quiet",
        "--jobs",
        "2",
        "--time-limit",
        "0.2",
    )
    assert status == 3 and "of 12 runs finished" in err
    finished = int(err.split("out of time (--time-limit 0.2 s): ")[1].split()[0])
    # the runs in flight at the limit finish and are kept; nothing new starts
    assert 1 <= finished <= 4
    assert len(out_file.read_text().splitlines()) == finished


def test_policy_errors_are_listed_and_the_sweep_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def select(view, need):\n    return {'m1': 1}\n")
    status, out, err = run(
        capsys,
        "--out",
        str(tmp_path / "r.jsonl"),
        "--policy",
        f"{bad}:select",
        "--budget",
        "250",
        "--hard-ceiling",
        "400",
        "--jobs",
        "1",
        *GRID,
    )
    assert status == 2  # a policy error is never a verdict; the finished runs are kept
    assert "ended in a policy error" in err and "finished run(s) are saved in" in err
    failed = [line for line in out.splitlines() if line.startswith("policy error in ")]
    stored = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(failed) == sum(1 for r in stored if r["error"]) >= 4
    assert all(r["error"] for r in stored if r["config"]["gate"] == "none")
    assert all(
        "must return an iterable of message ids or actions, got dict" in line for line in failed
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--levels", "0.5,2"], "--levels: load levels must be in [0, 1]"),
        (["--levels", "half"], "--levels: 'half' is not a valid value."),
        (["--gate", "none,strict"], "--gate.gate: must be one of none, reference, commit, spill"),
        (["no_such_policy"], "policy spec 'no_such_policy'"),
        (["--seeds", "0"], "--seeds: must be a whole number of at least 1"),
        (["--time-limit", "0"], "--time-limit: must be a positive number of seconds"),
        (["--hard-ceiling", "10"], "hard_ceiling: (10) must be at least the budget"),
    ],
)
def test_bad_input_is_one_paragraph_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, "--out", str(tmp_path / "r.jsonl"), *argv)
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.jsonl").exists()


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "prunecheck sweep --out sweep.jsonl" in out


def test_a_sweep_killed_halfway_reuses_its_finished_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "runs.jsonl"
    argv = [
        sys.executable,
        "-m",
        "prunecheck",
        "sweep",
        "--out",
        str(out_file),
        "--policy",
        "lowest_salience",
        "--policy",
        "recency",
        "--gate",
        "none,commit,spill",
        "--levels",
        "0.25,0.5,0.75,1",
        "--seeds",
        "2",
        "--horizon",
        "200",
        "--jobs",
        "1",
        "--quiet",
    ]
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out_file.exists() and len(out_file.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len([line for line in out_file.read_text().splitlines() if line.endswith("}")])
    assert 5 <= done < 48
    capsys.readouterr()
    assert main(argv[3:]) == 0  # the rerun in process: what it reuses is the point
    assert f"({48 - done} run now, {done} reused)" in capsys.readouterr().err
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert len(rows) == 48 and [r["key"] for r in rows] == sorted(r["key"] for r in rows)
