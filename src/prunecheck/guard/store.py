"""The spill store: closed units moved out of the context, in SQLite.

A unit is committed to the store *before* the guard tells the runtime to
remove it from the context, and deleted from the store only *after* the
runtime has put it back (the guard's next call), so a process killed at any
moment loses no unit: each spilled unit is in the store, in the context, or
in both.  Standard library ``sqlite3`` in WAL mode; ``":memory:"`` works
(then nothing survives the process, by definition).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike

__all__ = ["SpillStore", "SpilledMessage", "SpilledUnit"]

Encode = Callable[[object], str]
Decode = Callable[[str], object]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spilled (
    session   TEXT NOT NULL,
    unit      TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    resources TEXT NOT NULL,
    messages  TEXT NOT NULL,
    PRIMARY KEY (session, unit)
)
"""


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
    unit: str
    resources: frozenset[str]
    messages: tuple[SpilledMessage, ...]


class SpillStore:
    """Spilled units in one SQLite database (``path``, or ``":memory:"``).

    ``session`` keeps several guards apart in one file.  ``encode`` and
    ``decode`` turn your message objects into text and back (JSON by
    default; the integrations pass their framework's serializers).

    >>> store = SpillStore(":memory:")
    >>> store.put(SpilledUnit("m2", frozenset({"a.txt"}),
    ...     (SpilledMessage("m2", "assistant", 5, {"role": "assistant"}),)))
    >>> [u.unit for u in store.units()], store.take("m2").resources
    (['m2'], frozenset({'a.txt'}))
    """

    def __init__(
        self,
        path: str | PathLike[str] = ":memory:",
        *,
        session: str = "default",
        encode: Encode = json.dumps,
        decode: Decode = json.loads,
        timeout: float = 30.0,
    ) -> None:
        self.path = str(path)
        self.session = session
        self._encode = encode
        self._decode = decode
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # durable across a process kill
        self._db.execute(_SCHEMA)
        row = self._db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM spilled WHERE session = ?", (session,)
        ).fetchone()
        self._seq = int(row[0])

    # ----------------------------------------------------------------- writes
    def put(self, unit: SpilledUnit) -> None:
        """Commit ``unit`` (one transaction); returns once it is durable."""
        self._seq += 1
        messages = [
            {
                "id": m.id,
                "role": m.role,
                "tokens": m.tokens,
                "call_id": m.call_id,
                "tool_calls": list(m.tool_calls),
                "turn": m.turn,
                "created_at": m.created_at,
                "payload": self._encode(m.payload),
            }
            for m in unit.messages
        ]
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO spilled VALUES (?, ?, ?, ?, ?)",
                (
                    self.session,
                    unit.unit,
                    self._seq,
                    json.dumps(sorted(unit.resources)),
                    json.dumps(messages),
                ),
            )

    def take(self, unit: str) -> SpilledUnit:
        """Read a unit (it stays in the store until :meth:`delete`)."""
        row = self._db.execute(
            "SELECT unit, resources, messages FROM spilled WHERE session = ? AND unit = ?",
            (self.session, unit),
        ).fetchone()
        if row is None:
            raise KeyError(unit)
        return self._unit(row)

    def delete(self, units: list[str]) -> None:
        if not units:
            return
        with self._transaction():
            self._db.executemany(
                "DELETE FROM spilled WHERE session = ? AND unit = ?",
                [(self.session, u) for u in units],
            )

    # ------------------------------------------------------------------ reads
    def units(self) -> list[SpilledUnit]:
        """Every unit of this session, oldest spill first."""
        rows = self._db.execute(
            "SELECT unit, resources, messages FROM spilled WHERE session = ? ORDER BY seq",
            (self.session,),
        ).fetchall()
        return [self._unit(r) for r in rows]

    def __len__(self) -> int:
        row = self._db.execute(
            "SELECT COUNT(*) FROM spilled WHERE session = ?", (self.session,)
        ).fetchone()
        return int(row[0])

    def close(self) -> None:
        self._db.close()

    def __deepcopy__(self, memo: dict[int, object]) -> SpillStore:
        """An in-memory store's copy (for test drivers that branch a runtime);
        a store on disk is shared state and is not copied."""
        if self.path != ":memory:":
            raise TypeError(f"a spill store on disk ({self.path}) cannot be copied")
        twin = SpillStore(
            ":memory:", session=self.session, encode=self._encode, decode=self._decode
        )
        self._db.backup(twin._db)
        twin._seq = self._seq
        return twin

    # --------------------------------------------------------------- helpers
    def _unit(self, row: tuple[str, str, str]) -> SpilledUnit:
        unit, resources, messages = row
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

    def _transaction(self) -> _Tx:
        return _Tx(self._db)


class _Tx:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
