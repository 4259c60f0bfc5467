"""Results that cannot be lost or silently corrupted: locks and row checksums.

Locks use ``fcntl.flock`` from the standard library rather than the
``filelock`` package: no new dependency, and the kernel releases a lock when
its process dies (also on SIGKILL), so a killed sweep never leaves a stale
lock to clean up.  It is advisory and POSIX-only, as is the rest of
prunecheck (the policy cage relies on POSIX pipes).  A second writer does
not wait: it refuses at once with one paragraph (exit 2), naming the
process that holds the lock.

- :func:`locked` holds a results file's lock (a hidden ``.FILE.lock`` beside
  it: the file itself is replaced atomically, so it cannot carry the lock; the
  lock file stays, as deleting one races with the next writer);
- :func:`locked_folder` holds an output folder's lock (the folder itself);
- :func:`seal` adds a checksum of a row's content; :func:`is_intact` checks
  it, so an edited row is detected, reported and its run done again.

Locks are re-entrant within one process.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError

__all__ = ["CHECKSUM", "is_intact", "locked", "locked_folder", "seal"]

#: The key under which a row carries the checksum of the rest of its content.
CHECKSUM = "sha256"

_HELD: dict[str, int] = {}  # lock path -> depth, in this process


def _digest(data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != CHECKSUM}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a checksum of its content (any previous one replaced).

    >>> is_intact(seal({"a": 1}))
    True
    >>> row = seal({"a": 1}); row["a"] = 2; is_intact(row)
    False
    """
    return {**data, CHECKSUM: _digest(data)}


def is_intact(data: object) -> bool:
    """Whether ``data`` is an object whose checksum matches its content."""
    return isinstance(data, dict) and data.get(CHECKSUM) == _digest(data)


@contextmanager
def _flock(lock_path: Path, target: str, what: str, *, folder: bool) -> Iterator[None]:
    key = str(lock_path.resolve())
    if _HELD.get(key):
        _HELD[key] += 1
        try:
            yield
        finally:
            _HELD[key] -= 1
        return
    try:
        if folder:
            fd = os.open(lock_path, os.O_RDONLY | os.O_DIRECTORY)
        else:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError(
            target,
            f"cannot be locked for writing ({exc.strerror}).",
            "give --out a place you can write to.",
        ) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = "" if folder else _holder(fd)
            raise ConfigError(
                target,
                f"is being written by another prunecheck {what}"
                f"{holder}; two writers would lose each other's work.",
                "wait for it to finish (then run again: finished runs are "
                "reused), or give --out another place.",
            ) from None
        if not folder:
            try:  # who holds it, for the next writer's message (a full disk: unsaid)
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                pass
        _HELD[key] = 1
        try:
            yield
        finally:
            del _HELD[key]
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""


@contextmanager
def locked(path: Path, what: str = "command") -> Iterator[None]:
    """Hold the write lock of the results file ``path`` (ConfigError, exit 2,
    if another process holds it or it cannot be created)."""
    if path.is_dir():
        raise ConfigError(
            str(path),
            "is a folder, not a results file.",
            "give --out a file name, e.g. results.jsonl.",
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            str(path),
            f"cannot be written: its folder cannot be created ({exc.strerror}).",
            "give --out a place you can write to.",
        ) from None
    with _flock(path.with_name(f".{path.name}.lock"), str(path), what, folder=False):
        yield


@contextmanager
def locked_folder(folder: Path, what: str = "command") -> Iterator[None]:
    """Hold the write lock of the output folder ``folder`` (created if
    missing; ConfigError, exit 2, if it is a file, cannot be created, or
    another process holds it)."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(
            str(folder), "exists and is not a folder.", "give --out a new folder name."
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            str(folder),
            f"cannot be created ({exc.strerror}).",
            "give --out a place you can write to.",
        ) from None
    with _flock(folder, str(folder), what, folder=True):
        yield
