"""Reading a production log: files to the requests of each conversation.

:func:`read_log` takes files and folders (a folder is every file in it, in
name order) and reads each as JSON lines, one JSON list, or JSON objects
one after another (the OpenTelemetry SDK's console exporter).  Each record
is a span (:mod:`.spans`), a LangSmith run or a raw request (:mod:`.runs`),
told apart by its fields.  Requests are grouped by conversation (see each
reader) and ordered by time; records without a time keep their order in
the log.

A log is streamed, one record at a time (:mod:`.streams`): what is kept is
each request's messages, shared between the requests that send the same
message again (a request resends its history, so a log is mostly repeats),
and a few ids per span to find its conversation.  Memory grows with what
the log says once, not with its size.  A span seen twice (a log shipped
twice, the same file named twice) is read once and counted.

Bad input — a file that is not JSON, not UTF-8, holds a lone surrogate,
nests too deeply, a record over :data:`~.streams.MAX_RECORD` bytes, or
nothing that is a model request — raises
:class:`~prunecheck.model.errors.TranscriptError` naming the file and line.
Requests that cannot be read in full do not stop the import: they are
:class:`~.records.Incomplete`, counted and named with their reason.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import validate
from prunecheck.sim.ingest.agents_tracing import PROCESSOR_HINT, RESPONSE_GAP
from prunecheck.sim.ingest.exports import RECORD_READERS, SPAN_READERS
from prunecheck.sim.ingest.lineage import threads_of
from prunecheck.sim.ingest.records import (
    Incomplete,
    LogFormat,
    LoggedMessage,
    LoggedRequest,
    Source,
    provider_body,
)
from prunecheck.sim.ingest.recovery import from_run_history, recover
from prunecheck.sim.ingest.runs import is_run, request_of_record, request_of_run
from prunecheck.sim.ingest.spans import (
    UNLOGGED,
    Span,
    ToolRun,
    history_of_run,
    is_span,
    rejection_of,
    request_of_span,
    spans_of,
    tool_run_of_span,
)
from prunecheck.sim.ingest.streams import records, shown
from prunecheck.sim.ingest.truncation import (
    cut_messages,
    dropped_note,
    length_note,
    proven_length,
)
from prunecheck.sim.support.inputs import check_input
from prunecheck.sim.support.outputs import file_kind

__all__ = ["Log", "read_log"]

_R = TypeVar("_R", LoggedRequest, Incomplete)
_NAMES = ("gen_ai.conversation.id", "session.id", "thread.id")
_LATEST = 2**33  # seconds since the epoch: the year 2242; a later time is not one


@dataclass(slots=True)
class Log:
    """What a log holds: each conversation's requests, in time order, the
    requests it shows only in part, and what it could not see.

    Attributes
    ----------
    conversations : dict[str, list[LoggedRequest]]
        The requests read in full, by conversation, in time order.
    incomplete : dict[str, list[Incomplete]]
        The requests shown only in part, by conversation, in time order.
    unrelated : int
        Spans or runs that record no model call.
    duplicates : int
        Records read before (the same span or run id, the same raw record
        with the same time): counted once.
    notes : list[str]
        What the log as a whole could not show or what was set aside (a file
        named twice, duplicated records, times that are not times).
    size : int
        Bytes read.
    ran : dict[str, dict[str, int]]
        The tool runs the log's tool spans record with their call id, by
        conversation: call id -> characters of output (what a result that no
        request carries is known by).
    """

    conversations: dict[str, list[LoggedRequest]] = field(default_factory=dict)
    incomplete: dict[str, list[Incomplete]] = field(default_factory=dict)
    unrelated: int = 0
    duplicates: int = 0
    notes: list[str] = field(default_factory=list)
    size: int = 0
    ran: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def gaps(self) -> dict[str, list[str]]:
        """Each conversation's incomplete requests, as sentences."""
        return {name: [str(i) for i in found] for name, found in self.incomplete.items()}

    def counted(self, name: str) -> tuple[int, int]:
        """(requests, incomplete ones) of conversation ``name``."""
        partial = len(self.incomplete.get(name, ()))
        return len(self.conversations.get(name, ())) + partial, partial


