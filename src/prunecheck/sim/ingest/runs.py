"""LangSmith runs and raw request logs, read into logged requests.

A LangSmith run export holds one run per line (or a list): the model calls
are the runs of ``run_type`` ``llm`` whose ``inputs.messages`` is the
request — in the provider's own format (``wrap_openai``,
``wrap_anthropic``) or as LangChain's serialized messages — with
``outputs`` the response and ``error`` the provider's error.  Runs of one
conversation are linked by the thread metadata (``thread_id``,
``session_id`` or ``conversation_id`` in ``extra.metadata``), else by their
trace; never by the run's own ``session_id``, which is the id of the project
(LangSmith's name for a project is a tracing session), so that
``Client.list_runs`` exports are grouped by thread, not into one.

A raw request log holds request bodies, bare or wrapped with their
response: ``{"request": {...}, "response": {...}, "time": ...,
"conversation_id": ...}``.  The conversation is the first of the key the
user names, ``conversation_id``, ``session_id``, ``thread_id`` (at the top,
in ``metadata``, or in the body's ``metadata``), else the whole log is one.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from typing import Any

from prunecheck.model.context import Role
from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import Provider
from prunecheck.sim.ingest.bodies import (
    body_format,
    error_text,
    provider_message,
    read_body,
    read_reply,
    text_of,
)
from prunecheck.sim.ingest.records import (
    LogFormat,
    LoggedCall,
    LoggedMessage,
    LoggedRequest,
    Source,
)

__all__ = ["THREAD_KEYS", "find_key", "is_run", "request_of_record", "request_of_run", "when"]

#: Metadata keys that name a conversation, in the order they are tried.
THREAD_KEYS = ("conversation_id", "thread_id", "session_id", "conversation", "session")
_TIME_KEYS = ("start_time", "timestamp", "time", "ts", "created_at", "started_at")
_LANGCHAIN_ROLES = {"human": Role.USER, "ai": Role.ASSISTANT, "system": Role.SYSTEM,
                    "HumanMessage": Role.USER, "AIMessage": Role.ASSISTANT,
                    "SystemMessage": Role.SYSTEM}  # fmt: skip


def is_run(record: Mapping[str, Any]) -> bool:
    """Whether a JSON record is a LangSmith run."""
    return "run_type" in record and "inputs" in record


_NUMBER = re.compile(r"[0-9]{1,30}(?:\.[0-9]*)?(?:[eE][+-]?[0-9]{1,4})?")


def when(record: Mapping[str, Any], keys: tuple[str, ...] = _TIME_KEYS) -> float | None:
    """A record's time in seconds since the epoch: an ISO string or a number
    (seconds, milliseconds or nanoseconds), or None if no key holds one; NaN
    if one holds a value that is no time ("NaN", "soon", 400 digits in a
    string): the reader says so (``timely``) rather than drop it unsaid."""
    unreadable = False
    for key in keys:
        value = record.get(key)
        if value is None or value == "":
            continue
        if isinstance(value, bool):
            unreadable = True
            continue
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            value = float(value)  # a number in a string: "1795960000" ("1e400": inf)
        if isinstance(value, int | float):
            try:
                number = float(value)
            except OverflowError:  # 400 digits: not a time (the reader says so)
                number = math.inf
            return number / 1e9 if number > 1e17 else number / 1e3 if number > 1e11 else number
        if isinstance(value, str):
            try:
                moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except (ValueError, OverflowError):
                unreadable = True
                continue
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
            return moment.timestamp()
        unreadable = True
    return math.nan if unreadable else None


def _dig(record: Mapping[str, Any], path: str) -> object:
    node: object = record
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def find_key(
    record: Mapping[str, Any], key: str | None, places: tuple[str, ...], *, top: bool = True
) -> str | None:
    """The conversation a record names: the user's dotted ``key``, else the
    first :data:`THREAD_KEYS` found at the top (unless ``top`` is False) or
    under each of ``places``."""
    if key is not None:
        value = _dig(record, key)
        return None if value is None else str(value)
    for place in ("", *places) if top else places:
        node = _dig(record, place) if place else record
        if not isinstance(node, Mapping):
            continue
        for name in THREAD_KEYS:
            value = node.get(name)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                return str(value)
    return None


def _langchain(raw: list[Any]) -> tuple[LoggedMessage, ...] | None:
    """LangChain's serialized messages (``{"lc": 1, "kwargs": ...}`` or plain
    ``{"type": "human", "content": ...}``), or None if they are not that."""
    flat = raw[0] if raw and isinstance(raw[0], list) else raw
    out = []
    for m in flat:
        if not isinstance(m, Mapping):
            return None
        kwargs = m.get("kwargs", m)
        kind = kwargs.get("type") or (m.get("id") or ["", ""])[-1]
        if kind in ("tool", "ToolMessage"):
            cid = str(kwargs.get("tool_call_id"))
            out.append(LoggedMessage(Role.TOOL, text_of(kwargs.get("content")), answers=cid))
            continue
        if kind not in _LANGCHAIN_ROLES:
            return None
        calls = tuple(
            LoggedCall(str(c.get("id")), str(c.get("name", "")), _args(c.get("args", {})))
            for c in kwargs.get("tool_calls") or []
            if isinstance(c, Mapping)
        )
        out.append(LoggedMessage(_LANGCHAIN_ROLES[kind], text_of(kwargs.get("content")), calls))
    return tuple(out)


def _args(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def request_of_run(
    run: Mapping[str, Any], key: str | None, source: Source, hint: LogFormat | None
) -> LoggedRequest | None:
    """The model request an ``llm`` run records, or None for any other run."""
    if run.get("run_type") != "llm":
        return None
    inputs = run.get("inputs")
    if not isinstance(inputs, Mapping) or not isinstance(inputs.get("messages"), list):
        raise TranscriptError(
            str(source),
            "is an llm run without inputs.messages: the request it made is not in the export.",
            "export the runs with their inputs (LangSmith hides them when "
            "LANGSMITH_HIDE_INPUTS is set).",
        )
    # A run's own session_id is its project's id (LangSmith calls projects
    # sessions): never a thread.  Threads are named in the metadata.
    conversation = find_key(run, key, ("extra.metadata", "metadata"), top=False)
    if conversation is None:  # its trace: the threads of one trace are told apart by lineage
        conversation = f"trace {run.get('trace_id') or run.get('id') or 'run'}"
    error = run.get("error")
    rejection, status = provider_message(str(error)) if error else (None, None)
    langchain = _langchain(inputs["messages"])
    fmt = body_format(inputs)
    blind: tuple[str, ...] = ()
    reply_fmt: LogFormat | None = None
    if langchain is not None and fmt is None and _is_langchain(inputs["messages"]):
        messages, provider = langchain, Provider.OPENAI
        fmt = LogFormat.LANGSMITH
    else:
        fmt, provider, messages, blind = read_body(inputs, str(source), hint)
        reply_fmt = fmt
    outputs = run.get("outputs")
    reply = read_reply(outputs, reply_fmt) if reply_fmt is not None and not error else None
    return LoggedRequest(
        conversation,
        when(run),
        source,
        provider,
        LogFormat.LANGSMITH,
        messages,
        reply,
        rejection,
        status if rejection else None,
        body=dict(inputs) if reply_fmt is not None else None,
        blind=blind,
        ended=when(run, ("end_time",)),
    )


def _is_langchain(raw: list[Any]) -> bool:
    flat = raw[0] if raw and isinstance(raw[0], list) else raw
    return bool(flat) and all(isinstance(m, Mapping) and ("lc" in m or "type" in m) for m in flat)


def request_of_record(
    record: Mapping[str, Any], key: str | None, source: Source, hint: LogFormat | None
) -> LoggedRequest:
    """The request a raw log record holds: a body, or a body wrapped with
    its response and time."""
    body: object = record
    for name in ("request", "body", "request_body"):
        if isinstance(record.get(name), Mapping):
            body = record[name]
            break
    if not isinstance(body, Mapping) or ("messages" not in body and "input" not in body):
        raise TranscriptError(
            str(source),
            "is neither a model request body (with 'messages' or 'input'), a wrapped "
            'request ({"request": ..., "response": ...}), an OpenTelemetry span nor a '
            "LangSmith run.",
            "log the body your runtime sends to the model, one JSON object per line.",
        )
    found = body_format(body)
    if hint is not None and hint in _PROVIDER_FORMATS and found not in (None, hint):
        raise TranscriptError(
            str(source),
            f"is a {found} request body, not {hint}: the log is in the other format.",
            f"import it with --format {found} (or leave --format out).",
        )
    fmt, provider, messages, blind = read_body(body, str(source), hint)
    response = next(
        (record[n] for n in ("response", "response_body", "output") if n in record), None
    )
    status = record.get("status", record.get("status_code"))
    status = status if isinstance(status, int) and not isinstance(status, bool) else None
    rejection = error_text(response) if response is not None else None
    if rejection is None and isinstance(record.get("error"), Mapping | str):
        rejection = error_text({"error": record["error"]})
    if status is not None and status < 400:
        rejection = None
    conversation = find_key(record, key, ("metadata", "request.metadata", "body.metadata"))
    return LoggedRequest(
        conversation or "log",
        when(record),
        source,
        provider,
        fmt,
        messages,
        read_reply(response, fmt) if rejection is None else None,
        rejection,
        status if rejection is not None else None,
        body=dict(body) if fmt is not LogFormat.OPENAI_RESPONSES else None,
        blind=blind,
        ended=when(record, ("end_time", "finished_at")),
    )


_PROVIDER_FORMATS = (LogFormat.OPENAI_CHAT, LogFormat.OPENAI_RESPONSES, LogFormat.ANTHROPIC)
