"""Where output goes: the one module that writes a file a user named.

Files are treated as SQLite treats its database: never written through
something the user did not mean, never half-written, never lost.

- :func:`output_file` is the file an ``--out`` FILE (or ``--junit FILE``)
  names, resolved once at start-up: a relative path is made absolute (user
  code that changes directory later cannot move it), a symlink is followed
  to its target (the target is written, the link stays), and a folder, a
  device, a FIFO or a socket is refused (exit 2), also behind a link —
  ``--out /dev/null`` must never replace the system's ``/dev/null``, and a
  FIFO would block for ever.  An existing non-empty file is refused unless
  ``force`` (``--force``) or the command owns it (a results file it resumes).
- :func:`output_folder` does the same for an ``--out`` FOLDER.
- :func:`write_atomically`, :func:`write_text` and :func:`replacing` write
  through a temporary file in the same folder, flushed to disk (``fsync``)
  and renamed over the target (atomic on POSIX); on any failure (a full
  disk) the temporary file is removed and the old file is left as it was.
  A replaced file keeps its permissions.
- ``private=True`` (a file holding conversation content: a reproduction
  bundle, a failure-database entry) creates the file readable by its owner
  only (``0600``) and new folders ``0700``, unless
  ``PRUNECHECK_SHARED_FILES=1`` (:func:`shared_files`).
- :func:`disk_full` turns a full disk (``ENOSPC``, ``EDQUOT``) into one
  paragraph naming the file and what was kept.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from prunecheck.model.errors import ConfigError, PrunecheckError

__all__ = [
    "SHARED_ENV",
    "OutputError",
    "check_bundle_folder",
    "disk_full",
    "file_kind",
    "is_disk_full",
    "make_folder",
    "output_file",
    "output_folder",
    "refusing_full_disk",
    "replacing",
    "shared_files",
    "write_atomically",
    "write_text",
]

#: The environment variable that lets conversation content be shared
#: (``1``: created with the umask's permissions, not the owner's only).
SHARED_ENV = "PRUNECHECK_SHARED_FILES"


class OutputError(PrunecheckError):
    """An output cannot be written (a full disk): the finished work is kept."""


_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """What a special file is ("a FIFO (named pipe)", …), None if it is a
    regular file or a folder.

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFREG)
    ('a FIFO (named pipe)', None)
    """
    return next((name for test, name in _KINDS if test(mode)), None)


def shared_files() -> bool:
    """Whether ``PRUNECHECK_SHARED_FILES`` is ``1`` (default ``0``: files
    holding conversation content are readable by their owner only).

    Raises
    ------
    ConfigError
        if it is set to anything but ``0`` or ``1``.
    """
    text = os.environ.get(SHARED_ENV, "0").strip()
    if text not in ("0", "1"):
        raise ConfigError(
            f"environment variable {SHARED_ENV}={text!r}",
            "must be 0 (bundles and saved failures readable by their owner only) or 1 "
            "(created with the umask's permissions, e.g. for a shared CI folder).",
            "unset it, or set it to 0 or 1.",
        )
    return text == "1"


def _absolute(path: Path) -> Path:
    try:
        return Path(os.path.abspath(path))
    except OSError:  # a deleted current folder
        raise ConfigError(
            str(path),
            "is relative, and the current folder no longer exists.",
            "cd into an existing folder, or give an absolute path.",
        ) from None


def _resolved(path: Path) -> Path:
    """``path`` absolute with symlinks followed (a link's target is what is
    written, or refused: a device, an existing file without ``--force``)."""
    return Path(os.path.realpath(_absolute(path)))


def _shown(path: Path, target: Path) -> str:
    return str(path) if target == _absolute(path) else f"{path} (-> {target})"


def output_file(
    path: Path | str,
    flag: str = "--out",
    *,
    force: bool = False,
    owned: Callable[[Path], bool] | bool = False,
    mine: str = "",
) -> Path:
    """The file to write for ``flag`` ``path``: absolute, symlinks followed.

    Parameters
    ----------
    path:
        The file as the user gave it.
    flag:
        The option that named it, for the messages.
    force:
        ``--force``: an existing file may be replaced.
    owned:
        Whether an existing file is the command's own (it resumes or
        rewrites it), or a test of that; such a file needs no ``force``.
    mine:
        What an owned file is ("a prunecheck results file"), for the message.

    Raises
    ------
    ConfigError
        if it is a folder, a device, a FIFO or a socket, or an existing
        non-empty file that is not ``owned``, without ``force``.
    """
    path = Path(path)
    target = _resolved(path)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise ConfigError(
            str(path), f"cannot be examined ({exc.strerror}).", f"give {flag} a file you can write."
        ) from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(
            str(path),
            "is a folder, not a file.",
            f"give {flag} a file name, e.g. {'results.jsonl' if flag == '--out' else 'out.xml'}.",
        )
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise ConfigError(
            _shown(path, target),
            f"is {kind}, not a regular file; prunecheck replaces its output file whole, which "
            "must never happen to a device or a pipe.",
            f"give {flag} the name of a regular file.",
        )
    if info.st_size and not force and not (owned(target) if callable(owned) else owned):
        other = f" and holds other data, not {mine}" if mine else ""
        raise ConfigError(
            _shown(path, target),
            f"already exists ({info.st_size:,} bytes){other}; prunecheck never replaces a "
            "file without --force.",
            f"give {flag} a new file name, or add --force to replace it.",
        )
    return target


def output_folder(path: Path | str, flag: str = "--out") -> Path:
    """The folder to write for ``flag`` ``path``: absolute, symlinks followed.

    Raises
    ------
    ConfigError
        if it exists and is a device, a FIFO or a socket.
    """
    path = Path(path)
    target = _resolved(path)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target
    kind = file_kind(mode)
    if kind is not None:
        raise ConfigError(
            _shown(path, target),
            f"is {kind}, not a folder.",
            f"give {flag} a new folder name.",
        )
    return target


def check_bundle_folder(out_dir: Path, *, force: bool = False) -> None:
    """Refuse (ConfigError, exit 2) a bundle's ``--out`` that is a file, that
    cannot be created, or a folder holding files, unless ``force``: a bundle
    is never silently replaced (every command writing a bundle, and the
    pytest plugin's ``--prunecheck-force``, go through here)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(
            str(out_dir), "exists and is not a folder.", "give --out a new folder name."
        )
    if not out_dir.exists():
        parent = next((p for p in out_dir.absolute().parents if p.exists()), Path("/"))
        try:  # try it for real: permissions alone do not tell (root, /proc, read-only mounts)
            tempfile.TemporaryDirectory(dir=parent).cleanup()
        except OSError as exc:
            raise ConfigError(
                str(out_dir),
                f"cannot be created ({parent}: {exc.strerror}).",
                "give --out a place you can write to.",
            ) from None
    if not force and out_dir.is_dir() and any(out_dir.iterdir()):
        held = sorted(p.name for p in out_dir.iterdir())[:5]
        raise ConfigError(
            str(out_dir),
            f"already holds files ({', '.join(held)}); a bundle never silently replaces them.",
            "give --out a new folder, or add --force to overwrite.",
        )