@contextmanager
def _shaped(where: str, kind: str) -> Iterator[None]:
    """A record whose fields do not have the types its kind gives them is
    bad input: one paragraph naming it, never a traceback."""
    what = {"span": "an OpenTelemetry span", "run": "a LangSmith run",
            "request": "a logged request"}.get(kind, kind)  # fmt: skip
    try:
        yield
    except RecursionError:
        raise TranscriptError(
            where,
            f"looks like {what} but a value in it nests too deeply to read.",
            "no model request nests so deep; pass the log as the exporter wrote it.",
        ) from None
    except (OverflowError, ArithmeticError) as exc:
        raise TranscriptError(
            where,
            f"looks like {what} but holds a number too large to read ({exc}).",
            "pass the log as the exporter wrote it.",
        ) from None
    except (TypeError, AttributeError, ValueError, KeyError, IndexError) as exc:
        raise TranscriptError(
            where,
            f"looks like {what} but a field has the wrong type or is missing "
            f"({type(exc).__name__}: {exc}).",
            "pass the log as the exporter wrote it; a hand-edited record must keep its types.",
        ) from None


def _files(paths: Sequence[Path], log: Log) -> list[Path]:
    out: list[Path] = []
    seen: dict[tuple[int, int], Path] = {}
    for path in paths:
        check_input(path, "a log", folder=True, name=shown(path))
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
            for odd in sorted(p for p in path.rglob("*") if not p.is_file() and not p.is_dir()):
                kind = file_kind(odd.lstat().st_mode) or "a broken link"
                log.notes.append(f"{shown(odd)} is {kind}, not a log file: left out unread")
            if not found:
                raise TranscriptError(shown(path), "is an empty folder.", "pass the log's files.")
        elif path.exists():
            found = [path]
        else:
            raise TranscriptError(shown(path), "does not exist.", "check the path.")
        for file in found:
            info = os.stat(file)
            first = seen.setdefault((info.st_dev, info.st_ino), file)
            if first is not file:
                log.notes.append(
                    f"{shown(file)} is the file {shown(first)} again (named twice): read once"
                )
                continue
            out.append(file)
    return out


