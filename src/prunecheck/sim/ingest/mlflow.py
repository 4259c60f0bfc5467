"""MLflow traces: ``Trace.to_json()``, one trace a line (or a list of them).

MLflow's autologging (``mlflow.openai.autolog()``, ``mlflow.anthropic.autolog()``)
records each model call as a span of type ``CHAT_MODEL`` (``LLM`` for some
integrations) whose ``mlflow.spanInputs`` is the call's keyword arguments —
the request body — and ``mlflow.spanOutputs`` the response; a failed call
has the status ``STATUS_CODE_ERROR`` and an ``exception`` event holding the
SDK's error string.  Attribute values are JSON text, as MLflow stores them.
A trace is what ``mlflow.search_traces(return_type="list")`` (or
``MlflowClient().get_trace``) gives back from a tracking store; its
``to_json()`` is a JSON object ``{"info": {...}, "data": {"spans": [...]}}``
(MLflow 3's trace schema).

The conversation is the trace's session (``mlflow.trace.session`` in
``info.trace_metadata``, as ``mlflow.update_current_trace`` sets it), else
the user's ``--key`` (a metadata or tag name), else the trace.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prunecheck.model.errors import TranscriptError
from prunecheck.sim.ingest.bodies import provider_message
from prunecheck.sim.ingest.records import Incomplete, LoggedRequest, Source
from prunecheck.sim.ingest.sent import request_of_body
from prunecheck.sim.ingest.spans import ToolRun

__all__ = ["TraceReader", "is_trace"]

_MODEL_SPANS = ("CHAT_MODEL", "LLM")
_SESSION = "mlflow.trace.session"


def is_trace(record: Mapping[str, Any]) -> bool:
    """Whether a JSON record is an MLflow trace (``info`` and ``data.spans``)."""
    data = record.get("data")
    return (
        isinstance(record.get("info"), Mapping) and isinstance(data, Mapping) and ("spans" in data)
    )


def _value(attributes: Mapping[str, Any], name: str) -> Any:
    """An attribute as MLflow stores it: JSON text (a string stays a string if not JSON)."""
    raw = attributes.get(name)
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _nanos(value: object) -> float | None:
    """Seconds from nanoseconds; None if absent; NaN or infinite if present
    but no count of nanoseconds (the reader says so: not a time)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return math.nan
    try:
        return int(value) / 1e9 or None
    except ValueError:
        return math.nan
    except OverflowError:  # 400 digits
        return math.inf


def _id(value: object) -> str:
    text = str(value or "")
    try:
        return base64.b64decode(text, validate=True).hex()
    except ValueError:
        return text


def _error(span: Mapping[str, Any]) -> str | None:
    status = span.get("status") or {}
    if status.get("code") not in ("STATUS_CODE_ERROR", "ERROR", 2):
        return None
    for event in span.get("events") or []:
        if isinstance(event, Mapping) and event.get("name") == "exception":
            message = (event.get("attributes") or {}).get("exception.message")
            if isinstance(message, str) and message:
                return message
    return str(status.get("message") or "error")


def _same(request: LoggedRequest) -> LoggedRequest:
    return request


class TraceReader:
    """Reads MLflow traces into requests (see the module notes)."""

    what = "an MLflow trace"

    def __init__(
        self, key: str | None = None, thin: Callable[[LoggedRequest], LoggedRequest] = _same
    ) -> None:
        self.key, self.thin = key, thin
        self.found: list[LoggedRequest | Incomplete] = []
        self.seen: set[str] = set()
        self.duplicates = 0

    def takes(self, record: Mapping[str, Any]) -> bool:
        return is_trace(record)

    def add(self, record: Mapping[str, Any], source: Source) -> None:
        info = record["info"]
        identity = str(info.get("trace_id") or info.get("request_id") or "")
        if identity and identity in self.seen:
            self.duplicates += 1
            return
        self.seen.add(identity)
        self.found.extend(
            self.thin(r) if isinstance(r, LoggedRequest) else r
            for r in _requests(record, source, self.key)
        )

    def runs(self) -> dict[str, list[ToolRun]]:
        """None read: a failed MLflow span keeps its inputs."""
        return {}

    def finish(self) -> Iterator[LoggedRequest | Incomplete]:
        yield from self.found


def _conversation(info: Mapping[str, Any], key: str | None) -> str:
    metadata = info.get("trace_metadata") or {}
    tags = info.get("tags") or {}
    for name in (key,) if key else (_SESSION,):
        for place in (metadata, tags, info):
            value = place.get(name or "")
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                return str(value)
    return f"trace {info.get('trace_id') or info.get('request_id') or '?'}"


def _requests(
    record: Mapping[str, Any], source: Source, key: str | None
) -> Iterator[LoggedRequest | Incomplete]:
    info = record["info"]
    conversation = _conversation(info, key)
    for span in record["data"]["spans"] or []:
        if not isinstance(span, Mapping):
            continue
        attributes = span.get("attributes") or {}
        if _value(attributes, "mlflow.spanType") not in _MODEL_SPANS:
            continue
        where = Source(source.file, f"{source.where}, span {_id(span.get('span_id'))}".strip(", "))
        error = _error(span)
        at = _nanos(span.get("start_time_unix_nano"))
        rejection, status = provider_message(error) if error else (None, None)
        if "mlflow.spanInputs" not in attributes:
            kind = _value(attributes, "mlflow.spanType")
            yield Incomplete(conversation, at, where, f"a {kind} span without mlflow.spanInputs",
                             rejection=rejection, status=status)  # fmt: skip
            continue
        try:
            yield request_of_body(
                conversation,
                at,
                where,
                _value(attributes, "mlflow.spanInputs"),
                reply=None if error else _value(attributes, "mlflow.spanOutputs"),
                error=error,
                ended=_nanos(span.get("end_time_unix_nano")),
            )
        except TranscriptError as exc:
            reason = f"its mlflow.spanInputs is not a model request ({exc.rule.rstrip('.')})"
            yield Incomplete(conversation, at, where, reason, rejection=rejection, status=status)
