"""The spill store: closed units moved out of the context, in SQLite.

A unit is committed to the store *before* the guard tells the runtime to
remove it from the context, and deleted from the store only *after* the
runtime has put it back (the guard's next call), so a process killed at any
moment loses no unit: each spilled unit is in the store, in the context, or
in both.

One store serves many guards.  Every row is keyed by the **conversation**
it belongs to (the guard's ``conversation`` id) and the unit's id, so two
guards never see each other's units — in one thread, several threads,
several processes or asyncio tasks (``await asyncio.to_thread(guard.check)``
works).  Concurrency is SQLite's: WAL mode, a busy timeout (``timeout``
seconds; past it the operation fails with :class:`~.errors.StoreError`
``LOCKED`` and changes nothing), and one connection per thread and process,
opened on first use (``":memory:"``: one connection, shared under a lock,
since each connection to ``":memory:"`` is a database of its own).

Payloads round-trip exactly or are refused: the default codec stores JSON
and refuses, when a unit is spilled, anything JSON would give back changed
(a tuple, a non-string key, NaN, a set, a custom object), naming where in
the payload it is; a custom ``encode`` / ``decode`` pair is checked by
round trip (``decode(encode(p)) == p``; ``verify=False`` skips the check).

Where the data lives.  The store holds conversation content (user text,
tool outputs, whatever your payloads carry): in the file you name, and,
while a connection is open, in SQLite's ``-wal`` and ``-shm`` files beside
it (a ``-journal`` file in other journal modes).  A file the store creates
is readable and writable by its owner only (``mode=0o600``, the default;
SQLite gives its side files the database file's mode); an existing file
keeps the mode it has.  ``":memory:"`` keeps everything in the process.
Deleted rows are overwritten (``PRAGMA secure_delete``), and
:meth:`SpillStore.delete_conversation` removes one conversation's units and
empties the write-ahead log, so nothing of it stays in the files.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from os import PathLike

from .codec import encode_json, inexact, store_error
from .errors import StoreError, StoreFault

__all__ = ["SpillStore", "SpilledMessage", "SpilledUnit"]

Encode = Callable[[object], str]
Decode = Callable[[str], object]

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS spilled (
    session   TEXT NOT NULL,
    unit      TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    resources TEXT NOT NULL,
    messages  TEXT NOT NULL,
    PRIMARY KEY (session, unit)
)""",
    "CREATE INDEX IF NOT EXISTS spilled_order ON spilled (session, seq)",
)
_SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")


@dataclass(frozen=True, slots=True)
class SpilledMessage:
    """One message of a spilled unit, with what the guard tracked of it."""

    id: str
    role: str
    tokens: int
    payload: object
    call_id: str | None = None
    tool_calls: tuple[str, ...] = ()
    turn: int = 0
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class SpilledUnit:
    """A unit as stored: its id, the resources its calls named, its messages."""

    unit: str
    resources: frozenset[str]
    messages: tuple[SpilledMessage, ...]


