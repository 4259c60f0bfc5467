"""The guard's soak: many guards on one store file, in threads and in
processes, long event-mode and list-mode loops, random SIGKILLs and
injected store faults (locked by another connection, full via
``PRAGMA max_page_count``, read-only via ``PRAGMA query_only``, corrupted
files).  After every step each loop checks (``guard_loops``) that its
conversation's units are exactly its own, that every spilled unit named
again comes back, and that guard and runtime agree; a failed store
operation must change nothing.  The figures are printed at the end
(``pytest -s -m slow tests/test_guard_soak.py``).

Seeded: the loops, the fault schedules, which children are killed and
when.  The interleaving of threads and processes is the machine's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from guard_loops import EventLoop, Faults, ListLoop, LoopFailure, keep_recent

from prunecheck.guard import CommitGuard, ListGuard, SpillStore, StoreError
from prunecheck.guard.errors import StoreFault
from prunecheck.model.policies import builtin_policy

LOOPS = Path(__file__).with_name("guard_loops.py")
SEED = 20261201


class _Locker(threading.Thread):
    """Holds the store file's write lock (BEGIN EXCLUSIVE from another
    connection) for 20–120 ms at a time, on a seeded schedule."""

    def __init__(self, path: str, seed: int) -> None:
        super().__init__(daemon=True)
        self.path, self.rng = path, random.Random(seed)
        self.stop = threading.Event()
        self.locks = 0

    def run(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=5)
        while not self.stop.wait(self.rng.uniform(0.05, 0.3)):
            try:
                db.execute("BEGIN EXCLUSIVE")
            except sqlite3.OperationalError:
                continue
            time.sleep(self.rng.uniform(0.02, 0.12))
            db.execute("ROLLBACK")
            self.locks += 1
        db.close()


def _threads(path: str, figures: Counter[str]) -> None:
    store = SpillStore(path, synchronous="NORMAL", timeout=0.05)  # one object, every thread
    errors: list[BaseException] = []
    totals: list[Counter[str]] = []

    def run(kind: str, tag: str, seed: int) -> None:
        try:
            faults = Faults(store, seed + 1, rate=0.02)
            if kind == "event":
                guard = CommitGuard(
                    builtin_policy("unit_safe"),
                    budget=400,
                    hard_ceiling=500,
                    store=store,
                    conversation=tag,
                )
                loop = EventLoop(guard, tag, seed, big=450)
                loop.faults = faults
                for _ in range(1500):
                    loop.step()
                counts = loop.figures
            else:
                lg = ListGuard(
                    keep_recent,
                    format="openai",
                    budget=1000,
                    hard_ceiling=2000,
                    store=store,
                    conversation=tag,
                )
                turns = ListLoop(lg, tag, seed, big=5000, resources=16)
                turns.faults = faults
                for _ in range(300):
                    turns.turn()
                counts = turns.figures
            counts.update({f"injected_{k}": v for k, v in faults.injected.items()})
            totals.append(counts)
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    locker = _Locker(path, SEED)
    locker.start()
    jobs = [("event", "TE1", 1), ("event", "TE2", 2), ("list", "TL1", 3), ("list", "TL2", 4)]
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    locker.stop.set()
    locker.join()
    if errors:
        raise errors[0]
    for counts in totals:
        figures.update(counts)
    figures["thread_loops"] += len(jobs)
    figures["injected_locked"] += locker.locks


#: Steps of a child doomed to be killed: more than it can take before its kill
#: (a drawn 0.3-3 s), so that the kill lands while it works however fast the
#: machine (600 steps took 1.1 s of a list loop: a fast machine finished some
#: before their kill, and the soak saw fewer kills than it asserts).
FOREVER = 10**7


def _processes(path: str, rounds: int, figures: Counter[str]) -> None:
    rng = random.Random(SEED)
    for r in range(rounds):
        jobs = [("event", f"P{r}E{i}") for i in range(3)] + [
            ("list", f"P{r}L{i}") for i in range(3)
        ]
        doomed = set(rng.sample(range(len(jobs)), 3))
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(LOOPS),
                    kind,
                    path,
                    tag,
                    str(rng.randrange(10**6)),
                    str(FOREVER if i in doomed else 600),  # a doomed one is at work when killed
                    "0.02",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i, (kind, tag) in enumerate(jobs)
        ]
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        delays = {i: rng.uniform(0.3, 3.0) for i in doomed}
        started = time.monotonic()
        for i in sorted(doomed, key=delays.__getitem__):
            time.sleep(max(0.0, delays[i] - (time.monotonic() - started)))
            children[i].send_signal(signal.SIGKILL)
        for i, ((kind, tag), child) in enumerate(zip(jobs, children, strict=True)):
            out, err = child.communicate(timeout=600)
            if i in doomed and child.returncode == -signal.SIGKILL:
                figures["kills"] += 1
                _resume(path, kind, tag, figures)
                continue
            assert child.returncode == 0, f"{tag}: {err}"
            figures.update(json.loads(out.splitlines()[-1]))
            figures["process_loops"] += 1


def _resume(path: str, kind: str, tag: str, figures: Counter[str]) -> None:
    """After a SIGKILL: a new guard on the conversation finds exactly its
    own units, each read back whole."""
    store = SpillStore(path)
    units = store.units(tag)
    for unit in units:
        for m in unit.messages:
            if tag not in json.dumps(m.payload):
                raise LoopFailure(f"{tag}: after a kill its store holds {m.payload!r}")
        figures["units_checked"] += 1
    if kind == "event":
        guard = CommitGuard(builtin_policy("unit_safe"), budget=400, store=store, conversation=tag)
        assert guard.spilled == tuple(u.unit for u in units)
    else:
        lg = ListGuard(keep_recent, format="openai", budget=1000, store=store, conversation=tag)
        assert lg.spilled == tuple(u.unit for u in units)
    figures["resumed"] += 1
    store.close()


def _corruptions(folder: Path, trials: int, figures: Counter[str]) -> None:
    """A store file damaged between runs: reopening it is a StoreError
    (corrupt, or a row that cannot be read back), or what it loads is the
    conversation's own units, exactly — never a silent foreign or garbled unit."""
    rng = random.Random(SEED + 7)
    for trial in range(trials):
        path = folder / f"corrupt{trial}.db"
        tag = f"K{trial}"
        store = SpillStore(path, synchronous="NORMAL")
        guard = CommitGuard(
            builtin_policy("unit_safe"), budget=400, hard_ceiling=500, store=store, conversation=tag
        )
        loop = EventLoop(guard, tag, trial, big=450)
        for _ in range(150):
            loop.step()
        store.close()
        size = path.stat().st_size
        with path.open("r+b") as f:
            if trial % 3 == 0:
                f.write(rng.randbytes(100))  # the header
            else:
                at = rng.randrange(4096, max(4097, size - 64))
                f.seek(at)
                f.write(rng.randbytes(rng.randint(16, 4096)))
        try:
            again = CommitGuard(
                builtin_policy("unit_safe"), budget=400, store=SpillStore(path), conversation=tag
            )
            units = again.store.units(tag) if again.store is not None else []
        except StoreError as exc:
            assert exc.fault in (StoreFault.CORRUPT, StoreFault.UNDECODABLE, StoreFault.IO), exc
            figures[f"fault_{exc.fault.value}"] += 1
            figures["injected_corrupt"] += 1
            continue
        for unit in units:  # not detected: then it must be intact
            for m in unit.messages:
                assert m.payload == loop.spilled_payloads.get(m.id, m.payload)
                assert isinstance(m.payload, dict) and m.payload.get("tag") == tag
            figures["units_checked"] += 1
        figures["injected_corrupt"] += 1
        figures["corrupt_undetected_intact"] += 1


