"""The OpenAI Agents SDK's own tracing, as a trace processor writes it.

The SDK hands every trace and span to its trace processors
(``agents.add_trace_processor`` / ``set_trace_processors``); each has an
``export()``, the JSON object the SDK's own exporter sends to OpenAI's
traces endpoint: a trace ``{"object": "trace", "id", "workflow_name",
"group_id", "metadata"}`` and spans ``{"object": "trace.span", "id",
"trace_id", "parent_id", "started_at", "ended_at", "span_data", "error"}``.
A log is those objects, one a line (or a list, or the exporter's
``{"data": [...]}`` batches).

A model call is a span whose ``span_data.type`` is ``generation`` (the
Chat Completions model and LiteLLM models): ``input`` is the message list
sent, ``output`` the assistant message(s), ``error.data.error`` the SDK's
error string.  A ``response`` span (the Responses API model, the SDK's
default) exports only the response id and usage
(``ResponseSpanData.export()``), though the SDK keeps the call's ``input``
and ``response`` on the span in the process (with
``trace_include_sensitive_data``, its default): a processor that writes
them beside ``export()`` (:data:`PROCESSOR_HINT`) makes every accepted
call a Responses request, and a failed one (the SDK keeps no input for
it) is rebuilt from the request before it, its response and the
``function`` spans (:mod:`.recovery`).  With ``export()`` alone a
``response`` span is an incomplete request named so (:data:`RESPONSE_GAP`),
its 400 kept.  The conversation is the trace's ``group_id`` (``RunConfig
(group_id=...)``: every run of one thread), else the user's ``--key`` (a
field of the trace's ``metadata``), else the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import Provider
from prunecheck.sim.ingest.bodies import provider_message
from prunecheck.sim.ingest.records import Incomplete, LogFormat, LoggedRequest, Source
from prunecheck.sim.ingest.runs import when
from prunecheck.sim.ingest.sent import request_of_body
from prunecheck.sim.ingest.spans import UNLOGGED, ToolRun

__all__ = ["PROCESSOR_HINT", "RESPONSE_GAP", "ProcessorReader", "is_export"]

#: How an incomplete request of a ``response`` span without its input starts.
RESPONSE_GAP = "a response span without its input"
#: What makes the Agents SDK's Responses calls readable: the input and the
#: response the SDK keeps on the span, written beside its export().
PROCESSOR_HINT = (
    "write the input and the response the SDK keeps on each response span beside its "
    "export(): in your trace processor's on_span_end, when span.span_data.type == "
    '"response" and span.span_data.input is not None, add span.span_data.input and '
    'span.span_data.response.model_dump() to the exported span_data as "input" and '
    '"response" (docs/on-call.md); or use the Chat Completions model, whose '
    "generation spans hold the messages"
)

_OBJECTS = ("trace", "trace.span")


def is_export(record: Mapping[str, Any]) -> bool:
    """Whether a JSON record is an Agents SDK trace or span export (or a batch of them)."""
    if record.get("object") in _OBJECTS:
        return True
    data = record.get("data")
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(d, Mapping) and d.get("object") in _OBJECTS for d in data)
    )


def _same(request: LoggedRequest) -> LoggedRequest:
    return request


class ProcessorReader:
    """Reads Agents SDK traces and spans into requests (see the module notes)."""

    what = "an OpenAI Agents SDK trace or span"

    def __init__(
        self, key: str | None = None, thin: Callable[[LoggedRequest], LoggedRequest] = _same
    ) -> None:
        self.key, self.thin = key, thin
        self.traces: dict[str, Mapping[str, Any]] = {}
        # (trace id, the request read without its conversation)
        self.found: list[tuple[str, LoggedRequest | Incomplete]] = []
        self.seen: set[str] = set()
        self.duplicates = 0
        self.tools: list[tuple[str, ToolRun]] = []  # (trace id, a function span's run)
        # failed response spans: (index in found, the request to rebuild, or its gap)
        self.failed: list[tuple[int, LoggedRequest]] = []
        self.readable = False  # whether a response span held its input

    def takes(self, record: Mapping[str, Any]) -> bool:
        return is_export(record)

    def add(self, record: Mapping[str, Any], source: Source) -> None:
        items = record["data"] if "data" in record and "object" not in record else [record]
        for i, item in enumerate(items):
            identity = f"{item.get('object')} {item.get('id')}"
            if item.get("id") and identity in self.seen:
                self.duplicates += 1
                continue
            self.seen.add(identity)
            if item.get("object") == "trace":
                self.traces[str(item.get("id"))] = item
                continue
            where = source.where if len(items) == 1 else f"{source.where} [{i}]"
            trace = str(item.get("trace_id"))
            run = _tool_run(item)
            if run is not None:
                self.tools.append((trace, run))
                continue
            found = _request(item, Source(source.file, where))
            data = item.get("span_data") or {}
            if data.get("type") == "response" and data.get("input") is not None:
                self.readable = True
            if isinstance(found, Incomplete) and found.rejection is not None:
                self.failed.append((len(self.found), _unlogged(found)))
            if isinstance(found, LoggedRequest):
                found = self.thin(found)
            if found is not None:
                self.found.append((trace, found))

    def finish(self) -> Iterator[LoggedRequest | Incomplete]:
        if self.readable:  # a failed call is rebuilt from the calls around it (.recovery)
            for index, request in self.failed:
                self.found[index] = (self.found[index][0], request)
        for trace_id, found in self.found:
            yield replace(found, conversation=self._conversation(trace_id))

    def runs(self) -> dict[str, list[ToolRun]]:
        """The tool runs the ``function`` spans record, by conversation: what
        rebuilds a failed call's request (:mod:`.recovery`)."""
        out: dict[str, list[ToolRun]] = {}
        for trace_id, run in self.tools:
            out.setdefault(self._conversation(trace_id), []).append(run)
        return out

    def _conversation(self, trace_id: str) -> str:
        trace = self.traces.get(trace_id) or {}
        metadata = trace.get("metadata") or {}
        value = metadata.get(self.key) if self.key else trace.get("group_id")
        if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
            return str(value)
        return f"trace {trace_id}"


