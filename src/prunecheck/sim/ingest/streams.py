"""Streaming a log file: one JSON record at a time, in bounded memory.

:func:`records` reads three layouts without holding the file:

* JSON lines (one record a line; the Collector's file exporter, raw
  request logs, LangSmith exports);
* JSON values one after another, each over several lines (the OpenTelemetry
  SDK's console exporter: a record ends with a ``}`` in the first column);
* one JSON list (``[{...}, {...}]``, even on one line of a gigabyte): its
  elements are read one by one.

Every record is checked before it is handed on: UTF-8, no lone surrogate
escape (``\\ud83d`` alone: half an emoji, no provider received that), at
most :data:`~prunecheck.model.trace.MAX_DEPTH` levels of nesting, at most
:data:`MAX_RECORD` bytes.  A record that fails is bad input
(:class:`~prunecheck.model.errors.TranscriptError` naming the file and
line), never a traceback, a ``RecursionError`` or a ``MemoryError``.

Memory: one record (and one read buffer) at a time.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from prunecheck.model.errors import TranscriptError
from prunecheck.model.trace import MAX_DEPTH
from prunecheck.sim.support.inputs import open_input

__all__ = ["MAX_RECORD", "Record", "records", "shown"]

#: The most bytes one record (a line, a list element) may hold: twice the
#: largest request a provider takes (Anthropic's Messages API: 32 MB).
MAX_RECORD = 64 * 2**20
_CHUNK = 2**20
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")
_DECODER = json.JSONDecoder()

#: (where, the JSON value, its text, bytes of the file read so far)
Record = tuple[str, Any, str, int]


def shown(path: str | Path) -> str:
    """``path`` as printable text: bytes of a name that are not UTF-8 (a file
    named on another system) as ``\\xNN`` escapes.

    >>> shown(os.fsdecode(b"log-\\xff.jsonl"))
    'log-\\\\xff.jsonl'
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def records(path: Path, name: str) -> Iterator[Record]:
    """Each record of the log file ``path`` (shown as ``name``), in order."""
    try:
        handle = open_input(path, "a log", name=name)
    except OSError as exc:
        raise TranscriptError(
            name, f"cannot be read: {exc.strerror}.", "pass a log file."
        ) from None
    with handle:
        head = handle.read(max(_CHUNK, len(codecs.BOM_UTF8)))
        if head.startswith(codecs.BOM_UTF8):  # as some Windows tools write UTF-8
            head = head[len(codecs.BOM_UTF8) :]
        while not head.lstrip() and len(head) <= MAX_RECORD:  # blank so far
            more = handle.read(_CHUNK)
            if not more:
                break
            head += more
        if head.lstrip()[:1] == b"[":
            yield from _elements(handle, name, head)
        else:
            yield from _lines(handle, name, head)


def _too_big(where: str) -> TranscriptError:
    return TranscriptError(
        where,
        f"holds a record of more than {MAX_RECORD:,} bytes: no model request is that large "
        "(Anthropic's limit is 32 MB, OpenAI's lower).",
        "a line that large is not one request or span: split the export into smaller "
        "batches (the Collector's send_batch_max_size) or remove the line.",
    )


def _text(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            where,
            f"is not UTF-8 text (byte {exc.start} of the line).",
            "pass the log as the exporter wrote it.",
        ) from None


def _checked(text: str, where: str) -> None:
    """Refuse a record holding a lone surrogate escape or nesting too deeply."""
    if "\\u" in text:
        for lone in _SURROGATE.finditer(text):
            before = text[max(0, lone.start() - 6) : lone.start()]
            after = text[lone.end() : lone.end() + 6]
            high = lone.group()[3] in "89abAB"
            pair = re.match(r"\\u[dD][c-fC-F]", after) if high else None
            paired = not high and re.search(r"\\u[dD][89abAB][0-9a-fA-F]{2}$", before)
            if pair is None and not paired:
                raise TranscriptError(
                    where,
                    f"holds the escape {lone.group()}, a lone surrogate: not a Unicode "
                    "character, so no provider received it as written.",
                    "the log was cut inside an emoji or written by a broken encoder; fix "
                    "that line.",
                )
    if too_deep(text, MAX_DEPTH):
        raise _deep(where)


