"""Nothing a caged policy or runtime forks outlives the command (issue 36):
each worker leads its own process group, and the group is stopped when the
worker is closed, times out, or its parent goes (a forked placement ends
with ``os._exit`` and closes nothing)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.cage import close_all

FORKS = Path(__file__).resolve().parent / "bad_policies" / "forks.py"
_TINY = ["--levels", "0.5", "--seeds", "1", "--max-examples", "2", "--horizon", "5", "--quiet"]


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _all_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 30  # generous: the kill is asserted by its effect
    while any(_running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


_PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


@_PROC
def test_a_worker_whose_parent_ends_without_closing_it_stops_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as a forked placement does: its process ends with os._exit, closing nothing
    from prunecheck.model.context import Context, Message, Role
    from prunecheck.model.policies import ContextView
    from prunecheck.sim.subjects.loader import load_policy

    monkeypatch.setenv("FORK_PIDS", str(tmp_path))
    close_all()
    pid = os.fork()
    if pid == 0:  # the child: start a worker, let its policy fork, end abruptly
        try:
            ctx = Context()
            ctx.append(Message("m1", Role.USER, 5, 1, 0.0, unit_id="m1"))
            view = ContextView(ctx, pending_calls=frozenset(), budget=1, now=0.0, turn=1)
            load_policy(f"{FORKS}:select").select(view, 1)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 1
    assert _all_gone(pids), pids


@pytest.mark.slow
@_PROC
@pytest.mark.parametrize(
    ("spec", "jobs"), [(f"{FORKS}:select", "2"), (f"runtime:{FORKS}:Runtime", "1")]
)
def test_what_a_policy_forks_does_not_outlive_the_command(
    spec: str, jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORK_PIDS", str(tmp_path))
    monkeypatch.setenv("PRUNECHECK_JOBS", jobs)  # 2: forked placements, closing nothing
    close_all()
    try:
        status = main(["check", spec, *_TINY])
    finally:
        close_all()  # what the command's own exit does (atexit); forks close nothing
    pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert status in (0, 1, 4) and pids
    assert _all_gone(pids), [p for p in pids if _running(p)]
