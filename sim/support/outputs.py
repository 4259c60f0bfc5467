"""Where output goes: an ``--out`` that is safe to write, and a full disk
that costs nothing already finished.

- :func:`output_file` is the file an ``--out`` FILE names, resolved once at
  start-up: a relative path is made absolute (user code that changes
  directory later cannot move it), a symlink is followed to its target (the
  target is written, the link stays), and a device, a FIFO, a socket or a
  folder is refused (exit 2) — ``--out /dev/null`` must never replace the
  system's ``/dev/null``, and a FIFO would block for ever.
- :func:`output_folder` does the same for an ``--out`` FOLDER.
- :func:`write_atomically` replaces a file through a temporary file beside
  it; on any failure (a full disk) the temporary file is removed and the
  old file is left as it was.
- :func:`disk_full` turns a full disk (``ENOSPC``, ``EDQUOT``) into one
  paragraph naming the file and what was kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from prunecheck.model.errors import ConfigError, PrunecheckError

__all__ = [
    "OutputError",
    "disk_full",
    "is_disk_full",
    "output_file",
    "output_folder",
    "refusing_full_disk",
    "write_atomically",
]


class OutputError(PrunecheckError):
    """An output cannot be written (a full disk): the finished work is kept."""


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def _special(mode: int) -> str | None:
    return next((name for test, name in _KINDS if test(mode)), None)


def _absolute(path: Path) -> Path:
    try:
        return Path(os.path.abspath(path))
    except OSError:  # a deleted current folder
        raise ConfigError(
            str(path),
            "is relative, and the current folder no longer exists.",
            "cd into an existing folder, or give an absolute path.",
        ) from None


def output_file(path: Path, flag: str = "--out") -> Path:
    """The file to write for ``flag`` ``path``: absolute, symlinks followed.

    Raises
    ------
    ConfigError
        if it is a folder, a device, a FIFO or a socket.
    """
    target = Path(os.path.realpath(_absolute(path)))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise ConfigError(
            str(path), f"cannot be examined ({exc.strerror}).", f"give {flag} a file you can write."
        ) from None
    if stat.S_ISDIR(mode):
        raise ConfigError(
            str(path),
            "is a folder, not a results file.",
            f"give {flag} a file name, e.g. results.jsonl.",
        )
    kind = _special(mode)
    if kind is not None:
        shown = str(path) if target == _absolute(path) else f"{path} (-> {target})"
        raise ConfigError(
            shown,
            f"is {kind}, not a regular file; prunecheck reads its results file back and "
            "replaces it whole, which must never happen to a device or a pipe.",
            f"give {flag} the name of a regular file, e.g. results.jsonl.",
        )
    return target


def output_folder(path: Path, flag: str = "--out") -> Path:
    """The folder to write for ``flag`` ``path``: absolute, symlinks followed.

    Raises
    ------
    ConfigError
        if it exists and is a device, a FIFO, a socket or a file.
    """
    target = Path(os.path.realpath(_absolute(path)))
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target
    kind = _special(mode)
    if kind is not None:
        raise ConfigError(
            str(path),
            f"is {kind}, not a folder.",
            f"give {flag} a new folder name.",
        )
    return target


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the file system is full (or over quota)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def disk_full(path: Path, kept: str, exc: OSError) -> OutputError:
    """The paragraph of a full disk while writing ``path``; ``kept`` says
    what finished work is kept and where."""
    return OutputError(
        str(path),
        f"cannot be written: the file system is full ({exc.strerror}); {kept}",
        "free some space (or give --out a place with room) and run the same command "
        "again: finished work is reused.",
    )


@contextmanager
def refusing_full_disk(path: Path, kept: Callable[[], str]) -> Iterator[None]:
    """Turn a full disk inside the block into :func:`disk_full`'s paragraph."""
    try:
        yield
    except OSError as exc:
        if is_disk_full(exc):
            raise disk_full(path, kept(), exc) from None
        raise


def write_atomically(path: Path, write: Callable[[TextIO], None]) -> None:
    """Replace ``path`` with what ``write`` writes, through a temporary file
    beside it; on failure the temporary file is removed and ``path`` is left
    as it was."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", errors="backslashreplace") as out:
            write(out)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