def make_folder(folder: Path, *, private: bool = False) -> Path:
    """Create ``folder`` and its parents if missing; a new ``folder`` is
    ``0700`` when ``private`` (unless :func:`shared_files`)."""
    mode = 0o700 if private and not shared_files() else 0o777
    folder.mkdir(mode=mode, parents=True, exist_ok=True)
    return folder


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


def _temporary(path: Path, private: bool) -> tuple[Path, int]:
    """A new temporary file beside ``path`` (never through a link), open
    for writing: ``0600`` when private, else as the umask says."""
    mode = 0o600 if private and not shared_files() else 0o666
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, mode)
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue


def _sync_folder(folder: Path) -> None:
    """Flush a rename in ``folder`` to disk (some file systems cannot: fine)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextmanager
def replacing(path: Path, *, private: bool = False) -> Iterator[Path]:
    """A temporary path beside ``path`` to write (e.g. with a library's
    ``save(path)``); when the block ends it is flushed to disk and renamed
    over ``path``.  On any failure it is removed and ``path`` is left as it
    was.  A replaced file keeps its permissions."""
    tmp, fd = _temporary(path, private)
    try:
        os.close(fd)
        yield tmp
        _install(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _install(tmp: Path, path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        old = os.stat(path)
        if stat.S_ISREG(old.st_mode):
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
    fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _sync_folder(path.parent)


def write_atomically(path: Path, write: Callable[[TextIO], None], *, private: bool = False) -> None:
    """Replace ``path`` with what ``write`` writes (UTF-8; a character that
    cannot be encoded, a lone surrogate, as its escape), through a
    temporary file beside it (see :func:`replacing`)."""
    with (
        replacing(path, private=private) as tmp,
        tmp.open("w", encoding="utf-8", errors="backslashreplace") as out,
    ):
        write(out)


def write_text(path: Path, text: str | bytes, *, private: bool = False) -> Path:
    """Replace ``path`` with ``text`` (see :func:`write_atomically`); return it."""
    with replacing(path, private=private) as tmp:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8", errors="backslashreplace")
    return path
