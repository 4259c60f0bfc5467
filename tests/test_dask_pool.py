"""Sweeps on Dask (prunecheck.sim.sweeps.dask_pool): the same results file as the
local pool, a user's policy on workers that cannot see it, and a worker
killed mid-sweep losing nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.sim.cli.app import main
from prunecheck.sim.sweeps import dask_pool
from prunecheck.sim.sweeps.dask_pool import ShippedPolicy, _task, parse_scheduler
from prunecheck.sim.sweeps.runs import Row, RunSpec
from prunecheck.sim.sweeps.sweep import configs, plan, read_rows, run_sweep

# Installed or not, without importing it at collection (~0.5 s in every xdist worker).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="needs the dask extra"
)

HORIZON = 60.0
POLICY = """
def evict_oldest(view, need):
    return [m.id for m in view.messages if m.role != "system"][:1]
"""


def _specs(
    policy: str, seeds: int = 2, levels: tuple[float, ...] = (0.5, 1.0), horizon: float = HORIZON
) -> list[RunSpec]:
    runtime = configs(RuntimeConfig(), gates=(Gate.NONE, Gate.COMMIT))
    return plan(
        ["recency", policy], runtime, list(levels), list(range(1, seeds + 1)), horizon=horizon
    )


def _user_rows_ran(path: Path, policy: str) -> None:
    rows = [r for r in read_rows(path).values() if r.spec.policy == policy]
    assert rows and all(r.error is None and r.invocations > 0 for r in rows)


@pytest.mark.integration
def test_local_cluster_writes_the_process_pools_file_with_a_policy_it_cannot_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy_file = tmp_path / "mine.py"
    policy_file.write_text(POLICY)
    policy = f"{policy_file}:evict_oldest"
    specs = _specs(policy)
    pool = run_sweep(specs, tmp_path / "pool.jsonl", jobs=2, quiet=True)

    real_ship = dask_pool.ship_policies

    def ship_then_delete(todo: list[RunSpec]) -> dict[str, ShippedPolicy]:
        shipped = real_ship(todo)
        policy_file.unlink()  # no worker can read it by its path any more
        return shipped

    monkeypatch.setattr(dask_pool, "ship_policies", ship_then_delete)
    dask = run_sweep(
        list(reversed(specs)), tmp_path / "dask.jsonl", jobs=2, quiet=True, scheduler="local"
    )
    assert not policy_file.exists()
    assert (dask.ran, dask.reused) == (len(specs), 0)
    assert dask.rows == pool.rows
    assert (tmp_path / "dask.jsonl").read_bytes() == (tmp_path / "pool.jsonl").read_bytes()
    _user_rows_ran(tmp_path / "dask.jsonl", policy)


def test_a_shipped_policy_runs_from_its_digest_folder(tmp_path: Path) -> None:
    source = POLICY.encode()
    shipped = ShippedPolicy("gone/mine.py", "mine.py", "ab" * 32, source)
    spec = _specs("gone/mine.py:evict_oldest", seeds=1, levels=(1.0,))[-1]
    row = _task(spec, spec.key, 5.0, shipped)
    assert row.error is None and row.invocations > 0
    assert row.spec == spec and row.key == spec.key
    # Without the source the worker cannot load it, and says which file.
    bare = _task(spec, spec.key, 5.0, None)
    assert bare.error is not None and "gone/mine.py" in bare.error
    # An error inside a shipped policy names the user's file, not the copy.
    broken = ShippedPolicy("gone/bad.py", "bad.py", "cd" * 32, b"raise ValueError('x')\n")
    failed = _task(spec, spec.key, 5.0, broken)
    assert failed.error is not None and "gone/bad.py" in failed.error
    assert "prunecheck-policies" not in failed.error


@pytest.mark.parametrize(
    "value", ["foo", "tcp://:80", "tcp://host", "tcp://h:0", "http://h:8786", "tcp://h:99999"]
)
def test_bad_scheduler_values_exit_2(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "sweep",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--policy",
            "recency",
            "--gate",
            "none",
            "--levels",
            "0.5",
            "--seeds",
            "1",
            "--quiet",
            "--scheduler",
            value,
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "--scheduler" in err and "Traceback" not in err
    assert "tcp://HOST:PORT" in err


@pytest.mark.integration
def test_cli_sweep_on_a_local_cluster_matches_jobs_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = [
        "--policy",
        "recency",
        "--gate",
        "none,commit",
        "--levels",
        "1",
        "--seeds",
        "2",
        "--horizon",
        "60",
        "--jobs",
        "2",
        "--quiet",
    ]
    assert main(["sweep", "--out", str(tmp_path / "pool.jsonl"), *common]) == 0
    pool_table = capsys.readouterr().out
    assert (
        main(["sweep", "--out", str(tmp_path / "dask.jsonl"), *common, "--scheduler", "local"]) == 0
    )
    assert capsys.readouterr().out == pool_table
    assert (tmp_path / "dask.jsonl").read_bytes() == (tmp_path / "pool.jsonl").read_bytes()


def test_an_unreachable_scheduler_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(dask_pool, "CONNECT_TIMEOUT", 0.2)  # nothing listens: refused at once
    status = main(
        [
            "sweep",
            "--out",
            str(tmp_path / "r.jsonl"),
            "--policy",
            "recency",
            "--gate",
            "none",
            "--levels",
            "0.5",
            "--seeds",
            "1",
            "--quiet",
            "--scheduler",
            "tcp://127.0.0.1:9",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "cannot reach a Dask scheduler at tcp://127.0.0.1:9" in err
    assert "dask scheduler" in err and "Traceback" not in err


def test_good_scheduler_values_pass() -> None:
    assert parse_scheduler(None) is None
    assert parse_scheduler("local") == "local"
    assert parse_scheduler("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"


def test_report_takes_scheduler(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        ["report", "--out", str(tmp_path / "r"), "--quick", "--quiet", "--scheduler", "nope"]
    )
    assert status == 2 and "--scheduler" in capsys.readouterr().err


# ------------------------------------------------ a cluster of separate processes
def _dask(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).with_name("dask")
    return subprocess.Popen(
        [str(exe), *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _wait_for(path: Path, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() or not path.read_text().strip():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} did not appear within {seconds:g} s")
        time.sleep(0.2)


@pytest.mark.integration
def test_a_scheduler_and_two_workers_lose_nothing_when_one_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from distributed import Client

    # The client works in its own folder with a relative policy path; the
    # workers run elsewhere, so they never see the file by that path.
    client_dir, worker_dir = tmp_path / "client", tmp_path / "workers"
    client_dir.mkdir()
    worker_dir.mkdir()
    (client_dir / "mine.py").write_text(POLICY)
    monkeypatch.chdir(client_dir)
    policy = "mine.py:evict_oldest"
    # Runs long enough (~0.1-0.5 s) that the workers still hold work when the
    # client has handled a third of the rows, even on a loaded machine.
    specs = _specs(policy, seeds=3, levels=(0.75, 1.0), horizon=300.0)
    run_sweep(specs, client_dir / "pool.jsonl", jobs=2, quiet=True)

    address_file = tmp_path / "scheduler.json"
    common = ("--no-dashboard", "--host", "127.0.0.1")
    scheduler = _dask(
        "scheduler", "--scheduler-file", str(address_file), "--port", "0", *common, cwd=worker_dir
    )
    workers: list[subprocess.Popen[bytes]] = []
    try:
        _wait_for(address_file)
        workers = [
            _dask(
                "worker",
                "--scheduler-file",
                str(address_file),
                "--nthreads",
                "1",
                "--no-nanny",
                *common,
                cwd=worker_dir,
            )
            for _ in range(2)
        ]
        address = json.loads(address_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        with Client(address, timeout=30) as probe:
            probe.wait_for_workers(2, timeout=60)
            pids = probe.run(os.getpid)  # worker address -> its process id
            victim = next(a for a, pid in pids.items() if pid == workers[0].pid)
            seen: list[Row] = []
            lost: list[str] = []  # runs the victim held when it was killed

            def kill_midway(row: Row) -> None:
                seen.append(row)
                if len(seen) >= len(specs) // 3 and not lost and workers[0].poll() is None:
                    held = probe.processing([victim]).get(victim, ())
                    if held:  # kill it while it holds work, not between runs
                        lost.extend(str(k) for k in held)
                        workers[0].kill()
                        workers[0].wait(10)

            outcome = run_sweep(
                specs, client_dir / "dask.jsonl", quiet=True, on_row=kill_midway, scheduler=address
            )
        assert workers[0].returncode is not None and workers[1].poll() is None
        assert lost and all(k.startswith("prunecheck-run-") for k in lost)
        rows = read_rows(client_dir / "dask.jsonl")
        assert all(k.removeprefix("prunecheck-run-") in rows for k in lost)
        assert (outcome.ran, outcome.reused) == (len(specs), 0)
        assert sorted(r.key for r in seen) == sorted(s.key for s in specs)  # each once
        assert (client_dir / "dask.jsonl").read_bytes() == (client_dir / "pool.jsonl").read_bytes()
        _user_rows_ran(client_dir / "dask.jsonl", policy)
    finally:
        for proc in [*workers, scheduler]:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    assert os.getcwd() == str(client_dir)


@pytest.mark.integration
def test_a_time_limit_on_dask_keeps_what_finished(tmp_path: Path) -> None:
    specs = plan(
        ["lowest_salience"],
        configs(RuntimeConfig(), gates=(Gate.NONE, Gate.COMMIT)),
        [1.0],
        list(range(1, 61)),
        horizon=600.0,
    )
    out = tmp_path / "dask.jsonl"
    outcome = run_sweep(specs, out, jobs=2, quiet=True, scheduler="local", time_limit=0.5)
    assert not outcome.complete and outcome.skipped == len(specs) - len(outcome.rows)
    assert len(read_rows(out)) == len(outcome.rows) == outcome.ran
