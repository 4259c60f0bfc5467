"""Reading one large JSON object a member at a time, and one list member an
element at a time, from a file in any layout (one line, pretty-printed …).

:func:`members` walks the top-level object of a file read in chunks: it
yields each member's key and value, except for the member named ``stream``
(a list), whose elements it yields one by one as they are decoded, so that
memory holds one element, not the list.  It is what reads a large trace that
is not in the layout prunecheck writes (:mod:`.trace_file`): the events
stream, the header is a few small values.

Anything that is not one JSON object whose ``stream`` member is a list —
bad JSON, a value nested deeper than ``max_depth``, text after the object,
the member twice — raises :class:`NotStreamable`; the caller then parses
the file whole, which names the problem as the JSON parser does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from json.scanner import make_scanner
from pathlib import Path
from typing import TextIO

from prunecheck.model.trace import depth_ok

__all__ = ["ELEMENT", "END", "NotStreamable", "members"]

#: The key :func:`members` yields with each element of the streamed list.
ELEMENT = object()
#: The key :func:`members` yields once the streamed list has ended (value: its length).
END = object()

_WS = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20


class NotStreamable(Exception):
    """The file is not one JSON object with the streamed list (see the module)."""


class _Reader:
    """A window on the file's text: ``buf[pos:]`` is what is not read yet."""

    __slots__ = ("buf", "eof", "handle", "max_depth", "pos", "scan")

    def __init__(self, handle: TextIO, max_depth: int) -> None:
        self.handle = handle
        self.buf, self.pos, self.eof = "", 0, False
        self.scan = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the C scanner
        self.max_depth = max_depth

    def more(self) -> bool:
        """Read the next chunk; False at the end of the file."""
        if self.eof:
            return False
        chunk = self.handle.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            end = _WS.match(self.buf, self.pos)
            self.pos = end.end() if end else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise NotStreamable
        self.pos += 1

    def value(self) -> object:
        """The next JSON value, whole (read more of the file as needed)."""
        self.peek()
        while True:
            try:
                value, end = self.scan(self.buf, self.pos)
            except (StopIteration, json.JSONDecodeError):
                if self.more():  # cut by the chunk's end, perhaps
                    continue
                raise NotStreamable from None
            except RecursionError:
                raise NotStreamable from None
            if end == len(self.buf) and self.more():
                continue  # a number may go on in the next chunk
            break
        buf, start = self.buf, self.pos
        if isinstance(value, dict | list):
            brackets = buf.count("[", start, end) + buf.count("{", start, end)
            if brackets > self.max_depth and not depth_ok(buf[start:end], self.max_depth):
                raise NotStreamable
        self.pos = end
        return value


def members(path: Path, stream: str, max_depth: int) -> Iterator[tuple[object, object]]:
    """``(key, value)`` for each member of the file's top-level object, in
    file order; for the member ``stream``, ``(ELEMENT, element)`` for each of
    its elements, then ``(END, count)``.

    Raises
    ------
    NotStreamable
        if the file is not one JSON object whose ``stream`` member is a list
        (checked as far as the walk has gone).
    OSError, UnicodeDecodeError
        if the file cannot be read as UTF-8 text.
    """
    with path.open(encoding="utf-8", newline="") as handle:
        reader = _Reader(handle, max_depth)
        reader.expect("{")
        seen: set[str] = set()
        if reader.peek() == "}":
            reader.pos += 1
        else:
            while True:
                key = reader.value()
                if not isinstance(key, str) or key in seen:
                    raise NotStreamable
                seen.add(key)
                reader.expect(":")
                if key == stream:
                    yield END, (yield from _elements(reader))
                else:
                    yield key, reader.value()
                after = reader.peek()
                reader.pos += 1
                if after == "}":
                    break
                if after != ",":
                    raise NotStreamable
        if reader.peek() != "" or stream not in seen:
            raise NotStreamable


def _elements(reader: _Reader) -> Generator[tuple[object, object], None, int]:
    """Each element of the list at the reader; returns how many there were."""
    reader.expect("[")
    count = 0
    if reader.peek() == "]":
        reader.pos += 1
        return count
    while True:
        yield ELEMENT, reader.value()
        count += 1
        after = reader.peek()
        reader.pos += 1
        if after == "]":
            return count
        if after != ",":
            raise NotStreamable
