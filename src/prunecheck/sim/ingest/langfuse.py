"""Langfuse: the spans its SDK (v3 and later, built on OpenTelemetry) sends.

The Langfuse SDK records each model call as a span whose
``langfuse.observation.type`` is ``generation``; its
``langfuse.observation.input`` is what the integration saw going in (the
``langfuse.openai`` drop-in client logs the call's keyword arguments: the
request body with ``messages``; other integrations log the message list),
``langfuse.observation.output`` what came back (the assistant message), and
a failed call has ``langfuse.observation.level`` ``ERROR`` with the SDK's
error string as ``langfuse.observation.status_message`` (and as the span's
status).  The conversation is the span's ``session.id`` (``langfuse.session.id``
in older SDKs), which :mod:`.reading` reads as for any span.

What is read is the spans as the SDK exports them (OTLP JSON, e.g. through
the SDK's ``span_exporter`` or a Collector's file exporter) — not the
Langfuse server's public API, whose observation JSON differs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from prunecheck.model.errors import TranscriptError
from prunecheck.sim.ingest.records import LoggedRequest, Source
from prunecheck.sim.ingest.sent import request_of_body

if TYPE_CHECKING:
    from prunecheck.sim.ingest.spans import Span

__all__ = ["is_generation", "request_of_span"]

_PREFIX = "langfuse.observation."


def is_generation(attributes: dict[str, object]) -> bool:
    """Whether a span's attributes are a Langfuse generation (a model call)."""
    return attributes.get(_PREFIX + "type") == "generation"


def _json(value: object, name: str) -> object:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        raise ValueError(
            f"its {name} attribute ({len(value)} characters) is cut off or not JSON — the "
            "instrumentation truncated it (an attribute length limit?)"
        ) from None


def request_of_span(span: Span, conversation: str, file: str) -> LoggedRequest | str | None:
    """The request a Langfuse generation span records, a sentence naming why
    it cannot be read, or None for any other span."""
    a = span.attributes
    if not is_generation(a):
        return None
    where = Source(file, span.where.partition(", ")[2] or span.span_id)
    if _PREFIX + "input" not in a:
        return (
            f"{where}: a Langfuse generation without langfuse.observation.input (input not "
            "captured or masked): this request is not in the trace"
        )
    error = None
    if span.error is not None or a.get(_PREFIX + "level") == "ERROR":
        message = a.get(_PREFIX + "status_message")
        error = str(message) if isinstance(message, str) and message else span.error or "error"
    try:
        body = _json(a[_PREFIX + "input"], _PREFIX + "input")
        reply = _json(a.get(_PREFIX + "output"), _PREFIX + "output") if error is None else None
        return request_of_body(
            conversation, span.start, where, body, reply=reply, error=error, ended=span.end
        )
    except ValueError as exc:
        return f"{where}: {exc}: this request is not in the trace"
    except TranscriptError as exc:
        return (
            f"{where}: its input is not a model request ({exc.rule.rstrip('.')}): this request "
            "is not in the trace"
        )
