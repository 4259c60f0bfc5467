"""Model calls recorded as OpenTelemetry spans: the GenAI semantic
conventions and OpenInference's.

Two file layouts: OTLP JSON, as the OpenTelemetry Collector's file exporter
writes it (one ``{"resourceSpans": [...]}`` export request a line; ids in
hex, or base64 as protobuf's own JSON mapping writes them), and the Python
SDK's own span JSON (``ReadableSpan.to_json()``, as the console exporter
prints it: one object after another).  :func:`spans_of` reads either into
:class:`Span` records.

A span is a model request when it carries

* ``gen_ai.input.messages`` (the current GenAI conventions: messages of
  ``parts`` — ``text``, ``tool_call``, ``tool_call_response``), with
  ``gen_ai.output.messages`` and ``gen_ai.system_instructions``; its
  conversation is ``gen_ai.conversation.id`` (its own or an ancestor
  span's), else its trace;
* or ``llm.input_messages.N.message.*`` (OpenInference, span kind LLM),
  with ``llm.output_messages``; its conversation is ``session.id``, else
  its trace.

A span whose content was not captured, or whose messages attribute was cut
by an attribute length limit, is named as a gap, never guessed at.
"""

from __future__ import annotations

import ast
import base64
import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.context import Role
from prunecheck.model.provider import Provider, recognize
from prunecheck.sim.ingest.bodies import provider_message, text_of
from prunecheck.sim.ingest.records import (
    LogFormat,
    LoggedCall,
    LoggedMessage,
    LoggedRequest,
    Source,
)

__all__ = [
    "UNLOGGED",
    "Span",
    "ToolRun",
    "history_of_run",
    "is_responses_span",
    "is_span",
    "request_of_span",
    "spans_of",
    "tool_run_of_span",
    "turns",
]

#: The blind spot of a failed model call whose span holds no messages.
UNLOGGED = "its span holds no messages (the instrumentation records them only with a response)"


@dataclass(frozen=True, slots=True)
class Span:
    """One span, whichever layout it was read from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: float | None
    end: float | None
    attributes: dict[str, Any]
    error: str | None
    events: tuple[tuple[str, dict[str, Any]], ...] = field(default=())
    where: str = ""
    dropped: int = 0  # droppedAttributesCount: attributes the SDK's count limit dropped


def is_span(record: Mapping[str, Any]) -> bool:
    """Whether a JSON record is OTLP JSON or the SDK's span JSON."""
    return "resourceSpans" in record or ("context" in record and "attributes" in record)


def _hex(value: object) -> str:
    text = str(value or "")
    if text.startswith("0x"):
        return text[2:]
    if re.fullmatch(r"[0-9a-fA-F]+", text):
        return text.lower()
    try:
        return base64.b64decode(text, validate=True).hex()
    except ValueError:
        return text


