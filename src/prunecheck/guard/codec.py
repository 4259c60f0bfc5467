"""The spill store's codec checks and its SQLite error mapping.

:func:`inexact` says where a payload would not come back from JSON as it
went in (a tuple, a non-string key, NaN, a set, an object), so that the
store refuses it when it is spilled instead of returning it changed;
:func:`store_error` turns an ``sqlite3`` error into a
:class:`~.errors.StoreError` with its :class:`~.errors.StoreFault` and a hint.
"""

from __future__ import annotations

import json
import math
import sqlite3

from .errors import StoreError, StoreFault

__all__ = ["encode_json", "inexact", "store_error"]


def encode_json(payload: object) -> str:
    return json.dumps(payload, allow_nan=False)


def inexact(value: object, where: str, depth: int = 0) -> str | None:
    """Where ``value`` would not come back from JSON as it went in, or None."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return None
    if isinstance(value, float) and kind is float:
        return None if math.isfinite(value) else f"{where} is {value!r}"
    if depth > 200:
        return f"{where} nests deeper than 200 levels (or refers to itself)"
    if isinstance(value, list) and kind is list:
        for i, item in enumerate(value):
            problem = inexact(item, f"{where}[{i}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict) and kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"{where} has the key {key!r} ({type(key).__name__}; JSON keys are strings)"
            problem = inexact(item, f"{where}[{key!r}]", depth + 1)
            if problem is not None:
                return problem
        return None
    if kind is tuple:
        return f"{where} is a tuple (it would come back as a list)"
    return f"{where} is a {kind.__name__}"


def store_error(path: str, exc: sqlite3.Error) -> StoreError:
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc)
    lowered = text.lower()
    fault = StoreFault.IO
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (5, 6) or "locked" in lowered or "busy" in lowered:
        fault = StoreFault.LOCKED
    elif primary == 13 or "full" in lowered:
        fault = StoreFault.FULL
    elif primary == 8 or "readonly" in lowered or "read-only" in lowered:
        fault = StoreFault.READ_ONLY
    elif primary in (11, 26) or "malformed" in lowered or "not a database" in lowered:
        fault = StoreFault.CORRUPT
    hints = {
        StoreFault.LOCKED: "another connection held the database past the busy timeout; "
        "retry the check, or raise the store's timeout=.",
        StoreFault.FULL: "free disk space (or raise the database's max_page_count), then retry.",
        StoreFault.READ_ONLY: "make the file and its folder writable, then retry.",
        StoreFault.CORRUPT: "the file is damaged: restore it from a backup or move it away; "
        "units stored in it may be lost.",
        StoreFault.IO: "check the file system the store lives on.",
    }
    return StoreError(fault, path, f"SQLite failed: {text} ({type(exc).__name__}).", hints[fault])
