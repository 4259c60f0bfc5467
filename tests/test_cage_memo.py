"""The cage's answer memo never changes what a policy is asked (issue 36):
a policy that keeps state between calls is asked every question its runtime
asks; a pure one is still answered from memory."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from prunecheck.model.context import Context, Message, Role
from prunecheck.model.policies import ContextView
from prunecheck.sim.subjects import cage
from prunecheck.sim.subjects.cage import CagedPolicy, Worker, close_all
from prunecheck.sim.subjects.cage_state import StateProbe
from prunecheck.sim.subjects.loader import load_policy

POLICIES = Path(__file__).resolve().parent / "policies"
STATEFUL = POLICIES / "stateful.py"


def _view() -> ContextView:
    ctx = Context()
    ctx.append(Message("m1", Role.SYSTEM, 5, 0, 0.0, unit_id="m1"))
    ctx.append(Message("m2", Role.USER, 90, 1, 1.0, unit_id="m2"))
    return ContextView(ctx, pending_calls=frozenset(), budget=10, now=2.0, turn=1)


@pytest.mark.parametrize(
    "attr", ["alternating", pytest.param("Drifting", marks=pytest.mark.slow), "Hidden"]
)
def test_a_stateful_policy_is_asked_every_question_its_runtime_asks(
    attr: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each of these frees m2 on every second call only: answered from memory,
    # the same question would get the first answer again and again.
    # ("Hidden" keeps its counter where the worker's snapshot does not look;
    # the memo's first answers are asked again, and the second differs.)
    monkeypatch.delenv("PRUNECHECK_TEST_HIDDEN_CALLS", raising=False)
    close_all()
    policy = load_policy(f"{STATEFUL}:{attr}")
    assert isinstance(policy, CagedPolicy)
    try:
        answers = [list(policy.select(_view(), 85)) for _ in range(6)]
    finally:
        close_all()
    assert answers == [[], ["m2"]] * 3


def test_a_pure_policy_is_answered_from_memory_once_its_answers_were_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    close_all()
    sent: list[int] = []
    send = Worker.send

    def counting(self: Worker, data: bytes) -> None:
        sent.append(1)
        send(self, data)

    monkeypatch.setattr(Worker, "send", counting)
    monkeypatch.setattr(cage, "VERIFY_HITS", 3)
    policy = load_policy(f"{POLICIES}/regress_correct.py:select")
    assert isinstance(policy, CagedPolicy)
    before = len(sent)
    try:
        answers = [list(policy.select(_view(), 85)) for _ in range(10)]
    finally:
        close_all()
    assert answers == [answers[0]] * 10
    assert len(sent) - before == 1 + 3  # asked once, then three answers from memory checked


def test_state_that_cannot_be_snapshot_is_not_proven_pure() -> None:
    def endless() -> Iterator[int]:
        yield from range(10**9)

    draws = endless()  # a generator cannot be pickled: its position is hidden

    def select(view: object, need: int) -> list[str]:
        return [str(next(draws))]

    probe = StateProbe(select, [])
    assert probe.changed()  # unprovable, so: stateful


def test_a_snapshot_sees_a_random_draw_and_an_attribute() -> None:
    import random

    class Policy:
        def __init__(self) -> None:
            self.seen = 0

    policy = Policy()
    probe = StateProbe(policy, [])
    assert not probe.changed()
    random.random()
    assert probe.changed()
    assert not probe.changed()
    policy.seen += 1
    assert probe.changed()


def _search(spec: str, monkeypatch: pytest.MonkeyPatch, caged: bool) -> tuple[int, str, str]:
    from prunecheck.sim.cli.app import main

    monkeypatch.setenv("PRUNECHECK_CAGE", "1" if caged else "0")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["search", spec, "--max-examples", "30", "--seed", "1", "--json"])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_a_stateful_policys_verdict_is_its_runtimes(monkeypatch: pytest.MonkeyPatch) -> None:
    # LateBug turns buggy after 40 calls: the search, asking it as its
    # runtime would, sees it answer one question two ways (exit 2, as in
    # process); answered from memory it looked safe (exit 0).
    close_all()
    try:
        caged = _search(f"{STATEFUL}:LateBug", monkeypatch, caged=True)
    finally:
        close_all()
    plain = _search(f"{STATEFUL}:LateBug", monkeypatch, caged=False)
    assert caged[0] == plain[0] == 2, (caged, plain)
    assert caged[1] == plain[1] == ""
    assert "gave different answers to the same question" in caged[2]
    assert caged[2].splitlines()[-1] == plain[2].splitlines()[-1]


def _live_workers() -> int:
    """This process's live cage workers, counted in /proc."""
    import os

    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and stat[0] != "Z" and b"cage_worker" in cmd:
            count += 1
    return count


_PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="counts in /proc")


@_PROC
def test_an_edited_policy_files_old_worker_is_closed(tmp_path: Path) -> None:
    close_all()
    edited = tmp_path / "edited.py"
    try:
        for k in range(2):
            edited.write_text(f"def select(view, need):\n    return []  # edit {k}\n")
            policy = load_policy(f"{edited}:select")
            assert list(policy.select(_view(), 85)) == []
            assert _live_workers() == 1
    finally:
        close_all()
    assert _live_workers() == 0


@pytest.mark.slow
@_PROC
def test_workers_do_not_pile_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a policy file edited in a long-lived process: its old worker is closed;
    # and no more than MAX_WORKERS policy workers live at once
    close_all()
    monkeypatch.setattr(cage, "MAX_WORKERS", 2)
    edited = tmp_path / "edited.py"
    try:
        for k in range(3):
            edited.write_text(f"def select(view, need):\n    return []  # edit {k}\n")
            policy = load_policy(f"{edited}:select")
            assert list(policy.select(_view(), 85)) == []
            assert _live_workers() == 1
        for k in range(2):
            other = tmp_path / f"other{k}.py"
            other.write_text("def select(view, need):\n    return []\n")
            load_policy(f"{other}:select").select(_view(), 85)
        assert _live_workers() == 2
        assert list(policy.select(_view(), 85)) == []  # closed, it starts again
        assert _live_workers() == 2
    finally:
        close_all()
    assert _live_workers() == 0
