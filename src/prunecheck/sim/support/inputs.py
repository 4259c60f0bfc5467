"""Reading a file a user named: a regular file, or a clear error — never a hang.

A FIFO given where a trace, a baseline or a log is expected would block the
reading command for ever, and a device (``/dev/zero``, ``/dev/urandom``)
would feed it without end.  :func:`check_input` looks at the file's type
first (``os.stat``) and refuses anything but a regular file (and a folder,
where the command reads folders) with one paragraph, exit 2;
:func:`read_input` then opens it non-blocking and checks the type again on
the open descriptor, so a file swapped for a FIFO in between cannot hang
either.  :func:`open_input` does the same and hands back the open file,
for a reader that streams a file too large to hold (a production log).
The descriptor stays non-blocking: a regular file's reads never wait
anyway, and a kernel file that looks regular but waits for data
(``/proc/kmsg``) is refused when its read would block, not waited on.

>>> import tempfile, os
>>> fifo = os.path.join(tempfile.mkdtemp(), "pipe")
>>> os.mkfifo(fifo)
>>> try:
...     read_input(fifo)
... except Exception as exc:
...     print(type(exc).__name__, "FIFO" in str(exc))
ConfigError True
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from prunecheck.model.errors import ConfigError
from prunecheck.sim.support.outputs import file_kind

if TYPE_CHECKING:  # collections.abc.Buffer from Python 3.12 on
    from typing_extensions import Buffer

__all__ = ["check_input", "open_input", "read_input"]


def _refusal(name: str, kind: str, what: str) -> ConfigError:
    return ConfigError(
        name,
        f"is {kind}, not a regular file: prunecheck reads {what} whole, and a pipe or a "
        "device would make it wait, or read, for ever.",
        f"save {what} to a regular file and give its path.",
    )


def check_input(
    path: str | Path, what: str = "the file", *, name: str | None = None, folder: bool = False
) -> None:
    """Refuse ``path`` unless it is a regular file (or a folder, if
    ``folder``), or missing (the caller says what a missing file means).

    Raises
    ------
    ConfigError
        naming the file (``name``, default the path) and its kind.
    """
    shown = str(path) if name is None else name
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise ConfigError(
            shown, f"cannot be examined ({exc.strerror}).", f"give the path of {what}."
        ) from None
    except ValueError:  # a NUL byte in the name
        raise ConfigError(shown, "is not a file name (it holds a NUL byte).") from None
    if stat.S_ISDIR(mode):
        if folder:
            return
        raise ConfigError(shown, "is a folder, not a file.", f"give the path of {what}.")
    kind = file_kind(mode)
    if kind is not None:
        raise _refusal(shown, kind, what)


def read_input(path: str | Path, what: str = "the file", *, name: str | None = None) -> bytes:
    """The bytes of the regular file ``path``, read without ever blocking on
    a FIFO or a device.

    Raises
    ------
    ConfigError
        if it is not a regular file.
    OSError
        as :func:`open` does (``FileNotFoundError`` for a missing file).
    """
    with open_input(path, what, name=name) as handle:
        return handle.read()


def open_input(path: str | Path, what: str = "the file", *, name: str | None = None) -> BinaryIO:
    """The regular file ``path`` open for reading in binary, opened without
    ever blocking on a FIFO or a device (the caller closes it).

    Raises
    ------
    ConfigError
        if it is not a regular file.
    OSError
        as :func:`open` does (``FileNotFoundError`` for a missing file).
    """
    shown = str(path) if name is None else name
    check_input(path, what, name=name)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            if kind is None:
                raise ConfigError(shown, "is a folder, not a file.", f"give the path of {what}.")
            raise _refusal(shown, kind, what)
        raw = _NeverWaits(fd, shown, what)
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(raw)


class _NeverWaits(io.FileIO):
    """A non-blocking descriptor's reads: a read that would wait (a kernel
    file such as ``/proc/kmsg``, regular to ``stat``) is one paragraph."""

    def __init__(self, fd: int, shown: str, what: str) -> None:
        super().__init__(fd, "rb", closefd=True)
        self._shown, self._what = shown, what

    def readinto(self, buffer: Buffer, /) -> int:
        count = super().readinto(buffer)
        if count is None:  # EAGAIN: nothing yet, and a regular file never says so
            raise ConfigError(
                self._shown,
                "is a file whose reads wait for data (a kernel or device file, such as "
                "/proc/kmsg): prunecheck reads "
                f"{self._what} whole, and this one would make it wait for ever.",
                f"save {self._what} to a regular file and give its path.",
            )
        return count
