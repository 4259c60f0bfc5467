"""The wire of the cage: length-prefixed frames over pipes, and the answer
for user code that raised.

Shared by :mod:`.cage_worker` (policies) and :mod:`.runtime_worker`
(runtimes under test): each message is a 4-byte big-endian length and a
payload; the parent sends pickles, the worker answers in JSON only.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

__all__ = ["raised", "read_frame", "where_raised", "write_frame"]

_HEADER = struct.Struct(">I")


def read_frame(fd: int) -> bytes | None:
    """One request from the parent, or None when it closed the pipe."""

    def exactly(n: int) -> bytes | None:
        chunks, left = [], n
        while left:
            chunk = os.read(fd, left)
            if not chunk:
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    head = exactly(_HEADER.size)
    if head is None:
        return None
    return exactly(_HEADER.unpack(head)[0])


def write_frame(fd: int, payload: dict[str, Any]) -> None:
    """One answer to the parent (JSON)."""
    data = json.dumps(payload).encode()
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def raised(exc: BaseException, what: str, who: str = "policy") -> dict[str, Any]:
    """The answer for user code (a ``who``) that raised ``exc`` doing ``what``."""
    kind = type(exc).__name__
    if isinstance(exc, SystemExit):
        rule = f"{what} called sys.exit({exc.code!r})."
        hint = (
            "a policy must return its proposal, never exit the process."
            if who == "policy"
            else f"a {who} must return, never exit the process."
        )
    else:
        try:
            text = str(exc)
        except BaseException:
            text = ""
        where = where_raised(exc)
        rule = f"{what} raised {kind}" + (f": {text[:500]}" if text else "") + where + "."
        hint = f"fix the {who}; prunecheck records this as a {who} error, not a verdict."
    return {"raised": {"rule": rule, "hint": hint}}


#: prunecheck's package folder, as its modules' files name it (not resolved:
#: in a source checkout ``src/prunecheck/sim`` is a link to the top-level ``sim``).
_OWN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _libraries() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.abspath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {str(Path(r).resolve()) for r in roots}
    return tuple(sorted(roots | {os.path.abspath(sys.prefix), os.path.abspath(sys.base_prefix)}))


def where_raised(exc: BaseException) -> str:
    """`` (policy.py, line 3: return [ids[99]])``: the file, line and code
    of the user's own code where ``exc`` was raised (the innermost frame
    outside prunecheck, the standard library and the installed packages; else
    the innermost outside prunecheck), or '' when there is none.

    A file under the current folder is named relative to it."""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except Exception:
        return ""
    libraries = _libraries()
    files = [f for f in frames if f.filename and not f.filename.startswith("<")]
    outside = [f for f in files if not os.path.abspath(f.filename).startswith(_OWN + os.sep)]
    own = [f for f in outside if not os.path.abspath(f.filename).startswith(libraries)]
    candidates = own or outside
    if not candidates:
        return ""
    chosen = candidates[-1]
    name = chosen.filename
    with contextlib.suppress(ValueError, OSError):
        name = str(Path(name).resolve().relative_to(Path.cwd().resolve()))
    code = " ".join((chosen.line or "").split())
    if len(code) > 120:
        code = code[:117] + "..."
    return f" ({name}, line {chosen.lineno}" + (f": {code})" if code else ")")