class SpillStore:
    """Spilled units in one SQLite database (``path``, or ``":memory:"``).

    Parameters
    ----------
    path : str or PathLike
        The SQLite file (created if missing), or ``":memory:"``.
    session : str, optional
        The conversation this store's own methods address when none is
        given (default ``"default"``).  A guard always passes its own
        ``conversation``; one given no conversation takes ``session`` if you
        gave it (as before conversations had a name), else a fresh id.
    encode, decode : callable, optional
        Your message objects to text and back; default: exact JSON.
    timeout : float
        SQLite's busy timeout in seconds.
    synchronous : str
        ``"FULL"`` (default: a committed spill survives power loss, if the
        disk honours fsync), ``"NORMAL"`` (survives a process crash, not
        always power loss; faster) or ``"EXTRA"``.
    verify : bool
        Check a custom codec by round trip when a unit is spilled.
    mode : int
        The permission bits of the database file if the store creates it
        (default ``0o600``: its owner only; the process's umask may take
        bits away, as for any new file).  SQLite gives its ``-wal``,
        ``-shm`` and ``-journal`` files the database file's mode.  An
        existing file keeps its own.

    Examples
    --------
    >>> store = SpillStore(":memory:")
    >>> store.put(SpilledUnit("m2", frozenset({"a.txt"}),
    ...     (SpilledMessage("m2", "assistant", 5, {"role": "assistant"}),)))
    >>> [u.unit for u in store.units()], store.take("m2").resources
    (['m2'], frozenset({'a.txt'}))
    """

    #: Set while a copy opens: its tables come with the backup of the original.
    _restoring: bool = False

    def __init__(
        self,
        path: str | PathLike[str] = ":memory:",
        *,
        session: str | None = None,
        encode: Encode | None = None,
        decode: Decode | None = None,
        timeout: float = 5.0,
        synchronous: str = "FULL",
        verify: bool = True,
        mode: int = 0o600,
    ) -> None:
        if session is not None and not isinstance(session, str):
            raise TypeError(f"session must be a string, got {type(session).__name__}")
        if str(synchronous).upper() not in _SYNCHRONOUS:
            raise ValueError(f"synchronous ({synchronous!r}) must be one of {_SYNCHRONOUS}")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout >= 0):
            raise ValueError(f"timeout ({timeout!r}) must be a finite number of seconds ≥ 0")
        if isinstance(mode, bool) or not isinstance(mode, int) or not 0 <= mode <= 0o777:
            raise ValueError(
                f"mode ({mode!r}) must be permission bits from 0o000 to 0o777, "
                "e.g. 0o600 (the owner only, the default) or 0o640 (and the group may read)"
            )
        self.path = str(path)
        #: The conversation the store's own methods address by default.
        self.session = session if session is not None else "default"
        #: Whether ``session`` was given: a guard then takes it as its conversation.
        self.named = session is not None
        self._custom = encode is not None or decode is not None
        if (encode is None) != (decode is None):
            raise ValueError("give both encode and decode, or neither")
        self._encode: Encode = encode or encode_json
        self._decode: Decode = decode or json.loads
        self._verify = verify
        self._timeout = float(timeout)
        self._synchronous = str(synchronous).upper()
        self._memory = self.path == ":memory:"
        self.mode = mode
        self._lock = threading.RLock()
        self._local = threading.local()
        self._opened: list[tuple[int, sqlite3.Connection]] = []
        self._shared: sqlite3.Connection | None = None
        with self._db():  # open now: a bad path fails here, not at the first spill
            pass

    # ------------------------------------------------------------ connections
    def _create(self) -> None:
        """Create the database file with :attr:`mode` before SQLite opens it
        (SQLite would create it 0o644, and its side files after it).  A file
        that exists, or a path SQLite will refuse, is left to SQLite."""
        if self._memory or not self.path:
            return
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            os.close(os.open(self.path, flags, self.mode))
        except OSError:  # it exists (fine), or SQLite will report the path's fault
            return

    def _open(self) -> sqlite3.Connection:
        self._create()
        db = sqlite3.connect(
            self.path,
            timeout=self._timeout,
            isolation_level=None,
            check_same_thread=not self._memory,
        )
        try:
            db.execute("PRAGMA secure_delete=ON")  # deleted content is overwritten
            if not self._memory:
                self._busy_retried(db, "PRAGMA journal_mode=WAL")
                db.execute(f"PRAGMA synchronous={self._synchronous}")
            if not self._restoring:  # a copy's tables come with its backup
                for statement in _SCHEMA:
                    self._busy_retried(db, statement)
        except BaseException:
            db.close()
            raise
        with self._lock:
            self._opened.append((os.getpid(), db))
        return db

    def _busy_retried(self, db: sqlite3.Connection, statement: str) -> None:
        """Run ``statement``, again while SQLite says the database is locked,
        up to the busy timeout.  Two connections opening a new file at once
        (two threads or processes starting their guards) meet in its switch
        to WAL, where SQLite answers "database is locked" at once instead of
        waiting its busy timeout: the store then failed to open one time in
        ten, though nothing held the database for long."""
        deadline = time.monotonic() + self._timeout
        pause = 0.001
        while True:
            try:
                db.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (``":memory:"``: the shared one, locked);
        SQLite errors become :class:`StoreError`."""
        try:
            if self._memory:
                with self._lock:
                    if self._shared is None:
                        self._shared = self._open()
                    yield self._shared
                return
            local = self._local
            if getattr(local, "pid", None) != os.getpid():  # a new thread, or a forked child
                local.db, local.pid = self._open(), os.getpid()
            yield local.db
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from exc

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any error."""
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    with suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                raise

    # ----------------------------------------------------------------- writes
    def put(self, unit: SpilledUnit, conversation: str | None = None) -> None:
        """Commit ``unit`` (one transaction); returns once it is durable."""
        self.put_many([unit], conversation)

    def put_many(
        self,
        units: Iterable[SpilledUnit],
        conversation: str | None = None,
        *,
        delete: Iterable[str] = (),
    ) -> None:
        """Commit every unit, and delete the units named by ``delete``, in
        one transaction: all of it is durable, or none of it happened.

        Raises
        ------
        StoreError
            A payload that cannot be stored exactly (``UNENCODABLE``), or
            SQLite failed (``LOCKED``, ``FULL``, ``READ_ONLY``, ``CORRUPT``,
            ``IO``); the store is unchanged.
        """
        session = self._conversation(conversation)
        rows = [
            (session, u.unit, session, json.dumps(sorted(u.resources)), self._rows(u))
            for u in units
        ]
        gone = [(session, u) for u in delete]
        if not rows and not gone:
            return
        with self._transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO spilled (session, unit, seq, resources, messages) "
                "VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM spilled WHERE session = ?),"
                " ?, ?)",
                rows,
            )
            db.executemany("DELETE FROM spilled WHERE session = ? AND unit = ?", gone)

    def delete(self, units: Iterable[str], conversation: str | None = None) -> None:
        """Delete units (one transaction); unknown ids are ignored."""
        self.put_many((), conversation, delete=units)

    def delete_conversation(self, conversation: str) -> int:
        """Delete every unit of ``conversation`` (one transaction) and return
        how many there were; nothing of them stays in the files.

        Deleted content is overwritten in the database (``secure_delete``),
        and the write-ahead log, which may still hold the rows as they were
        written, is checkpointed and truncated (if another connection is
        reading at that moment, SQLite empties it at a later checkpoint).
        Call it when the conversation is over: a live guard of it would
        find its spilled units gone (counted in ``stats.lost``).

        Raises
        ------
        TypeError
            ``conversation`` is not a string.
        StoreError
            SQLite failed; nothing was deleted.
        """
        if not isinstance(conversation, str):
            raise TypeError(f"conversation must be a string, got {type(conversation).__name__}")
        with self._transaction() as db:
            gone = db.execute("DELETE FROM spilled WHERE session = ?", (conversation,)).rowcount
        if not self._memory:
            with self._db() as db:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return int(gone)

    # ------------------------------------------------------------------ reads
    def take(self, unit: str, conversation: str | None = None) -> SpilledUnit:
        """Read a unit (it stays in the store until :meth:`delete`).

        Raises
        ------
        KeyError
            The conversation has no such unit.
        """
        found = self.take_many([unit], conversation)
        if not found:
            raise KeyError(unit)
        return found[0]

    def take_many(self, units: Iterable[str], conversation: str | None = None) -> list[SpilledUnit]:
        """Read the named units present, in the order given (one read)."""
        session = self._conversation(conversation)
        wanted = list(units)
        with self._db() as db:
            rows = {row[0]: row for row in _select(db, session, wanted)}
        return [self._unit(rows[u]) for u in wanted if u in rows]

    def units(self, conversation: str | None = None) -> list[SpilledUnit]:
        """Every unit of the conversation, oldest spill first."""
        session = self._conversation(conversation)
        with self._db() as db:
            rows = db.execute(
                "SELECT unit, resources, messages FROM spilled WHERE session = ? ORDER BY seq",
                (session,),
            ).fetchall()
        return [self._unit(r) for r in rows]

    def conversations(self) -> list[str]:
        """Every conversation with a unit in the store, sorted."""
        with self._db() as db:
            rows = db.execute("SELECT DISTINCT session FROM spilled ORDER BY session").fetchall()
        return [str(r[0]) for r in rows]

    def count(self, conversation: str | None = None) -> int:
        """Units of the conversation in the store."""
        session = self._conversation(conversation)
        with self._db() as db:
            row = db.execute("SELECT COUNT(*) FROM spilled WHERE session = ?", (session,))
            return int(row.fetchone()[0])

    def __len__(self) -> int:
        return self.count()

    def close(self) -> None:
        """Close every connection this process opened."""
        with self._lock:
            mine = [db for pid, db in self._opened if pid == os.getpid()]
            self._opened = [(p, d) for p, d in self._opened if p != os.getpid()]
            self._shared = None
        for db in mine:
            db.close()
        self._local = threading.local()

    def __deepcopy__(self, memo: dict[int, object]) -> SpillStore:
        """An in-memory store's copy (for test drivers that branch a runtime);
        a store on disk is shared state and is not copied."""
        if not self._memory:
            raise TypeError(f"a spill store on disk ({self.path}) cannot be copied")
        twin = SpillStore.__new__(SpillStore)
        twin._restoring = True  # no tables yet: the backup below brings them with the rows
        SpillStore.__init__(twin, ":memory:", session=self.session, verify=self._verify)
        twin.named = self.named
        twin._encode, twin._decode, twin._custom = self._encode, self._decode, self._custom
        with self._db() as db, twin._db() as other:
            db.backup(other)
        twin._restoring = False
        return twin

    # --------------------------------------------------------------- helpers
    def _conversation(self, conversation: str | None) -> str:
        if conversation is None:
            return self.session
        if not isinstance(conversation, str):
            raise TypeError(f"conversation must be a string, got {type(conversation).__name__}")
        return conversation

    def _rows(self, unit: SpilledUnit) -> str:
        return json.dumps(
            [
                {
                    "id": m.id,
                    "role": m.role,
                    "tokens": m.tokens,
                    "call_id": m.call_id,
                    "tool_calls": list(m.tool_calls),
                    "turn": m.turn,
                    "created_at": m.created_at,
                    "payload": self._payload(unit.unit, m),
                }
                for m in unit.messages
            ]
        )

    def _payload(self, unit: str, message: SpilledMessage) -> str:
        where = f"the payload of message {message.id!r} (unit {unit!r})"
        if not self._custom:
            problem = inexact(message.payload, "payload")
            if problem is not None:
                raise StoreError(
                    StoreFault.UNENCODABLE,
                    self.path,
                    f"{where} cannot be stored exactly as JSON: {problem}.",
                    "give the guard JSON-shaped payloads (dicts with string keys, lists, "
                    "str, int, finite float, bool, None), or a store with your own "
                    "encode= and decode=.",
                )
        try:
            text = self._encode(message.payload)
        except Exception as exc:
            raise StoreError(
                StoreFault.UNENCODABLE,
                self.path,
                f"{where}: encode raised {type(exc).__name__}: {exc}.",
                "fix the store's encode=, or give payloads it can encode.",
            ) from exc
        if not isinstance(text, str):
            raise StoreError(
                StoreFault.UNENCODABLE,
                self.path,
                f"{where}: encode returned {type(text).__name__}, not str.",
            )
        if self._custom and self._verify:
            try:
                same = self._decode(text) == message.payload
            except Exception as exc:
                raise StoreError(
                    StoreFault.UNENCODABLE,
                    self.path,
                    f"{where}: decode cannot read what encode wrote ({type(exc).__name__}: {exc}).",
                ) from exc
            if not same:
                raise StoreError(
                    StoreFault.UNENCODABLE,
                    self.path,
                    f"{where} does not round-trip: decode(encode(payload)) != payload.",
                    "fix the codec, or pass verify=False if your objects lack a meaningful ==.",
                )
        return text

    def _unit(self, row: tuple[str, str, str]) -> SpilledUnit:
        unit, resources, messages = row
        try:
            return SpilledUnit(
                unit,
                frozenset(json.loads(resources)),
                tuple(
                    SpilledMessage(
                        m["id"],
                        m["role"],
                        int(m["tokens"]),
                        self._decode(m["payload"]),
                        m["call_id"],
                        tuple(m["tool_calls"]),
                        int(m.get("turn", 0)),
                        float(m.get("created_at", 0.0)),
                    )
                    for m in json.loads(messages)
                ),
            )
        except Exception as exc:
            raise StoreError(
                StoreFault.UNDECODABLE,
                self.path,
                f"unit {unit!r} cannot be read back ({type(exc).__name__}: {exc}).",
                "the row was written by another codec or is damaged.",
            ) from exc


def _select(db: sqlite3.Connection, session: str, units: list[str]) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for at in range(0, len(units), 500):
        chunk = units[at : at + 500]
        marks = ",".join("?" * len(chunk))
        out.extend(
            db.execute(
                "SELECT unit, resources, messages FROM spilled "
                f"WHERE session = ? AND unit IN ({marks})",
                (session, *chunk),
            ).fetchall()
        )
    return out
