"""The spill store shared by many guards: each guard owns its units (threads,
processes, asyncio), a check is atomic under every store fault, payloads
round-trip exactly or are refused."""

from __future__ import annotations

import asyncio
import json
import math
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from guard_loops import EventLoop

from prunecheck.guard import CommitGuard, GuardError, SpillStore, StoreError
from prunecheck.guard.errors import StoreFault
from prunecheck.guard.store import SpilledMessage, SpilledUnit
from prunecheck.model.policies import builtin_policy

LOOPS = Path(__file__).with_name("guard_loops.py")


def _event_guard(store: SpillStore | str, **kwargs: Any) -> CommitGuard:
    return CommitGuard(
        builtin_policy("unit_safe"), budget=400, hard_ceiling=500, store=store, **kwargs
    )


# ------------------------------------------------------------------ ownership
#: Steps each guard's loop takes: in make test's 100 each guard spills over
#: a hundred units and re-injects dozens (the checks' cost grows faster than
#: the steps: 300 cost about ten times the CPU); make test-all runs 300 too.
STEPS = [100, pytest.param(300, marks=pytest.mark.slow)]


@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("shared", ["one store object", "one file, a store each"])
def test_two_guards_on_one_store_in_two_threads_never_see_each_others_units(
    tmp_path: Path, shared: str, steps: int
) -> None:
    """The README's own example, twice: same file, same message and call ids."""
    path = str(tmp_path / "spill.db")
    common = SpillStore(path) if shared == "one store object" else None
    barrier = threading.Barrier(2)
    figures: dict[str, Counter[str]] = {}
    errors: list[BaseException] = []

    def run(tag: str, seed: int) -> None:
        try:
            guard = _event_guard(common if common is not None else SpillStore(path))
            loop = EventLoop(guard, tag, seed, big=450)
            barrier.wait(timeout=120)  # a thread that failed before it must not hang the other
            for _ in range(steps):
                loop.step()
            figures[tag] = loop.figures
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t, s)) for t, s in (("A", 1), ("B", 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for tag in ("A", "B"):  # both spilled and re-injected: the check had something to see
        assert figures[tag]["spilled"] > 20 and figures[tag]["reinjected"] > 5, figures[tag]
        assert figures[tag]["steps"] == steps
    assert len(SpillStore(path).conversations()) == 2


def test_two_stores_opening_a_new_file_at_once_both_open(tmp_path: Path) -> None:
    """Two threads opening a store on a new file meet in SQLite's switch to
    WAL, which answered "database is locked" at once (about one time in ten)
    instead of waiting its busy timeout; the store retries it now."""
    failures: list[BaseException] = []

    def open_store(path: Path) -> None:
        try:
            SpillStore(path).conversations()
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)

    for round_ in range(40):
        path = tmp_path / f"spill-{round_}.db"
        threads = [threading.Thread(target=open_store, args=(path,)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failures == []


@pytest.mark.parametrize("steps", STEPS)
def test_two_guards_on_one_store_file_in_two_processes_never_see_each_others_units(
    tmp_path: Path, steps: int
) -> None:
    db = str(tmp_path / "spill.db")
    children = [
        subprocess.Popen(
            [sys.executable, str(LOOPS), "event", db, tag, str(seed), str(steps)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag, seed in (("A", 1), ("B", 2))
    ]
    outs = [c.communicate(timeout=300) for c in children]
    for child, (out, err) in zip(children, outs, strict=True):
        assert child.returncode == 0, err
        lines = out.splitlines()
        assert lines[0] == "ready"
        figures = json.loads(lines[-1])
        assert figures["steps"] == steps and figures["spilled"] > 20
        assert figures["reinjected"] > 5
    store = SpillStore(db)
    assert len(store.conversations()) == 2
    for conversation in store.conversations():
        tags = {m.payload["tag"] for u in store.units(conversation) for m in u.messages}  # type: ignore[index]
        assert len(tags) == 1


def test_a_guard_resumes_its_own_conversation_and_no_other(tmp_path: Path) -> None:
    path = str(tmp_path / "spill.db")
    first = _event_guard(path, conversation="chat-1")
    loop = EventLoop(first, "chat-1", 3, big=450)
    for _ in range(60):
        loop.step()
    assert first.spilled
    again = _event_guard(path, conversation="chat-1")
    assert set(again.spilled) == set(first.spilled)
    assert _event_guard(path).spilled == ()  # a fresh conversation id: nothing of chat-1's


def test_await_to_thread_check_works_and_spills_from_a_worker_thread(tmp_path: Path) -> None:
    guard = _event_guard(str(tmp_path / "spill.db"))
    loop = EventLoop(guard, "A", 4, big=450)

    async def main() -> None:
        for _ in range(80):  # events in the loop's thread, every check in a worker thread
            loop.step_events()
            plan = await asyncio.to_thread(loop.check_plan)
            loop.apply(plan)
            loop.verify()

    asyncio.run(main())
    assert loop.figures["spilled"] > 0 and loop.figures["steps"] == 80


# ---------------------------------------------------------------- atomicity
def _scenario(store: SpillStore) -> tuple[CommitGuard, dict[str, int]]:
    """A check that must evict (the trimmer's one small unit) *and* spill:
    the case where the guard once counted 225 tokens while the runtime held 270."""

    def first_user(view: Any, need: int) -> list[str]:
        return [m.id for m in view.messages if m.id == "u1"]

    guard = CommitGuard(first_user, budget=100, hard_ceiling=150, store=store)
    held: dict[str, int] = {}

    def add(mid: str, tokens: int) -> None:
        held[mid] = tokens

    guard.message("s", "system", 5, {"role": "system"})
    add("s", 5)
    guard.message("u1", "user", 40, {"role": "user", "n": 1})
    add("u1", 40)
    guard.calls("m2", ["c1"], 10, {"role": "assistant", "n": 2}, resources=["a.txt"])
    add("m2", 10)
    guard.result_complete("c1", 60, "r1", {"role": "tool", "content": "x" * 20_000})
    add("r1", 60)
    guard.message("u3", "user", 45, {"role": "user", "n": 4})
    add("u3", 45)
    guard.stream_opened("a4", "assistant", 100, {"role": "assistant", "n": 5})
    add("a4", 100)
    return guard, held


def _agree(guard: CommitGuard, held: dict[str, int]) -> None:
    assert set(guard.tracker.ctx.ids()) == set(held)
    assert guard.used == sum(held.values())


def _fault(store: SpillStore, fault: str, tmp_path: Path) -> Any:
    """Inject ``fault``; return what undoes it."""
    if fault == "locked":
        other = sqlite3.connect(store.path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")

        def release() -> None:
            other.execute("ROLLBACK")
            other.close()

        return release
    with store._db() as db:
        if fault == "full":
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")
            return lambda: db.execute("PRAGMA max_page_count = 1073741823")
        assert fault == "read_only"
        db.execute("PRAGMA query_only = 1")
        return lambda: db.execute("PRAGMA query_only = 0")


@pytest.mark.parametrize("fault", ["locked", "full", "read_only"])
def test_a_spill_that_fails_leaves_the_guard_and_the_runtime_in_agreement(
    tmp_path: Path, fault: str
) -> None:
    store = SpillStore(tmp_path / "spill.db", timeout=0.05)
    for i in range(3):  # something already in the store, to see it is left alone
        store.put(SpilledUnit(f"old{i}", frozenset(), (SpilledMessage(f"old{i}", "user", 1, "x"),)))
    guard, held = _scenario(store)
    undo = _fault(store, fault, tmp_path)
    with pytest.raises(StoreError) as caught:
        guard.check()
    assert caught.value.fault is StoreFault(fault)
    assert "spill.db" in str(caught.value) and "Hint:" in str(caught.value)
    _agree(guard, held)  # nothing evicted, nothing spilled: the runtime keeps all it holds
    assert guard.used == 260 and guard.spilled == () and guard.stats.checks == 0
    undo()
    plan = guard.check()  # the fault is gone: the same check now goes through
    assert plan.evict == ("u1",) and plan.spill == ("m2", "r1") and plan.used == 150
    for mid in plan.remove:
        del held[mid]
    _agree(guard, held)
    assert [u.unit for u in store.units(guard.conversation)] == ["m2"]
    assert [u.unit for u in store.units()] == ["old0", "old1", "old2"]  # another conversation


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({1: "one"}, "the key 1"),
        ({"args": ("a", "b")}, "is a tuple"),
        ({"score": math.nan}, "nan"),
        ({"paths": {"a.txt"}}, "is a set"),
        ([object()], "is a object"),
    ],
)
def test_a_payload_json_would_change_is_refused_and_nothing_changes(
    payload: object, where: str
) -> None:
    guard, held = _scenario(SpillStore(":memory:"))
    guard.attach("r1", payload)
    with pytest.raises(StoreError, match=where) as caught:
        guard.check()
    assert caught.value.fault is StoreFault.UNENCODABLE and "'r1'" in str(caught.value)
    _agree(guard, held)
    assert guard.used == 260


def test_payloads_round_trip_exactly() -> None:
    payload = {
        "role": "tool",
        "content": [{"type": "text", "text": "é \ud83d half an emoji"}],
        "n": 10**30,
        "f": 0.1,
        "ok": True,
        "none": None,
        "nested": [[1, [2.5, {"k": []}]]],
    }
    store = SpillStore(":memory:")
    guard = CommitGuard(lambda v, n: [], budget=10, hard_ceiling=20, store=store)
    guard.calls("m1", ["c1"], 5, {"role": "assistant"}, resources=["a.txt"])
    guard.result_complete("c1", 10, "r1", payload)
    guard.message("u2", "user", 2)
    guard.calls("m3", ["c2"], 5, resources=["b.txt"])
    guard.result_chunk("c2", 10)
    assert guard.check().spill == ("m1", "r1")
    back = guard.calls("m4", ["c3"], 1, resources=["a.txt"])
    assert back[0].payloads[1] == payload
    assert type(back[0].payloads[1]["n"]) is int


def test_a_custom_codec_is_checked_by_round_trip() -> None:
    store = SpillStore(":memory:", encode=repr, decode=lambda text: text)  # not a codec
    guard, held = _scenario(store)
    with pytest.raises(StoreError, match="does not round-trip"):
        guard.check()
    _agree(guard, held)


def test_a_corrupted_store_file_is_a_store_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "spill.db"
    store = SpillStore(path)
    store.put(SpilledUnit("u", frozenset(), (SpilledMessage("u", "user", 1, "x" * 5000),)))
    store.close()
    path.write_bytes(b"garbage!" * 1000)
    with pytest.raises(StoreError) as caught:
        _event_guard(str(path))
    assert caught.value.fault is StoreFault.CORRUPT and str(path) in str(caught.value)
    assert isinstance(caught.value, GuardError)


def test_a_failed_delete_of_restored_units_is_retried_not_raised(tmp_path: Path) -> None:
    store = SpillStore(tmp_path / "spill.db", timeout=0.05)
    guard, _held = _scenario(store)
    plan = guard.check()
    assert plan.spill == ("m2", "r1")
    guard.stream_closed("a4")
    restored = guard.calls("m5", ["c5"], 1, resources=["a.txt"])
    assert [r.unit for r in restored] == ["m2"]
    undo = _fault(store, "locked", tmp_path)
    guard.result_complete("c5", 1)  # the event goes through; the delete waits
    assert guard.stats.store_retries == 1 and store.count(guard.conversation) == 1
    undo()
    guard.message("u6", "user", 1)  # the next call retries the delete
    assert store.count(guard.conversation) == 0 and guard.stats.store_retries == 1


def test_the_conversation_is_a_string() -> None:
    with pytest.raises(GuardError, match="conversation must be a non-empty string"):
        _event_guard(":memory:", conversation=7)