class _Reader:
    """The state of one read: requests so far, the span index, what was seen."""

    def __init__(self, log: Log, key: str | None, hint: LogFormat | None) -> None:
        self.log, self.key, self.hint = log, key, hint
        self.names = (key,) if key else _NAMES
        self.requests: list[LoggedRequest] = []
        self.partial: list[Incomplete] = []
        # spans: id -> (parent id, its own conversation name or None)
        self.parents: dict[str, tuple[str | None, str | None]] = {}
        self.traced: list[tuple[int, bool, str, str]] = []  # (index, partial?, span, trace)
        self.seen: set[object] = set()
        self.shared: dict[LoggedMessage, LoggedMessage] = {}
        self.spans = 0
        self.untimed: set[int] = set()  # requests whose time is not one
        self.products = [
            make(key, self.thin) for make in RECORD_READERS
        ]  # their own formats (exports.py)
        # what recovers a failed request whose span holds no messages (.recovery):
        self.tools: list[tuple[str, str, ToolRun]] = []  # (span, trace, tool run)
        self.pending: dict[str, list[tuple[str, ToolRun]]] = {}  # trace -> since its last call
        self.histories: dict[str, tuple[LoggedMessage, ...]] = {}  # agent run spans
        self.wanted: set[str] = set()  # spans above a failed call without messages
        self.unlogged: list[tuple[int, str]] = []  # (request index, span)
        self.runs: dict[str, list[ToolRun]] = {}  # conversation -> its tool runs
        self.ran: list[tuple[str, str, str, int]] = []  # (span, trace, call id, output size)

    def take(self, file: str, where: str, record: object, text: str) -> None:
        if not isinstance(record, Mapping):
            raise TranscriptError(
                where,
                f"is a JSON {type(record).__name__}, not an object.",
                "a log holds one JSON object per request, span or run.",
            )
        source = Source(file, where.rpartition(": ")[2])
        product = next((r for r in self.products if r.takes(record)), None)
        if product is not None:
            with _shaped(where, product.what):
                product.add(record, source)
            return
        kind = "span" if is_span(record) else "run" if is_run(record) else "request"
        with _shaped(where, kind):
            if kind == "span":
                for span in spans_of(record, source.where):
                    self.span(span, file)
                return
            identity: object = ("record", _digest(text))
            if kind == "run" and record.get("id"):
                identity = ("run", str(record.get("id")))
            if identity in self.seen:
                self.log.duplicates += 1
                return
            if kind == "run":
                found = request_of_run(record, self.key, source, self.hint)
                if found is None:
                    self.log.unrelated += 1
                    return
            else:
                found = request_of_record(record, self.key, source, self.hint)
            if found.at is not None:  # a raw record without a time may be sent twice
                self.seen.add(identity)
            self.requests.append(self.slim(found))

    def span(self, span: Span, file: str) -> None:
        self.spans += 1
        identity = ("span", span.trace_id, span.span_id)
        if span.span_id and identity in self.seen:
            self.log.duplicates += 1
            return
        self.seen.add(identity)
        own = next(
            (str(v) for v in (span.attributes.get(n) for n in self.names)
             if isinstance(v, str | int) and not isinstance(v, bool) and v != ""),
            None,
        )  # fmt: skip
        self.parents[span.span_id] = (span.parent_id, own)
        cut = cut_messages(span.attributes, span.dropped, span.name)
        if cut is not None:
            reason, known = cut
            if own is None:  # set before the messages, it went first
                known += ("; " if known else "") + (
                    "its conversation id may be among what was dropped: it is listed under "
                    "its trace"
                )
            self.traced.append((len(self.partial), True, span.span_id, span.trace_id))
            self.partial.append(self.timely(_incomplete(span, file, "", reason, known)))
            return
        with _shaped(f"{file} ({span.where})", "span"):
            found = next(
                (f for read in SPAN_READERS if (f := read(span, "", file)) is not None), None
            ) or request_of_span(span, "", file)
            run = tool_run_of_span(span) if found is None else None
            wanted = span.span_id in self.wanted  # above a failed call without messages
            history = history_of_run(span) if wanted and found is None and run is None else None
        if wanted and span.parent_id:
            self.wanted.add(span.parent_id)
        if run is not None:  # kept until the trace's next model call
            self.pending.setdefault(span.trace_id, []).append((span.span_id, run))
            if run.call is not None:  # that it ran stays known, its output does not
                self.ran.append((span.span_id, span.trace_id, run.call, len(run.output)))
        if history:
            self.histories[span.span_id] = history
        if found is None:
            self.log.unrelated += 1
            return
        if isinstance(found, LoggedRequest):
            notes = (dropped_note(span.dropped, own is not None), length_note(span.attributes))
            if any(notes):
                found = replace(found, blind=(*found.blind, *(n for n in notes if n)))
            # the tool runs since the trace's last model call: what a failed call
            # without messages needs to be rebuilt (recovery.py); else let go
            since = self.pending.pop(span.trace_id, [])
            if UNLOGGED in found.blind:
                self.unlogged.append((len(self.requests), span.span_id))
                self.tools.extend((sid, span.trace_id, run) for sid, run in since)
                if span.parent_id:
                    self.wanted.add(span.parent_id)
            self.traced.append((len(self.requests), False, span.span_id, span.trace_id))
            self.requests.append(self.slim(found))
            return
        partial = found if isinstance(found, Incomplete) else _incomplete(span, file, found)
        self.traced.append((len(self.partial), True, span.span_id, span.trace_id))
        self.partial.append(self.timely(partial))

    def share(self, messages: tuple[LoggedMessage, ...]) -> tuple[LoggedMessage, ...]:
        """``messages`` abbreviated and shared with the requests before."""
        out = []
        for m in messages:
            short = m.abbreviated()
            out.append(self.shared.setdefault(short, short))
        return tuple(out)

    def slim(self, request: LoggedRequest) -> LoggedRequest:
        """``request`` holding shared messages, its body dropped when the
        provider's rules read the same from its messages, its times checked."""
        return self.timely(self.thin(request))

    def thin(self, request: LoggedRequest) -> LoggedRequest:
        """:meth:`slim` but the times (a product reader keeps its requests thin
        until it knows their conversations; see exports.py)."""
        messages = self.share(request.messages)
        reply = None if request.reply is None else self.share(request.reply)
        body = request.body
        if body is not None and request.rejection is None:
            own = [e.text for e in validate(body, request.provider, source="request")]
            rendered = provider_body(messages, request.provider)
            if own == [e.text for e in validate(rendered, request.provider, source="request")]:
                body = None
        return replace(request, messages=messages, reply=reply, body=body)

    def timely(self, request: _R) -> _R:
        """``request`` with a time that is not one (NaN, infinite, overflowing,
        before 1970 or after 2242) read as missing, and said."""
        bad = [t for t in (request.at, getattr(request, "ended", None)) if not _is_time(t)]
        if not bad:
            return request
        note = f"its time ({bad[0]}) is not a time: read as missing"
        if isinstance(request, LoggedRequest):
            if not _is_time(request.at):
                self.untimed.add(len(self.requests))
            return replace(
                request,
                at=request.at if _is_time(request.at) else None,
                ended=request.ended if _is_time(request.ended) else None,
                blind=(*request.blind, note),
            )
        known = f"{request.known}; {note}" if request.known else note
        return replace(request, at=request.at if _is_time(request.at) else None, known=known)

    def conversation(self, span_id: str, trace_id: str) -> str:
        node: str | None = span_id
        hops = 0
        while node is not None and hops < 64:
            parent, own = self.parents.get(node, (None, None))
            if own is not None:
                return own
            node = parent
            hops += 1
        return f"trace {trace_id}"

    def ancestors(self, span_id: str) -> Iterator[tuple[str, tuple[LoggedMessage, ...]]]:
        """(span id, messages) of the agent run spans above ``span_id``, nearest first."""
        node, hops = self.parents.get(span_id, (None, None))[0], 0
        while node is not None and hops < 64:
            if node in self.histories:
                yield node, self.histories[node]
            node, hops = self.parents.get(node, (None, None))[0], hops + 1

    def finish(self) -> None:
        """Name the spans' conversations, now that every span is known; give
        a failed request whose span holds no messages those of its agent run."""
        for index, span_id in self.unlogged:
            self.requests[index] = from_run_history(self.requests[index], self.ancestors(span_id))
        for index, partial, span_id, trace_id in self.traced:
            name = self.conversation(span_id, trace_id)
            if partial:
                self.partial[index] = replace(self.partial[index], conversation=name)
            else:
                self.requests[index] = replace(self.requests[index], conversation=name)
        for span_id, trace_id, run in self.tools:
            self.runs.setdefault(self.conversation(span_id, trace_id), []).append(run)
        for span_id, trace_id, call, size in self.ran:
            self.log.ran.setdefault(self.conversation(span_id, trace_id), {})[call] = size
        self.ran.clear()
        self.parents.clear()
        self.histories.clear()
        self.pending.clear()
        self.wanted.clear()
        self.seen.clear()
        for product in self.products:
            for read in product.finish():
                if isinstance(read, LoggedRequest):
                    self.requests.append(self.slim(read))
                else:
                    self.partial.append(self.timely(read))
            for name, runs in product.runs().items():
                self.runs.setdefault(name, []).extend(runs)
                ran = self.log.ran.setdefault(name, {})
                ran.update((r.call, len(r.output)) for r in runs if r.call is not None)
            self.log.duplicates += product.duplicates


