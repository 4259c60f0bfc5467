"""Reading a production log: files to the requests of each conversation.

:func:`read_log` takes files and folders (a folder is every file in it, in
name order) and reads each as JSON lines, one JSON value (an object or a
list), or JSON objects one after another (the OpenTelemetry SDK's console
exporter).  Each record is a span (:mod:`.spans`), a LangSmith run or a raw
request (:mod:`.runs`), told apart by its fields.  Requests are grouped by
conversation (see each reader) and ordered by time; records without a time
keep their order in the log.

Bad input — a file that is not JSON, not UTF-8, holds a lone surrogate,
nests too deeply, or holds nothing that is a model request — raises
:class:`~prunecheck.model.errors.TranscriptError` naming the file and line.
Requests that cannot be read but do not stop the import (a span whose
content was cut or not captured) are returned as gaps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prunecheck.model.errors import TranscriptError
from prunecheck.model.trace import MAX_CHARS, MAX_DEPTH, depth_ok
from prunecheck.sim.ingest.records import LogFormat, LoggedRequest, Source
from prunecheck.sim.ingest.runs import is_run, request_of_record, request_of_run
from prunecheck.sim.ingest.spans import Span, is_span, request_of_span, spans_of
from prunecheck.sim.support.inputs import check_input, read_input

__all__ = ["Log", "read_log"]

_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_FORMATS = {"otel": "span", "openinference": "span", "langsmith": "run"}


@dataclass(slots=True)
class Log:
    """What a log holds: each conversation's requests, in time order, and
    the requests that could not be read."""

    conversations: dict[str, list[LoggedRequest]] = field(default_factory=dict)
    gaps: dict[str, list[str]] = field(default_factory=dict)
    unrelated: int = 0


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, JSON value) for each record of one file."""
    name = str(path)
    try:
        data = read_input(path, "a log")  # a FIFO or a device: refused, never waited on
    except OSError as exc:
        raise TranscriptError(
            name, f"cannot be read: {exc.strerror}.", "pass a log file."
        ) from None
    if len(data) > MAX_CHARS:
        raise TranscriptError(name, f"is over {MAX_CHARS} bytes.", "split the log by day.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            name, f"is not UTF-8 text (byte {exc.start}).", "pass the log as the exporter wrote it."
        ) from None
    if not depth_ok(text, MAX_DEPTH):
        raise TranscriptError(
            name, f"nests JSON deeper than {MAX_DEPTH} levels.", "no model request nests so deep."
        )
    for lone in _SURROGATE.finditer(text):
        before = text[max(0, lone.start() - 6) : lone.start()]
        after = text[lone.end() : lone.end() + 6]
        pair = re.match(r"\\u[dD][c-fC-F]", after) if lone.group()[3] in "89abAB" else None
        paired = (
            re.search(r"\\u[dD][89abAB][0-9a-fA-F]{2}$", before) and lone.group()[3] in "cdefCDEF"
        )
        if pair is None and not paired:
            line = text.count("\n", 0, lone.start()) + 1
            raise TranscriptError(
                f"{name}: line {line}",
                f"holds the escape {lone.group()}, a lone surrogate: not a Unicode character, "
                "so no provider received it as written.",
                "the log was cut inside an emoji or written by a broken encoder; fix that line.",
            )
    decoder = json.JSONDecoder()
    stripped = text.strip()
    if not stripped:
        return
    if stripped[0] == "[":
        yield from _whole(name, stripped, decoder)
        return
    at, line = 0, 1
    while at < len(text):
        while at < len(text) and text[at] in " \t\r\n":
            line += text[at] == "\n"
            at += 1
        if at >= len(text):
            break
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise TranscriptError(
                f"{name}: line {exc.lineno}",
                f"is not JSON ({exc.msg}, column {exc.colno}).",
                "each line of a log is one JSON object; a line cut short (a full disk, a "
                "killed exporter) must be removed.",
            ) from None
        yield f"{name}: line {line}", value
        line += text.count("\n", at, end)
        at = end


