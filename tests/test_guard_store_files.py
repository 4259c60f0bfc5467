"""The spill store's files hold conversation content: they are created
readable by their owner only (unless the store is told otherwise), and one
conversation's units can be deleted so that nothing of them stays in the
files."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from prunecheck.guard import CommitGuard, SpillStore
from prunecheck.guard.store import SpilledMessage, SpilledUnit

SECRET = "sk-live-do-not-keep-" * 20  # long: its row spills onto an overflow page


def _unit(name: str, text: str) -> SpilledUnit:
    return SpilledUnit(name, frozenset({"a.txt"}), (SpilledMessage(name, "tool", 10, text),))


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _files(folder: Path) -> dict[str, int]:
    return {p.name: _mode(p) for p in sorted(folder.iterdir()) if p.name.startswith("spill.db")}


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: any restriction is the store's own."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("open_umask")
def test_the_store_and_its_wal_and_shm_files_are_the_owner_s_only(tmp_path: Path) -> None:
    store = SpillStore(tmp_path / "spill.db")
    store.put(_unit("u1", SECRET), "chat-1")
    files = _files(tmp_path)  # the connection is open: SQLite's side files are there
    assert set(files) == {"spill.db", "spill.db-wal", "spill.db-shm"}
    assert set(files.values()) == {0o600}, {k: oct(v) for k, v in files.items()}
    store.close()


@pytest.mark.usefixtures("open_umask")
def test_a_rollback_journal_gets_the_database_s_mode_too(tmp_path: Path) -> None:
    """In another journal mode SQLite writes a ``-journal`` file: it takes the
    database file's mode, as the WAL files do."""
    path = tmp_path / "spill.db"
    SpillStore(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("BEGIN IMMEDIATE")
    db.execute("DELETE FROM spilled")
    db.execute("INSERT INTO spilled VALUES ('s', 'u', 1, '[]', '[]')")  # the journal is written
    assert _files(tmp_path) == {"spill.db": 0o600, "spill.db-journal": 0o600}
    db.execute("COMMIT")
    db.close()


@pytest.mark.usefixtures("open_umask")
def test_the_user_may_choose_the_mode_and_an_existing_file_keeps_its_own(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    store = SpillStore(shared / "spill.db", mode=0o640)
    store.put(_unit("u1", "x"))
    assert set(_files(shared).values()) == {0o640}
    store.close()
    existing = tmp_path / "spill.db"
    sqlite3.connect(existing).close()  # an empty database the user made
    os.chmod(existing, 0o644)
    SpillStore(existing).close()
    assert _mode(existing) == 0o644  # not the store's to change


def test_a_guard_given_a_path_creates_it_the_owner_s_only(tmp_path: Path) -> None:
    guard = CommitGuard(lambda view, need: [], budget=10, store=str(tmp_path / "spill.db"))
    assert _mode(tmp_path / "spill.db") & 0o077 == 0  # whatever the umask: no one else
    assert guard.store is not None
    guard.store.close()


def test_deleting_a_conversation_leaves_nothing_of_it_in_the_files(tmp_path: Path) -> None:
    path = tmp_path / "spill.db"
    store = SpillStore(path)
    store.put_many([_unit("u1", SECRET), _unit("u2", SECRET)], "chat-1")
    store.put(_unit("u9", "kept"), "chat-2")
    before = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() in before  # the check below could fail
    assert store.delete_conversation("chat-1") == 2
    assert store.conversations() == ["chat-2"] and store.count("chat-1") == 0
    assert [u.unit for u in store.units("chat-2")] == ["u9"]
    after = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"sk-live" not in after and b"kept" in after  # gone from the file and the WAL
    assert store.delete_conversation("chat-1") == 0  # twice: nothing left to delete
    store.close()


def test_a_live_guard_finds_its_deleted_units_gone_and_counts_them() -> None:
    store = SpillStore(":memory:")
    guard = CommitGuard(lambda view, need: [], budget=100, hard_ceiling=100, store=store)
    guard.message("m1", "user", 10)
    guard.calls("m2", ["c1"], 10, resources=["a.txt"])
    guard.result_complete("c1", 90)
    guard.message("m3", "user", 10)
    guard.calls("m4", ["c2"], 10)
    guard.result_chunk("c2", 5)  # pending: past the ceiling the guard can only spill
    assert guard.check().spill == ("m1", "m2", "result:c1")
    assert store.delete_conversation(guard.conversation) == 2
    assert guard.calls("m5", ["c3"], 1, resources=["a.txt"]) == ()  # nothing comes back
    assert guard.stats.lost == 1 and "m2" not in guard.spilled