def _request(span: Mapping[str, Any], source: Source) -> LoggedRequest | Incomplete | None:
    """The request a generation or response span records (its conversation
    left empty), or None for any other span."""
    data = span.get("span_data") or {}
    kind = data.get("type")
    if kind not in ("generation", "response"):
        return None
    where = Source(source.file, f"{source.where}, span {span.get('id')}".strip(", "))
    at = when(span, ("started_at",))
    error = span.get("error")
    text = None
    if isinstance(error, Mapping):
        detail = (error.get("data") or {}).get("error")
        text = str(detail or error.get("message") or "error")
    rejection, status = provider_message(text) if text else (None, None)
    if data.get("input") is None:
        reason = (
            f"{RESPONSE_GAP} (the SDK's export of a Responses API call, its default model, "
            "holds only the response id and usage; the SDK keeps the input on the span, "
            "but never a failed call's)"
            if kind == "response"
            else f"a {kind} span without its input (trace_include_sensitive_data off hides it)"
        )
        return Incomplete("", at, where, reason, rejection=rejection, status=status)
    body, reply = data["input"], data.get("output")
    if kind == "response":  # written beside export() by the user's processor
        body, reply = {"input": body}, data.get("response")
    try:
        return request_of_body(
            "", at, where, body, reply=reply, error=text, ended=when(span, ("ended_at",))
        )
    except TranscriptError as exc:
        reason = f"its input is not a model request ({exc.rule.rstrip('.')})"
        return Incomplete("", at, where, reason, rejection=rejection, status=status)


def _tool_run(span: Mapping[str, Any]) -> ToolRun | None:
    """The tool execution a ``function`` span records, or None."""
    data = span.get("span_data") or {}
    if data.get("type") != "function" or not isinstance(data.get("name"), str):
        return None
    output = data.get("output")
    return ToolRun(
        data["name"], str(data.get("input") or ""), "" if output is None else str(output),
        None, when(span, ("started_at",)),
    )  # fmt: skip


def _unlogged(gap: Incomplete) -> LoggedRequest:
    """The failed call of ``gap`` as a request to rebuild (:mod:`.recovery`):
    no messages, its rejection, and why none are logged."""
    return LoggedRequest(
        gap.conversation, gap.at, gap.source, Provider.OPENAI_RESPONSES,
        LogFormat.OPENAI_RESPONSES, (), None, gap.rejection, gap.status, blind=(UNLOGGED,),
    )  # fmt: skip
