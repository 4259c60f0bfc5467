"""Output and the machine (issue 19, sim/support/outputs.py and the command
line): --out through a symlink, a full file system, a full standard output,
a deleted current folder, --jobs capped at the work, a relative --out that
user code cannot move, and a worker's children stopped with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.cli.app import main

BAD = Path(__file__).resolve().parent / "bad_policies"
SWEEP = [
    "recency",
    "--gate",
    "none",
    "--levels",
    "0.5",
    "--horizon",
    "5",
    "--jobs",
    "1",
]


def _prunecheck(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prunecheck", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _one_paragraph(err: str) -> str:
    assert "Traceback" not in err, err[-2000:]
    lines = [line for line in err.splitlines() if line.startswith("prunecheck")]
    assert len(lines) == 1, err[-2000:]
    return lines[0]


def test_sweep_writes_through_a_symlink_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "target.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert main(["sweep", "--out", str(link), *SWEEP, "--seeds", "1"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    rows = target.read_text(encoding="utf-8").splitlines()
    assert len(rows) == 1 and json.loads(rows[0])["policy"] == "recency"


def test_a_device_given_as_out_is_left_a_device() -> None:
    assert main(["sweep", "--out", "/dev/null", *SWEEP, "--seeds", "1"]) == 2
    assert Path("/dev/null").is_char_device()


def test_a_foreign_json_lines_file_is_refused_and_kept(tmp_path: Path) -> None:
    other = tmp_path / "log.jsonl"
    text = '{"level": "info", "msg": "not ours"}\n' * 5
    other.write_text(text, encoding="utf-8")
    assert main(["sweep", "--out", str(other), *SWEEP, "--seeds", "1"]) == 2
    assert other.read_text(encoding="utf-8") == text


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (skipped where mounting is not permitted)."""
    where = tmp_path / "small"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')[:200]}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def test_a_full_file_system_keeps_finished_runs_and_no_temporary_file(small_fs: Path) -> None:
    out = small_fs / "r.jsonl"
    assert main(["sweep", "--out", str(out), *SWEEP, "--seeds", "1"]) == 0  # in process: setup
    kept = out.read_text(encoding="utf-8")
    filler = os.open(small_fs / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the file system to the brim
        while os.write(filler, b"\0" * 1024):
            pass
    except OSError:
        pass
    finally:
        os.close(filler)
    done = _prunecheck("sweep", "--out", str(out), *SWEEP, "--seeds", "4")
    assert done.returncode == 2, (done.stdout, done.stderr)
    paragraph = _one_paragraph(done.stderr)
    assert "file system is full" in paragraph and "finished runs are kept" in paragraph
    assert out.read_text(encoding="utf-8").startswith(kept)  # finished work kept
    assert not [p.name for p in small_fs.iterdir() if p.name.endswith(".tmp")]


def test_a_full_standard_output_is_one_paragraph() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "prunecheck", "policies"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2
    assert "standard output" in _one_paragraph(done.stderr)


def test_a_deleted_current_folder_is_a_clear_error(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]);"
        "from prunecheck.sim.cli.app import main; sys.exit(main(['policies']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(gone)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "current folder no longer exists" in _one_paragraph(done.stderr)


def test_jobs_is_capped_at_the_runs_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ProcessPoolExecutor

    from prunecheck.sim.sweeps import sweep

    started: list[int] = []

    def pool(max_workers: int, **kw: Any) -> ProcessPoolExecutor:
        started.append(max_workers)
        return ProcessPoolExecutor(max_workers=max_workers, **kw)

    monkeypatch.setattr(sweep, "ProcessPoolExecutor", pool)
    argv = ["sweep", "--out", str(tmp_path / "r.jsonl"), "recency", "--gate", "none"]
    argv += ["--levels", "0.5,1", "--seeds", "2", "--horizon", "5", "--jobs", "10000"]
    assert main(argv) == 0
    assert started == [4]  # 2 levels x 2 seeds: four runs, four workers


def test_a_relative_out_stays_where_it_was_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cage off, a policy changes the current folder: the bundle
    still goes where --out said when the command started."""
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")
    monkeypatch.chdir(tmp_path)
    try:
        status = main(["search", f"{BAD}/odd.py:changes_directory", "--out", "here"])
    finally:
        os.chdir(tmp_path)
    assert status == 1
    assert (tmp_path / "here" / "trace.json").is_file()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:  # a zombie is gone too
        return f.read().split()[2] != "Z"


@pytest.mark.parametrize(
    "argv",
    [
        ["search", f"{BAD}/odd.py:forks", "--max-examples", "3"],
        [
            "search",
            f"runtime:{BAD.parent}/bad_runtimes/runtimes.py:Forks",
            "--max-examples",
            "3",
            "--policy-timeout",
            "0.5",  # it hangs after forking: the watchdog stops it
        ],
    ],
    ids=["policy", "runtime"],
)
def test_what_a_worker_starts_does_not_outlive_it(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In process: the worker is a process of its own either way, and it is
    prunecheck's handling of its end that stops what it started."""
    from prunecheck.sim.subjects.cage import close_all

    mark = tmp_path / "child.pid"
    monkeypatch.setenv("FORK_MARK", str(mark))
    close_all()  # the worker starts anew, with this FORK_MARK
    status = main(argv)
    err = capsys.readouterr().err
    close_all()
    assert status == 2, err
    _one_paragraph(err)
    pid = int(mark.read_text(encoding="utf-8"))
    for _ in range(300):  # the kill is immediate; give a loaded kernel a moment to reap
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid), f"the child {pid} outlived its worker"
