"""The wire of the cage: length-prefixed frames over pipes, and the answer
for user code that raised.

Shared by :mod:`.cage_worker` (policies) and :mod:`.runtime_worker`
(runtimes under test): each message is a 4-byte big-endian length and a
payload; the parent sends pickles, the worker answers in JSON only.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

__all__ = ["raised", "read_frame", "write_frame"]

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
        rule = f"{what} raised {kind}" + (f": {text[:500]}." if text else ".")
        hint = f"fix the {who}; prunecheck records this as a {who} error, not a verdict."
    return {"raised": {"rule": rule, "hint": hint}}