def _deep(where: str) -> TranscriptError:
    return TranscriptError(
        where, f"nests JSON deeper than {MAX_DEPTH} levels.", "no model request nests so deep."
    )


def too_deep(text: str, limit: int) -> bool:
    """Whether the brackets of the JSON ``text`` (outside strings) nest more
    than ``limit`` deep.  O(len(text)) in the regular expression engine:
    strings removed, then innermost pairs ``limit`` times.

    >>> too_deep('{"a": [1, "[[[["]}', 2), too_deep("[[[]]]", 2)
    (False, True)
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        brackets = _PAIR.sub("", brackets)
        if not brackets:
            return False
    return True


def _values(text: str, where: str, line: int) -> tuple[list[tuple[Any, str]], bool]:
    """The values of ``text`` and whether the last one is still open (its
    record goes on in the next lines)."""
    out: list[tuple[Any, str]] = []
    at = 0
    end = len(text.rstrip())
    while True:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at >= end:
            return out, False
        try:
            value, stop = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            if exc.pos >= end and not out:
                return out, True
            raise TranscriptError(
                f"{where}: line {line + exc.lineno - 1}",
                f"is not JSON ({exc.msg}, column {exc.colno}).",
                "each line of a log is one JSON object; a line cut short (a full disk, a "
                "killed exporter) must be removed.",
            ) from None
        except RecursionError:
            raise _deep(f"{where}: line {line}") from None
        except ValueError as exc:  # an integer of more than 4,300 digits
            raise TranscriptError(
                f"{where}: line {line}",
                f"holds a value that is not one ({exc}).",
                "pass the log as the exporter wrote it.",
            ) from None
        out.append((value, text[at:stop]))
        at = stop


def _lines(handle: IO[bytes], name: str, head: bytes) -> Iterator[Record]:
    """JSON lines, or JSON values one after another over several lines."""
    pending: list[str] = []
    size = start = line = read = 0
    for raw in _split(handle, head):
        line += 1
        read += len(raw)
        if len(raw) > MAX_RECORD:
            raise _too_big(f"{name}: line {line}")
        text = _text(raw, f"{name}: line {line}")
        if not pending:
            if not text.strip():
                continue
            start = line
        elif len(pending) == 1 and pending[0].strip() not in ("{", "[") and text[:1] in ("{", "["):
            # a JSON line left open, and a new record: that line was cut short
            raise TranscriptError(
                f"{name}: line {start}",
                f"is not JSON (a record cut short: the next one starts on line {line}).",
                "a line cut short (a full disk, a killed exporter) must be removed.",
            )
        pending.append(text)
        size += len(raw)
        if size > MAX_RECORD:
            raise _too_big(f"{name}: line {start}")
        if len(pending) > 1 and text[:1] not in ("}", "]"):
            continue  # a record over several lines ends with } in the first column
        body = text if len(pending) == 1 else "".join(pending)
        values, still_open = _values(body, name, start)
        if still_open:
            continue
        pending, size = [], 0
        for value, part in values:
            _checked(part, f"{name}: line {start}")
            yield f"{name}: line {start}", value, part, read
    if pending:
        raise TranscriptError(
            f"{name}: line {start}",
            "is not JSON (the file ends inside this record).",
            "the log was cut short (a full disk, a killed exporter): remove the last record.",
        )


def _split(handle: IO[bytes], head: bytes) -> Iterator[bytes]:
    """The lines of ``head`` then the rest of ``handle``, each at most
    :data:`MAX_RECORD` + 1 bytes (a longer one is cut there, and refused)."""
    at = 0
    while True:
        stop = head.find(b"\n", at)
        if stop < 0:
            rest = head[at:]
            break
        yield head[at : stop + 1]
        at = stop + 1
    if rest:
        more = handle.readline(MAX_RECORD + 1 - len(rest))
        yield rest + more
    while True:
        raw = handle.readline(MAX_RECORD + 1)
        if not raw:
            return
        yield raw


def _elements(handle: IO[bytes], name: str, head: bytes) -> Iterator[Record]:
    """The elements of one JSON list, one at a time."""
    lst = _List(handle, name, head)
    lst.pos = lst.buffer.index("[") + 1
    index = 0
    while True:
        where = f"{name}: [{index}]"
        lst.skip()
        if lst.buffer[lst.pos] == "]":
            lst.pos += 1
            if lst.rest():
                raise TranscriptError(
                    name, "holds more after its JSON list.", "pass one list, or JSON lines."
                )
            return
        if index:
            if lst.buffer[lst.pos] != ",":
                raise TranscriptError(
                    where, f"is not JSON (expected ',' before element {index}).",
                    "pass the log as the exporter wrote it.",
                )  # fmt: skip
            lst.pos += 1
            lst.skip()
        value, part = lst.value(where)
        _checked(part, where)
        yield where, value, part, lst.read
        index += 1


class _List:
    """A JSON list read in chunks: a text buffer and a position in it."""

    def __init__(self, handle: IO[bytes], name: str, head: bytes) -> None:
        self.handle, self.name = handle, name
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.read, self.eof = len(head), False
        self.buffer, self.pos = self.decode(head, False), 0

    def decode(self, raw: bytes, final: bool) -> str:
        try:
            return str(self.decoder.decode(raw, final))
        except UnicodeDecodeError as exc:
            raise TranscriptError(
                self.name,
                f"is not UTF-8 text (about byte {self.read - len(raw) + exc.start}).",
                "pass the log as the exporter wrote it.",
            ) from None

    def more(self, want: int = 0) -> None:
        """Read on (at least ``want`` bytes, for amortized linear time),
        dropping what was read before the position."""
        raw = self.handle.read(max(_CHUNK, want))
        self.read += len(raw)
        self.eof = not raw
        self.buffer, self.pos = self.buffer[self.pos :] + self.decode(raw, not raw), 0

    def skip(self) -> None:
        """Past whitespace, reading on as needed; the end of the file inside
        the list is bad input."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return
            if self.eof:
                raise TranscriptError(
                    self.name,
                    "is not JSON (the file ends inside its list).",
                    "the log was cut short: pass it whole.",
                )
            self.more()

    def rest(self) -> bool:
        """Whether anything but whitespace follows the list."""
        while True:
            if self.buffer[self.pos :].strip():
                return True
            if self.eof:
                return False
            self.more()

    def value(self, where: str) -> tuple[Any, str]:
        """The JSON value at the position and its text, reading on until it
        is whole."""
        while True:
            try:
                value, stop = _DECODER.raw_decode(self.buffer, self.pos)
                if stop < len(self.buffer) or self.eof:
                    break
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise TranscriptError(
                        where, f"is not JSON ({exc.msg}).", "pass the log as the exporter wrote it."
                    ) from None
            except RecursionError:
                raise _deep(where) from None
            except ValueError as exc:  # an integer of more than 4,300 digits
                raise TranscriptError(
                    where, f"holds a value that is not one ({exc}).",
                    "pass the log as the exporter wrote it.",
                ) from None  # fmt: skip
            if len(self.buffer) - self.pos > MAX_RECORD:
                raise _too_big(where)
            self.more(len(self.buffer) - self.pos)
        part = self.buffer[self.pos : stop]
        if len(part) > MAX_RECORD:
            raise _too_big(where)
        self.pos = stop
        if self.pos > _CHUNK and self.pos * 2 > len(self.buffer):
            self.buffer, self.pos = self.buffer[self.pos :], 0
        return value, part