def _incomplete(
    span: Span, file: str, sentence: str, reason: str = "", known: str = ""
) -> Incomplete:
    """The incomplete request of ``span``: a reader's sentence or a
    ``reason`` (its rejection kept: a rejected request whose messages are
    cut still holds the incident; the SDK's dropped count said)."""
    where = Source(file, span.where.partition(", ")[2] or span.span_id)
    if not reason:
        reason = sentence.removeprefix(f"{where}: ").removesuffix(
            ": this request is not in the trace"
        )
        if span.dropped:
            reason += (
                f"; the SDK dropped {span.dropped} of its attributes (droppedAttributesCount: "
                "the attribute count limit, OTEL_ATTRIBUTE_COUNT_LIMIT)"
            )
    rejection, status = rejection_of(span) if span.error else (None, None)
    return Incomplete("", span.start, where, reason, known, rejection, status)


def _unplaced(request: LoggedRequest) -> Incomplete:
    """A request whose logged time is not one, or that has none, in a
    conversation whose other requests have times: where it falls is not
    known, so it is not diffed."""
    said = next((b for b in request.blind if "is not a time" in b), "it holds no time")
    return Incomplete(
        request.conversation,
        None,
        request.source,
        said.replace(": read as missing", "") + ", so where it falls among the others is not known",
        f"{len(request.messages)} messages",
        request.rejection,
        request.status,
        request.messages,
    )


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _is_time(value: float | None) -> bool:
    return value is None or (math.isfinite(value) and 0 <= value < _LATEST)