def _whole(name: str, text: str, decoder: json.JSONDecoder) -> Iterator[tuple[str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            f"{name}: line {exc.lineno}",
            f"is not JSON ({exc.msg}, column {exc.colno}).",
            "pass the log as the exporter wrote it.",
        ) from None
    for i, item in enumerate(value):
        yield f"{name}: [{i}]", item


@contextmanager
def _shaped(where: str, kind: str) -> Iterator[None]:
    """A record whose fields do not have the types its kind gives them is
    bad input: one paragraph naming it, never a traceback."""
    try:
        yield
    except (TypeError, AttributeError, ValueError, KeyError, IndexError) as exc:
        what = {"span": "an OpenTelemetry span", "run": "a LangSmith run",
                "request": "a logged request"}[kind]  # fmt: skip
        raise TranscriptError(
            where,
            f"looks like {what} but a field has the wrong type or is missing "
            f"({type(exc).__name__}: {exc}).",
            "pass the log as the exporter wrote it; a hand-edited record must keep its types.",
        ) from None


def _files(paths: Sequence[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        check_input(path, "a log", folder=True)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            if not found:
                raise TranscriptError(str(path), "is an empty folder.", "pass the log's files.")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise TranscriptError(str(path), "does not exist.", "check the path.")
    return out


def read_log(
    paths: Sequence[Path], *, key: str | None = None, hint: LogFormat | None = None
) -> Log:
    """Read every request of every file (see the module notes)."""
    log = Log()
    spans: list[tuple[Span, str]] = []
    requests: list[LoggedRequest] = []
    for path in _files(paths):
        for where, record in _records(path):
            if not isinstance(record, Mapping):
                raise TranscriptError(
                    where,
                    f"is a JSON {type(record).__name__}, not an object.",
                    "a log holds one JSON object per request, span or run.",
                )
            source = Source(str(path), where.rpartition(": ")[2])
            kind = "span" if is_span(record) else "run" if is_run(record) else "request"
            with _shaped(where, kind):
                if kind == "span":
                    spans.extend((s, str(path)) for s in spans_of(record, source.where))
                elif kind == "run":
                    found = request_of_run(record, key, source, hint)
                    if found is None:
                        log.unrelated += 1
                    else:
                        requests.append(found)
                else:
                    requests.append(request_of_record(record, key, source, hint))
    requests.extend(_span_requests(spans, key, log))
    if not requests and not log.gaps:
        what = "span" if spans else "record"
        raise TranscriptError(
            ", ".join(str(p) for p in paths),
            f"holds {len(spans) or log.unrelated} {what}(s) but no model request "
            "(no gen_ai.input.messages, llm.input_messages, llm run or request body).",
            "pass the spans of the model calls (their content captured), a LangSmith run "
            "export or the logged request bodies.",
        )
    indexed = sorted(
        enumerate(requests),
        key=lambda p: (p[1].conversation, p[1].at if p[1].at is not None else 0.0, p[0]),
    )
    for _, request in indexed:
        log.conversations.setdefault(request.conversation, []).append(request)
    for name, held in log.conversations.items():
        other = next((r for r in held if r.provider is not held[0].provider), None)
        if other is not None:
            raise TranscriptError(
                f"conversation {name}",
                f"mixes {held[0].provider} requests ({held[0].source}) with "
                f"{other.provider} requests ({other.source}); one conversation talks to "
                "one provider.",
                "pass each provider's log separately, or group with --key.",
            )
    if not log.conversations:
        first = next(iter(log.gaps.values()))[0]
        raise TranscriptError(
            ", ".join(str(p) for p in paths),
            f"holds no model request that can be read: {first}.",
            "capture the message content in full (for OpenTelemetry GenAI: "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, and an attribute length "
            "limit above the longest request).",
        )
    return log


def _span_requests(spans: list[tuple[Span, str]], key: str | None, log: Log) -> list[LoggedRequest]:
    by_id = {s.span_id: s for s, _ in spans}
    out = []
    for span, file in spans:
        conversation = _conversation(span, by_id, key)
        with _shaped(f"{file} ({span.where})", "span"):
            found = request_of_span(span, conversation, file)
        if found is None:
            log.unrelated += 1
        elif isinstance(found, str):
            log.gaps.setdefault(conversation, []).append(found)
        else:
            out.append(found)
    return out


def _conversation(span: Span, by_id: dict[str, Span], key: str | None) -> str:
    names = (key,) if key else ("gen_ai.conversation.id", "session.id", "thread.id")
    node: Span | None = span
    hops = 0
    while node is not None and hops < 64:
        for name in names:
            value = node.attributes.get(name or "")
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                return str(value)
        node = by_id.get(node.parent_id or "")
        hops += 1
    return f"trace {span.trace_id}"