def _any_value(value: Mapping[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: _any_value(kv.get("value", {})) for kv in value["kvlistValue"]["values"]}
    return None


def _kv(items: object) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {
        kv["key"]: _any_value(kv.get("value") or {})
        for kv in items
        if isinstance(kv, Mapping) and "key" in kv
    }


def _nanos(value: object) -> float | None:
    """Seconds from OTLP's nanoseconds; None if absent; NaN or infinite if
    present but no count of nanoseconds ("NaN", 1e400, 400 digits): not a
    time, which the reader says (``timely``) instead of dropping it unsaid."""
    if value in (None, "", "0", 0):
        return None
    if isinstance(value, float) and not isinstance(value, bool):
        return value / 1e9
    try:
        return int(str(value)) / 1e9
    except ValueError:
        return math.nan
    except OverflowError:  # 400 digits: not a time (the reader says so)
        return math.inf


def _iso(value: object) -> float | None:
    """Seconds from an ISO time; None if absent; NaN if present but no time."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        return math.nan
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return math.nan


def spans_of(record: Mapping[str, Any], where: str) -> Iterator[Span]:
    """The spans of one JSON record (an OTLP export request or one SDK span)."""
    if "resourceSpans" in record:
        for r in record.get("resourceSpans") or []:
            for scope in (r or {}).get("scopeSpans") or []:
                for s in (scope or {}).get("spans") or []:
                    if not isinstance(s, Mapping):
                        continue
                    status = s.get("status") or {}
                    failed = status.get("code") in (2, "STATUS_CODE_ERROR")
                    yield Span(
                        _hex(s.get("traceId")),
                        _hex(s.get("spanId")),
                        _hex(s.get("parentSpanId")) or None,
                        str(s.get("name", "")),
                        _nanos(s.get("startTimeUnixNano")),
                        _nanos(s.get("endTimeUnixNano")),
                        _kv(s.get("attributes")),
                        (status.get("message") or "error") if failed else None,
                        tuple((str(e.get("name")), _kv(e.get("attributes")))
                              for e in s.get("events") or [] if isinstance(e, Mapping)),
                        f"{where}, span {_hex(s.get('spanId'))}",
                        _count(s.get("droppedAttributesCount")),
                    )  # fmt: skip
        return
    context = record.get("context") or {}
    status = record.get("status") or {  # Phoenix's span JSON: at the top, as the kind
        "status_code": record.get("status_code"),
        "description": record.get("status_message"),
    }
    attributes = record.get("attributes")
    if isinstance(attributes, Mapping) and isinstance(record.get("span_kind"), str):
        attributes = {"openinference.span.kind": record["span_kind"], **attributes}
    yield Span(
        _hex(context.get("trace_id")),
        _hex(context.get("span_id")),
        _hex(record.get("parent_id")) or None,
        str(record.get("name", "")),
        _iso(record.get("start_time")),
        _iso(record.get("end_time")),
        dict(attributes) if isinstance(attributes, Mapping) else {},
        (status.get("description") or "error") if status.get("status_code") == "ERROR" else None,
        tuple((str(e.get("name")), dict(e.get("attributes") or {}))
              for e in record.get("events") or [] if isinstance(e, Mapping)),
        f"{where}, span {_hex(context.get('span_id'))}",
    )  # fmt: skip


_PROVIDERS = {"openai": Provider.OPENAI, "azure.ai.openai": Provider.OPENAI,
              "anthropic": Provider.ANTHROPIC, "aws.bedrock": Provider.ANTHROPIC}  # fmt: skip


def _provider(attributes: Mapping[str, Any]) -> Provider | None:
    for key in ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"):
        value = attributes.get(key)
        if isinstance(value, str) and value.lower() in _PROVIDERS:
            return _PROVIDERS[value.lower()]
    return None


def _count(value: Any) -> int:
    """A span's ``droppedAttributesCount`` (absent: 0); ValueError if it is
    not a count (the reader names the span)."""
    count = int(value or 0)
    if count < 0:
        raise ValueError(f"droppedAttributesCount {count} is not a count")
    return count


def _dropped_provider(span: Span, rejection: str | None) -> Provider | None:
    """The provider of a span whose attribute naming it the SDK's count limit
    dropped: the one its name starts with (OpenLLMetry's ``anthropic.chat``),
    else the one whose words its rejection quotes; None if neither says."""
    if not span.dropped:
        return None
    head = span.name.split(".")[0].lower()
    if head in _PROVIDERS:
        return _PROVIDERS[head]
    rule = recognize(rejection) if rejection else None
    return rule.provider if rule is not None and rule.provider in _PROVIDERS.values() else None


#: The Responses API's item types, as an input list or an output carries them.
_RESPONSES_ITEM = re.compile(
    r'"type":\s*"(?:function_call|function_call_output|reasoning|output_text|input_text)"'
)


def is_responses_span(span: Span) -> bool:
    """Whether an LLM span records an OpenAI Responses API call (whatever
    shape its messages were flattened into): the OpenAI Agents SDK's
    ``response`` span (its Responses model; its Chat Completions model
    writes ``generation`` spans), a response object as its output, or
    Responses items as its input.  OpenInference writes such a call's items
    as chat messages; its rules and words are still the Responses API's."""
    a = span.attributes
    if a.get("llm.system", a.get("gen_ai.system", "openai")) not in ("openai", "OpenAI"):
        return False
    if span.name == "response" and a.get("openinference.span.kind") == "LLM":
        return True
    output = a.get("output.value")
    if isinstance(output, str) and re.search(r'"object":\s*"response"', output[:4096]):
        return True
    given = a.get("input.value")
    return isinstance(given, str) and _RESPONSES_ITEM.search(given[:65536]) is not None


_WRAPPED = re.compile(r"^[^{]*?: (\{.*\})\s*$", re.S)
_STATUS = re.compile(r"status_code: (\d{3})")
_LOOSE = re.compile(r"""^\{'error': (['"])(.*)\1\}$""", re.S)


def _unwrapped(text: str) -> str:
    """The SDK's error string inside a framework's wrapper: the Agents SDK's
    ``Error getting response: {'error': '...'}`` (its SpanError, as
    OpenInference writes it)."""
    found = _WRAPPED.match(text)
    if found is None:
        return text
    try:
        value = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        loose = _LOOSE.match(found.group(1))  # a repr cut or mis-quoted: its one value
        return loose.group(2) if loose else text
    inner = value.get("error") if isinstance(value, dict) else None
    return inner if isinstance(inner, str) and inner else text


def rejection_of(span: Span) -> tuple[str | None, int | None]:
    """The provider's error text of a failed span, and the HTTP status."""
    texts = [str(a.get("exception.message", "")) for n, a in span.events if n == "exception"]
    texts.append(span.error or "")
    for text in texts:
        if text and text != "error":
            message, status = provider_message(_unwrapped(text))
            found = _STATUS.search(text)  # pydantic-ai's ModelHTTPError
            return message, status or (int(found.group(1)) if found else None)
    return span.error, None


class Unreadable(Exception):
    """A span's messages cannot be read; the message says why."""


def _parsed(value: object, name: str) -> list[Any]:
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise Unreadable(f"its {name} attribute is not a JSON string of messages")
    try:
        data = json.loads(value)
    except json.JSONDecodeError:
        raise Unreadable(
            f"its {name} attribute ({len(value)} characters) is cut off or not JSON — the "
            "instrumentation truncated it (an attribute length limit?)"
        ) from None
    if not isinstance(data, list):
        raise Unreadable(f"its {name} attribute is not a list of messages")
    return data


def _genai_messages(raw: Iterable[Any]) -> list[LoggedMessage]:
    out = []
    for m in raw:
        if not isinstance(m, Mapping):
            raise Unreadable("a message in it is not an object")
        role = str(m.get("role", ""))
        texts, calls = [], []
        for part in _parts(m):
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind in ("tool_call", "tool_use"):  # tool_use: an Anthropic block as a part
                args = part.get("arguments", part.get("input"))
                args = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
                calls.append(LoggedCall(str(part.get("id")), str(part.get("name", "")), args))
            elif kind in ("tool_call_response", "tool_result"):
                response = part.get("response", part.get("result", part.get("content")))
                text = response if isinstance(response, str) else json.dumps(response)
                answers = part.get("id", part.get("tool_use_id"))
                out.append(LoggedMessage(Role.TOOL, text, answers=str(answers)))
            elif kind == "text" or "content" in part:
                texts.append(text_of(part.get("content", part.get("text"))))
        if role == "tool":
            continue
        known = {"system": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT}
        if role not in known:
            raise Unreadable(f"a message in it has role {role!r}")
        if texts or calls or role == "assistant":
            out.append(LoggedMessage(known[role], "\n".join(texts), tuple(calls)))
    return out


def _parts(message: Mapping[str, Any]) -> list[Any]:
    """A GenAI message's parts: its ``parts`` list, or Anthropic-style
    ``content`` (a string or a list of blocks) some instrumentations write
    instead; a ``parts`` that is not a list cannot be read as parts."""
    parts = message.get("parts")
    if parts is None and "content" in message:
        content = message["content"]
        return (
            [{"type": "text", "content": content}]
            if isinstance(content, str)
            else (content if isinstance(content, list) else [])
        )
    if parts is not None and not isinstance(parts, list):
        raise Unreadable(
            f"a message's parts is a JSON {type(parts).__name__}, not a list of parts "
            "(the GenAI conventions' shape), so its calls and results cannot be told apart"
        )
    return parts or []


def _unflatten(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``llm.input_messages.N.message.*`` back into one dict per message."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        index, _, rest = key[len(prefix) + 1 :].partition(".")
        if not index.isdigit():
            continue
        node = found.setdefault(int(index), {})
        parts = rest.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            node = child if isinstance(child, dict) else {}
        node[parts[-1]] = value
    return [found[i] for i in sorted(found)]


def _listed(node: object) -> list[Any]:
    if not isinstance(node, Mapping):
        return []
    return [node[k] for k in sorted(node, key=lambda k: int(k) if k.isdigit() else -1)]


def _openinference_messages(raw: list[dict[str, Any]]) -> list[LoggedMessage]:
    out = []
    for entry in raw:
        m = entry.get("message", {})
        role = str(m.get("role", ""))
        contents = [c.get("message_content", {}) for c in _listed(m.get("contents"))]
        text = m.get("content")
        if not isinstance(text, str):
            text = "\n".join(
                str(c.get("text", "")) for c in contents if c.get("type") in ("text", None)
            )
        if role == "tool":
            out.append(LoggedMessage(Role.TOOL, text, answers=str(m.get("tool_call_id"))))
            continue
        calls = []
        for c in _listed(m.get("tool_calls")):
            call = c.get("tool_call", {})
            function = call.get("function", {})
            calls.append(
                LoggedCall(
                    str(call.get("id")),
                    str(function.get("name", "")),
                    str(function.get("arguments", "")),
                )
            )
        known = {"system": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT}
        if role not in known:
            raise Unreadable(f"a message in it has role {role!r}")
        out.append(LoggedMessage(known[role], text, tuple(calls)))
    return turns(out)


def turns(messages: list[LoggedMessage]) -> list[LoggedMessage]:
    """Messages regrouped into the turns that produced them: an assistant
    message holding only calls that follows an assistant message joins it.

    The Responses API returns a turn as items — text, then one
    ``function_call`` item per call — and OpenInference writes each item as
    a message of its own; consecutive items of one response are one
    assistant message (one parallel batch), as Chat Completions and
    Anthropic send them.  Text messages are never joined: an assistant that
    says the same words twice said them twice.

    >>> from prunecheck.model.context import Role
    >>> a = LoggedMessage(Role.ASSISTANT, "", (LoggedCall("c1", "f"),))
    >>> b = LoggedMessage(Role.ASSISTANT, "", (LoggedCall("c2", "f"),))
    >>> [len(m.calls) for m in turns([a, b])]
    [2]
    """
    out: list[LoggedMessage] = []
    for m in messages:
        last = out[-1] if out else None
        if (
            last is not None
            and m.role is Role.ASSISTANT
            and last.role is Role.ASSISTANT
            and m.calls
            and not m.text
        ):
            out[-1] = LoggedMessage(Role.ASSISTANT, last.text, (*last.calls, *m.calls))
        else:
            out.append(m)
    return out


def _event_messages(raw: list[Any]) -> tuple[list[LoggedMessage], list[LoggedMessage]]:
    """pydantic-ai's instrumentation format 1: the request's messages and the
    reply, as OpenTelemetry GenAI events in one ``events`` attribute."""
    sent: list[LoggedMessage] = []
    reply: list[LoggedMessage] = []
    for event in raw:
        if not isinstance(event, Mapping):
            raise Unreadable("an event in it is not an object")
        choice = event.get("event.name") == "gen_ai.choice"
        m = event.get("message") if choice else event
        if not isinstance(m, Mapping):
            continue
        role = str(m.get("role", ""))
        text = text_of(m.get("content"))
        if role == "tool":
            (reply if choice else sent).append(
                LoggedMessage(Role.TOOL, text, answers=str(m.get("id", m.get("tool_call_id"))))
            )
            continue
        known = {"system": Role.SYSTEM, "user": Role.USER, "assistant": Role.ASSISTANT}
        if role not in known:
            raise Unreadable(f"an event in it has role {role!r}")
        calls = tuple(
            LoggedCall(str(c.get("id")), str((c.get("function") or {}).get("name", "")),
                       str((c.get("function") or {}).get("arguments", "")))
            for c in m.get("tool_calls") or [] if isinstance(c, Mapping)
        )  # fmt: skip
        (reply if choice else sent).append(LoggedMessage(known[role], text, calls))
    return sent, reply


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool's execution as a span records it: what the runtime had to send
    back as the call's result."""

    name: str
    arguments: str
    output: str
    call: str | None  # the call id, when the span names it
    at: float | None


def tool_run_of_span(span: Span) -> ToolRun | None:
    """The tool execution a span records (OpenInference TOOL spans,
    pydantic-ai's ``running tool``, GenAI ``execute_tool``), or None."""
    a = span.attributes
    if a.get("openinference.span.kind") == "TOOL" and "tool.name" in a:
        name, arguments, output = a["tool.name"], a.get("input.value"), a.get("output.value")
    elif "gen_ai.tool.name" in a and ("tool_response" in a or "gen_ai.tool.call.result" in a):
        name = a["gen_ai.tool.name"]
        arguments = a.get("tool_arguments", a.get("gen_ai.tool.call.arguments"))
        output = a.get("tool_response", a.get("gen_ai.tool.call.result"))
    else:
        return None
    call = a.get("gen_ai.tool.call.id")
    return ToolRun(
        str(name),
        arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True),
        output if isinstance(output, str) else json.dumps(output),
        str(call) if call is not None else None,
        span.start,
    )


def history_of_run(span: Span) -> tuple[LoggedMessage, ...] | None:
    """The messages an agent run span holds when the run ended (pydantic-ai's
    ``pydantic_ai.all_messages``, or ``all_messages_events`` in format 1),
    with the system instructions; None if it holds none."""
    a = span.attributes
    try:
        if "pydantic_ai.all_messages" in a:
            messages = _genai_messages(_parsed(a["pydantic_ai.all_messages"], "all_messages"))
        elif "all_messages_events" in a:
            messages, _ = _event_messages(_parsed(a["all_messages_events"], "all_messages"))
        else:
            return None
        system = a.get("gen_ai.system_instructions")
        if system is not None and not any(m.role is Role.SYSTEM for m in messages):
            parts = _parsed(system, "gen_ai.system_instructions")
            text = "\n".join(text_of(p.get("content")) for p in parts if isinstance(p, Mapping))
            messages.insert(0, LoggedMessage(Role.SYSTEM, text))
    except Unreadable:
        return None
    return tuple(messages)


_MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")


def _named_model_call(span: Span) -> bool:
    """A span the count limit left without ``gen_ai.operation.name`` (set
    first, it goes first) whose name is still a model call's: the GenAI
    conventions' ``{operation} {model}`` (pydantic-ai's ``chat gpt-4.1``) or
    OpenLLMetry's ``{provider}.chat``."""
    if not span.dropped or "gen_ai.operation.name" in span.attributes:
        return False
    head = span.name.split(" ")[0]
    return head in _MODEL_OPERATIONS or (
        "." in head and head.rpartition(".")[2] in _MODEL_OPERATIONS
    )


def request_of_span(span: Span, conversation: str, source: str) -> LoggedRequest | str | None:
    """The model request a span records; a sentence if it is one whose
    messages cannot be read; None if it records no model call.

    A failed model call whose span holds no messages (the Agents SDK and
    pydantic-ai record them only with a response) is a request with no
    messages, its rejection and ``UNLOGGED`` in its blind spots:
    :mod:`.recovery` recovers its messages from the spans around it."""
    a = span.attributes
    where = Source(source, span.where.partition(", ")[2] or span.span_id)
    rejection, status = rejection_of(span) if span.error else (None, None)
    provider = _provider(a) or _dropped_provider(span, rejection) or Provider.OPENAI
    if provider is Provider.OPENAI and is_responses_span(span):
        provider = Provider.OPENAI_RESPONSES
    is_llm = (
        a.get("openinference.span.kind") == "LLM"
        or a.get("gen_ai.operation.name") in _MODEL_OPERATIONS
        or _named_model_call(span)
    )
    if (
        is_llm
        and rejection is not None
        and "gen_ai.input.messages" not in a
        and "events" not in a
        and not _unflatten(a, "llm.input_messages")
    ):
        return LoggedRequest(conversation, span.start, where, provider,
                             LogFormat.OPENINFERENCE if "openinference.span.kind" in a
                             else LogFormat.OTEL_GENAI, (), None, rejection, status,
                             blind=(UNLOGGED,), ended=span.end)  # fmt: skip
    try:
        if "events" in a and (
            a.get("gen_ai.operation.name") == "chat"
            or (span.dropped and "gen_ai.operation.name" not in a)  # the count limit's doing
        ):
            sent, answer = _event_messages(_parsed(a["events"], "events"))
            messages, reply, fmt = sent, tuple(answer) or None, LogFormat.OTEL_GENAI
        elif "gen_ai.input.messages" in a:
            messages = _genai_messages(_parsed(a["gen_ai.input.messages"], "gen_ai.input.messages"))
            system = a.get("gen_ai.system_instructions")
            if system is not None:
                parts = _parsed(system, "gen_ai.system_instructions")
                text = "\n".join(text_of(p.get("content")) for p in parts if isinstance(p, Mapping))
                messages.insert(0, LoggedMessage(Role.SYSTEM, text))
            reply = None
            if "gen_ai.output.messages" in a:
                reply = tuple(
                    _genai_messages(_parsed(a["gen_ai.output.messages"], "gen_ai.output.messages"))
                )
            fmt = LogFormat.OTEL_GENAI
        elif a.get("openinference.span.kind") == "LLM":
            raw = _unflatten(a, "llm.input_messages")
            if not raw:
                return (
                    f"{where}: an LLM span without llm.input_messages (inputs hidden or not "
                    "captured): this request is not in the trace"
                )
            messages = _openinference_messages(raw)
            out = _unflatten(a, "llm.output_messages")
            reply = tuple(_openinference_messages(out)) if out else None
            fmt = LogFormat.OPENINFERENCE
        elif a.get("gen_ai.operation.name") in ("chat", "text_completion", "generate_content"):
            return (
                f"{where}: a {a['gen_ai.operation.name']} span without gen_ai.input.messages "
                "(message content not captured: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_"
                "MESSAGE_CONTENT): this request is not in the trace"
            )
        else:
            return None
    except Unreadable as exc:
        return f"{where}: {exc}: this request is not in the trace"
    return LoggedRequest(
        conversation,
        span.start,
        where,
        provider,
        fmt,
        tuple(turns(list(messages))),
        reply if rejection is None else None,
        rejection,
        status,
        ended=span.end,
    )