def read_log(
    paths: Sequence[Path],
    *,
    key: str | None = None,
    hint: LogFormat | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Log:
    """Read every request of every file (see the module notes).

    ``progress`` is called with the bytes read so far and the bytes of all
    files, after each record.
    O(size of the log) time; memory O(distinct messages + spans).
    """
    log = Log()
    reader = _Reader(log, key, hint)
    files = _files(paths, log)
    sizes = [os.stat(path).st_size for path in files]
    done = 0
    for path, size in zip(files, sizes, strict=True):
        name = shown(path)
        for where, record, text, at in records(path, name):
            reader.take(name, where, record, text)
            if progress is not None:
                progress(done + at, sum(sizes))
        done += size
    log.size = done
    reader.finish()
    if log.duplicates:
        log.notes.append(
            f"{log.duplicates} span(s) or record(s) seen before (the same span or run id, or "
            "the same "
            "raw record at the same time: a log shipped twice?): read once"
        )
    requests, partial = reader.requests, reader.partial
    shown_paths = ", ".join(shown(p) for p in paths)
    if not requests and not partial:
        what = "span" if reader.spans else "record"
        raise TranscriptError(
            shown_paths,
            f"holds {reader.spans or log.unrelated} {what}(s) but no model request "
            "(no gen_ai.input.messages, llm.input_messages, llm run or request body).",
            "pass the spans of the model calls (their content captured), a LangSmith run "
            "export or the logged request bodies.",
        )
    timed = {r.conversation for r in requests if r.at is not None}
    # a time that is none (NaN, 400 digits) or no time at all, among requests with
    # times: where it falls is not known (it was put first, as if at 0)
    unplaced = {n for n, r in enumerate(requests) if n in reader.untimed or r.at is None}
    unplaced = {n for n in unplaced if requests[n].conversation in timed}
    partial.extend(_unplaced(requests[n]) for n in sorted(unplaced))
    placed = [r for n, r in enumerate(requests) if n not in unplaced]
    for request in _in_time(placed):
        log.conversations.setdefault(request.conversation, []).append(request)
    for missing in _in_time(partial):
        log.incomplete.setdefault(missing.conversation, []).append(missing)
    _settle(log, reader.runs, regroup=key is None)
    _name_the_length_limit(log)
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
        first = next(iter(log.incomplete.values()))[0]
        rejected = next((i for i in partial if i.rejection is not None), None)
        also = (
            ""
            if rejected is None
            else f" The provider rejected one of them ({rejected.source}): {rejected.rejection}"
        )
        advice = (
            "capture the message content in full (for OpenTelemetry GenAI: "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, and an attribute length "
            "limit above the longest request; for any SDK: an attribute count limit "
            "above the attributes a model span sets, OTEL_ATTRIBUTE_COUNT_LIMIT)."
        )
        if first.reason.startswith(RESPONSE_GAP):  # the Agents SDK's default export
            advice = f"{PROCESSOR_HINT}."
        raise TranscriptError(
            shown_paths, f"holds no model request that can be read: {first}.{also}", advice
        )
    return log


def _name_the_length_limit(log: Log) -> None:
    """Incomplete requests cut at one length: the limit named, not asked."""
    every = [i for held in log.incomplete.values() for i in held]
    reasons, limit = proven_length([i.reason for i in every])
    if limit is None:
        return
    said = {id(i): r for i, r in zip(every, reasons, strict=True)}
    for name, held in log.incomplete.items():
        log.incomplete[name] = [replace(i, reason=said[id(i)]) for i in held]


def _settle(log: Log, runs: dict[str, list[ToolRun]], *, regroup: bool) -> None:
    """Each stack's own semantics, once its conversations are known: the
    requests known only by their trace grouped by their lineage
    (:mod:`.lineage`; not when the user named the key to group by), and
    failed requests whose spans hold no messages recovered (:mod:`.recovery`)."""
    traced = [name for name in log.conversations if regroup and name.startswith("trace ")]
    pooled = sorted(
        (r for name in traced for r in log.conversations[name]),
        key=lambda r: r.at if r.at is not None else 0.0,
    )
    threads = threads_of(pooled)
    if sorted(sorted(id(r) for r in t) for t in threads) != sorted(
        sorted(id(r) for r in log.conversations[name]) for name in traced
    ):
        _regroup(log, runs, traced, threads)
    for name in list(log.conversations):
        held, lost = recover(log.conversations[name], runs.get(name, []))
        log.conversations[name] = held
        if lost:
            found = log.incomplete.setdefault(name, [])
            found.extend(lost)
            found.sort(key=lambda i: i.at if i.at is not None else 0.0)
        if not held:
            del log.conversations[name]


def _regroup(
    log: Log,
    runs: dict[str, list[ToolRun]],
    traced: list[str],
    threads: list[list[LoggedRequest]],
) -> None:
    """Replace the conversations named by their trace with ``threads``: each
    named by the trace it starts in (``thread N`` added when several start in
    one), with the tool runs and incomplete requests of its traces."""
    partial = {name: log.incomplete.pop(name, []) for name in traced}
    tools = {name: runs.pop(name, []) for name in traced}
    ran = {name: log.ran.pop(name, {}) for name in traced}
    for name in traced:
        del log.conversations[name]
    starts = [held[0].conversation for held in threads]
    names: list[str] = []
    for n, held in enumerate(threads):
        base = starts[n]
        name = base if starts.count(base) == 1 else f"{base} thread {starts[: n + 1].count(base)}"
        traces = list(dict.fromkeys(r.conversation for r in held))
        names.append(name)
        log.conversations[name] = [replace(r, conversation=name) for r in held]
        runs[name] = [run for trace in traces for run in tools[trace]]
        for trace in traces:
            log.ran.setdefault(name, {}).update(ran[trace])
        if len(traces) > 1 or name != base:
            log.notes.append(
                f"conversation {name}: no span or run names it; it is the requests of "
                f"{len(traces)} trace(s) that continue one another's messages (told apart "
                "by their lineage)"
            )
    for trace, missing in partial.items():
        for request in missing:  # with the thread under way in its trace when it was sent
            having = [n for n, t in enumerate(threads) if any(r.conversation == trace for r in t)]
            at = request.at
            started = [n for n in having if at is None or (threads[n][0].at or 0.0) <= at]
            started = started or having or [0]
            thread = names[started[-1]]
            log.incomplete.setdefault(thread, []).append(replace(request, conversation=thread))


def _in_time(found: list[_R]) -> Iterator[_R]:
    indexed = sorted(
        enumerate(found),
        key=lambda p: (p[1].conversation, p[1].at if p[1].at is not None else 0.0, p[0]),
    )
    return (r for _, r in indexed)
