"""Reading a trace file for replay: small ones whole, large ones streamed.

A trace prunecheck wrote (:func:`prunecheck.model.trace.dumps`) has its
header on the first lines and one event per line.  A large file in that
layout is replayed without holding its events: the header is parsed and
validated as a trace with no events, the event lines are counted, and the
events are read again one line at a time while the replay runs — memory
holds the context, not the file.  A large file in any other layout (one
line, pretty-printed by another tool) streams too: a first pass walks the
JSON (:mod:`.json_stream`) for the header and the number of events, and the
replay reads the events again one at a time.  Every small file, and a large
one that is not well-formed, is parsed whole (bounded in size and nesting,
see :func:`~prunecheck.model.trace.loads`), which names what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import overload

from prunecheck.model.errors import TraceError
from prunecheck.model.events import Event, event_from_json
from prunecheck.model.trace import MAX_DEPTH, Trace, depth_ok, loads, trace_from_json
from prunecheck.sim.evidence.json_stream import ELEMENT, END, NotStreamable, members
from prunecheck.sim.support.inputs import check_input, read_input

__all__ = ["STREAM_BYTES", "read_trace"]

#: Files at least this large are streamed when their layout allows it.
STREAM_BYTES = 4 * 2**20
_EVENTS = '  "events": ['


class _LazyEvents(Sequence[Event]):
    """The events of a trace file, read again at each iteration."""

    def __init__(self, path: Path, count: int) -> None:
        self._path, self._count = path, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Event]:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | Sequence[Event]:
        events = tuple(self)  # random access reads the file (rare: replay iterates)
        return events[index]


class _FileEvents(_LazyEvents):
    """The events of a trace file in prunecheck's layout, one line at a time."""

    def __init__(self, path: Path, start: int, count: int) -> None:
        super().__init__(path, count)
        self._start = start

    def __iter__(self) -> Iterator[Event]:
        decode = json.JSONDecoder().decode
        prefix = f"{self._path}: events["
        with self._path.open(encoding="utf-8", buffering=1 << 20) as handle:
            handle.seek(self._start)
            for i in range(self._count):
                line = handle.readline().strip().rstrip(",")
                where = prefix + str(i) + "]"
                # a line with fewer brackets than the limit cannot nest deeper (cheap)
                shallow = line.count("[") + line.count("{") <= MAX_DEPTH
                if not shallow and not depth_ok(line, MAX_DEPTH):
                    raise TraceError(where, f"nests JSON deeper than {MAX_DEPTH} levels.")
                try:
                    data = decode(line)
                except json.JSONDecodeError as exc:
                    raise TraceError(
                        where,
                        f"is not JSON ({exc.msg}).",
                        "a trace is the JSON file prunecheck wrote.",
                    ) from None
                yield event_from_json(data, where)


class _WalkedEvents(_LazyEvents):
    """The events of a trace file in any layout, walked one value at a time."""

    def __iter__(self) -> Iterator[Event]:
        prefix = f"{self._path}: events["
        i = 0
        try:
            for key, value in members(self._path, "events", MAX_DEPTH):
                if key is ELEMENT:
                    yield event_from_json(value, prefix + str(i) + "]")
                    i += 1
                elif key is END:
                    return
        except NotStreamable:
            raise TraceError(
                str(self._path),
                f"is no longer the JSON it was when the replay started (at events[{i}]).",
                "do not change a trace while it replays.",
            ) from None


def _streamed(path: Path) -> Trace | None:
    """The trace with lazily read events, or None if the layout is not ours:
    a first line ``{``, the header, the events line, one event a line (each
    ``{...}`` or ``{...},``), ``]`` and ``}``."""
    header: list[str] = []
    with path.open("rb") as handle:
        if handle.readline(64) != b"{\n":  # not ours (a one-line file is not read whole)
            return None
        header.append("{")
        for raw in handle:
            line = raw.decode("utf-8").rstrip("\n")
            if line == _EVENTS:
                break
            header.append(line)
            if len(header) > 64:
                return None
        else:
            return None
        start = handle.tell()
        count = 0
        closed = False
        for raw in handle:
            event = raw.strip()
            if event == b"]":
                closed = True
                break
            if not event.startswith(b"{") or not event.endswith((b"}", b"},")):
                return None  # an event over several lines: not ours
            count += 1
        if not closed or handle.read(64).strip() != b"}":
            return None  # nothing may follow the events but the end of the object
    if not header or header[0] != "{":
        return None
    text = "\n".join(header).rstrip().rstrip(",") + ', "events": []}'
    if not depth_ok(text, MAX_DEPTH):
        return None  # the whole-file parse names the problem
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    times = data.pop("times", None)
    bare = trace_from_json(data, str(path))  # validates format, policy, config, meta
    if times is not None:
        times = _times(times, count, str(path))
    lazy: Sequence[Event] = _FileEvents(path, start, count)
    return replace(bare, events=lazy, times=times)  # type: ignore[arg-type]


def _walked(path: Path) -> Trace | None:
    """The trace with lazily walked events, or None if the file is not one
    well-formed JSON object with a list of events."""
    header: dict[str, object] = {}
    count = 0
    try:
        for key, value in members(path, "events", MAX_DEPTH):
            if key is ELEMENT:
                count += 1
            elif key is not END:
                header[str(key)] = value
    except NotStreamable:
        return None
    times = header.pop("times", None)
    bare = trace_from_json({**header, "events": []}, str(path))
    if times is not None:
        times = _times(times, count, str(path))
    lazy: Sequence[Event] = _WalkedEvents(path, count)
    return replace(bare, events=lazy, times=times)  # type: ignore[arg-type]


def _times(times: object, count: int, source: str) -> tuple[float, ...]:
    """The checks of :func:`~prunecheck.model.trace.trace_from_json` on ``times``."""
    ok = (
        isinstance(times, list)
        and len(times) == count
        and all(
            isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
            for t in times
        )
    )
    if not ok:
        raise TraceError(source, "'times' must be a list of finite numbers, one per event.")
    assert isinstance(times, list)
    out = tuple(float(t) for t in times)
    late = next((i for i in range(1, len(out)) if out[i] < out[i - 1]), None)
    if late is not None:
        raise TraceError(
            f"{source}: times[{late}]",
            f"is {out[late]:g}, earlier than the "
            f"event before it ({out[late - 1]:g}); time never runs backwards.",
            "times must not decrease.",
        )
    return out


def read_trace(path: Path) -> Trace:
    """The trace in ``path``; TraceError naming the file if it is not one."""
    check_input(path, "a trace")  # a FIFO or a device: refused, never waited on
    try:
        size = path.stat().st_size
        if size >= STREAM_BYTES:
            found = _streamed(path) or _walked(path)
            if found is not None:
                return found
        text = read_input(path, "a trace").decode("utf-8")
    except FileNotFoundError:
        raise TraceError(
            str(path), "does not exist.", "give the path of a trace JSON file."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(str(path), f"cannot be read ({exc}).") from None
    return loads(text, str(path))
