"""A process killed at any moment loses no spilled unit.

A child runtime (``guard_kill_child.py``) spills through CommitGuard into
SQLite (WAL) and journals its context; the test SIGKILLs it at a random
moment, then checks that every message the runtime ever held is still in
its context or in the spill store, with the payload it had.  The trimmer
never evicts, so every message that left the context was spilled.

The check is not vacuous: the same child with ``--broken`` (a guard that
commits a spilled unit only after the runtime removed it) loses units.

A kill's moment is counted in the child's work (records in its journal),
not in seconds: on a loaded machine the child does less in a second, and a
kill after a fixed delay would land before the spills the test needs.  The
``--broken`` child is killed inside its late-commit window (after it
journaled a spilling removal, before it commits), which it holds open for
a while, so even a slow parent lands there.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prunecheck.guard import SpillStore

CHILD = Path(__file__).with_name("guard_kill_child.py")


def _spills(line: str) -> bool:
    """Whether a journal line is a removal that spilled something."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return False
    return bool(record.get("op") == "remove" and record.get("spill"))


def _wait_for_work(
    child: subprocess.Popen[str], journal: Path, records: int, in_window: bool
) -> None:
    """Return once the child journaled ``records`` records (and, with
    ``in_window``, its newest record is a spilling removal and it has not
    written another one: the ``--broken`` child's late-commit window)."""
    seen, tail = 0, ""
    give_up = time.monotonic() + 120  # only a child that stopped working gets here
    with journal.open(encoding="utf-8") as f:
        while time.monotonic() < give_up and child.poll() is None:
            chunk = f.read()
            if not chunk:
                time.sleep(0.001)
                continue
            *lines, tail = (tail + chunk).split("\n")
            seen += len(lines)
            if seen >= records and (not in_window or (not tail and lines and _spills(lines[-1]))):
                return
    raise AssertionError(f"the child journaled {seen} records and stopped (wanted {records})")


def _kill_once(
    folder: Path, seed: int, records: int, broken: bool = False
) -> tuple[set[str], int, int]:
    """Run the child, SIGKILL it once it journaled ``records`` records (the
    ``--broken`` one: at its next late commit); return (lost ids, spilled
    messages seen in the journal, re-injections seen)."""
    db, journal = folder / "spill.db", folder / "journal.jsonl"
    args = [sys.executable, str(CHILD), str(db), str(journal), str(seed)]
    child = subprocess.Popen(
        [*args, *(["--broken"] if broken else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        _wait_for_work(child, journal, records, in_window=broken)
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()  # a no-op after the kill above; ends the child if an assertion failed
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.read() if child.stderr else ""
    context: dict[str, str] = {}
    ever: dict[str, str] = {}
    spilled = restores = 0
    for line in journal.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by the kill
        if record["op"] == "add":
            context[record["id"]] = ever[record["id"]] = record["payload"]
        elif record["op"] == "remove":
            spilled += len(record["spill"])
            for mid in record["ids"]:
                context.pop(mid, None)
        else:
            restores += 1
            for mid, payload in zip(record["ids"], record["payloads"], strict=True):
                context[mid] = payload
    store = SpillStore(db, session="kill")
    stored = {m.id: json.dumps(m.payload) for u in store.units() for m in u.messages}
    store.close()
    lost = {mid for mid in ever if mid not in context and mid not in stored}
    changed = {
        mid
        for mid, payload in stored.items()
        if json.loads(payload) != json.loads(ever.get(mid, payload))
    }
    return lost | changed, spilled, restores


def _kills(
    tmp_path: Path, count: int, seed: int, broken: bool = False, *, until_lost: bool = False
) -> tuple[int, int, int, int]:
    """Kill ``count`` children (the ``seed``'s moments, 10 to 300 journal
    records in, about 0.01 to 0.4 s of an idle core's work); with ``until_lost``,
    stop after the first kill that lost a unit.  Returns (kills that lost a
    unit, messages spilled, re-injections, kills made)."""
    rng = random.Random(seed)
    lost_runs = spilled = restores = made = 0
    for i in range(count):
        folder = tmp_path / f"kill{i}"
        folder.mkdir()
        lost, s, r = _kill_once(folder, rng.randrange(10**6), rng.randint(10, 300), broken)
        lost_runs += bool(lost)
        spilled += s
        restores += r
        made += 1
        if until_lost and lost:
            break
    return lost_runs, spilled, restores, made


@pytest.mark.parametrize(
    "kills",
    [5, pytest.param(20, marks=pytest.mark.slow)],  # 200 kills: below, make test-all
    ids=lambda n: f"{n}-kills",
)
def test_kills_lose_no_unit(tmp_path: Path, kills: int) -> None:
    lost_runs, spilled, restores, count = _kills(tmp_path, kills, seed=1)
    assert count == kills and lost_runs == 0
    assert spilled > 100 and restores > 10  # the kills landed among spills and restores


def test_the_check_catches_a_guard_that_commits_after_removal(tmp_path: Path) -> None:
    # at least one of 12 kills loses a unit: the kills after the first that did add nothing
    lost_runs, spilled, _, _count = _kills(tmp_path, 12, seed=2, broken=True, until_lost=True)
    assert spilled > 0 and lost_runs >= 1


@pytest.mark.slow
def test_two_hundred_kills_lose_no_unit(tmp_path: Path) -> None:
    lost_runs, spilled, restores, count = _kills(tmp_path, 200, seed=3)
    print(
        f"{count} kills: {lost_runs} lost a unit; {spilled} messages spilled, "
        f"{restores} re-injections journaled before the kills"
    )
    assert count == 200 and lost_runs == 0 and spilled > 1000