@pytest.mark.slow
def test_soak_many_guards_one_store_kills_and_faults(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    figures: Counter[str] = Counter()
    started = time.monotonic()
    _threads(path, figures)
    _processes(path, rounds=3, figures=figures)
    _corruptions(tmp_path, trials=12, figures=figures)
    store = SpillStore(path)
    for conversation in store.conversations():  # every row of every conversation is its own
        for unit in store.units(conversation):
            for m in unit.messages:
                assert isinstance(m.payload, dict) and conversation in json.dumps(m.payload)
    faults = sum(v for k, v in figures.items() if k.startswith("fault_"))
    injected = sum(v for k, v in figures.items() if k.startswith("injected_"))
    surfaced = ", ".join(
        f"{k[6:]} {v}" for k, v in sorted(figures.items()) if k.startswith("fault_")
    )
    print(
        f"\nguard soak: {figures['thread_loops']} loops in threads, {figures['process_loops']} "
        f"in processes run to the end, {figures['kills']} SIGKILLed and resumed "
        f"({figures['resumed']}); {figures['steps']} steps; {injected} store faults injected "
        f"(locked {figures['injected_locked']}, full {figures['injected_full']}, read-only "
        f"{figures['injected_read_only']}, corrupt {figures['injected_corrupt']}), {faults} "
        f"surfaced as StoreError and changed nothing "
        f"({surfaced}); "
        f"{figures['spilled']} spills, {figures['reinjected']} re-injections checked, "
        f"{figures['respilled']} re-spilled at once (no room); "
        f"{figures['units_checked']} stored units checked; "
        f"{len(store.conversations())} conversations in the shared store; "
        f"{time.monotonic() - started:.0f} s"
    )
    assert figures["thread_loops"] == 4 and figures["kills"] == 9  # 3 doomed in each round
    assert figures["process_loops"] + figures["kills"] == 18
    assert figures["reinjected"] > 100 and figures["units_checked"] > 1000
    assert faults > 10  # the faults landed on writes
    assert figures["injected_corrupt"] == 12
    record = os.environ.get("PRUNECHECK_SOAK_FIGURES")
    if record:  # where to keep the figures, if asked
        Path(record).write_text(json.dumps(dict(figures), sort_keys=True), encoding="utf-8")
