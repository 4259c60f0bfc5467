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
default) holds only the response id: its request is not in the log and is
named as a gap.  The conversation is the trace's ``group_id`` (``RunConfig
(group_id=...)``: every run of one thread), else the user's ``--key`` (a
field of the trace's ``metadata``), else the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from prunecheck.model.errors import TranscriptError
from prunecheck.sim.ingest.bodies import provider_message
from prunecheck.sim.ingest.records import Incomplete, LoggedRequest, Source
from prunecheck.sim.ingest.runs import when
from prunecheck.sim.ingest.sent import request_of_body

__all__ = ["ProcessorReader", "is_export"]

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
            found = _request(item, Source(source.file, where))
            if isinstance(found, LoggedRequest):
                found = self.thin(found)
            if found is not None:
                self.found.append((str(item.get("trace_id")), found))

    def finish(self) -> Iterator[LoggedRequest | Incomplete]:
        for trace_id, found in self.found:
            yield replace(found, conversation=self._conversation(trace_id))

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
    if kind == "response" or data.get("input") is None:
        reason = (
            f"a {kind} span without its input (the Responses API model logs only the "
            "response id; trace_include_sensitive_data off hides the input)"
        )
        return Incomplete("", at, where, reason, rejection=rejection, status=status)
    try:
        return request_of_body(
            "", at, where, data["input"], reply=data.get("output"), error=text,
            ended=when(span, ("ended_at",)),
        )  # fmt: skip
    except TranscriptError as exc:
        reason = f"its input is not a model request ({exc.rule.rstrip('.')})"
        return Incomplete("", at, where, reason, rejection=rejection, status=status)
