"""What a production log holds, once read: requests of conversations.

Every reader (raw request bodies, OpenTelemetry GenAI spans, OpenInference
spans, LangSmith runs) turns its input into :class:`LoggedRequest` records,
each with its messages in one provider-neutral form (:class:`LoggedMessage`):
one record per system, user or assistant message and one per tool result, an
assistant message carrying the calls it issued.  The differ
(:mod:`.differ`) and the trace writer (:mod:`.incident`) read only these.

:func:`provider_body` renders messages back into the provider's request
body, with the logged call ids, so that the provider's rules
(:func:`prunecheck.model.provider.validate`) name the ids the log names.

A request the log shows only in part — its messages attribute cut by a
value-length limit, attributes dropped by an attribute-count limit
(``droppedAttributesCount``), message indices missing, content not captured
— is an :class:`Incomplete` record: counted with the conversation's requests
and named with the reason and what is known, never diffed (a removal seen
only against a partial request is not proven).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from prunecheck.model.context import Role
from prunecheck.model.provider import Provider

__all__ = [
    "ABBREVIATE",
    "Incomplete",
    "LogFormat",
    "LoggedCall",
    "LoggedMessage",
    "LoggedRequest",
    "Source",
    "estimate_tokens",
    "provider_body",
]


#: Characters of a long message content an imported log keeps (the rest is
#: its length and digest: :meth:`LoggedMessage.abbreviated`).
ABBREVIATE = 256


class LogFormat(StrEnum):
    """The shape a request's messages were logged in."""

    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    ANTHROPIC = "anthropic"
    OTEL_GENAI = "otel-genai"
    OPENINFERENCE = "openinference"
    LANGSMITH = "langsmith"


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` as prunecheck counts them for an imported log: a
    token per 4 characters, at least 1 (the log carries no tokenizer).

    >>> estimate_tokens(""), estimate_tokens("twelve chars"), estimate_tokens("x" * 4001)
    (1, 3, 1001)
    """
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """One tool call an assistant message issued, as logged."""

    id: str
    name: str
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class LoggedMessage:
    """One message of a logged request, provider-neutral.

    Attributes
    ----------
    role : Role
        system, user, assistant or tool.
    text : str
        The content as plain text (what the digest and the size read).
    calls : tuple[LoggedCall, ...]
        The calls an assistant message issued (its parallel batch).
    answers : str or None
        The call id a tool result answers.
    chars : int or None
        The length of the content when ``text`` holds it abbreviated
        (:meth:`abbreviated`), else None.
    """

    role: Role
    text: str
    calls: tuple[LoggedCall, ...] = ()
    answers: str | None = None
    chars: int | None = None

    def abbreviated(self, keep: int = ABBREVIATE) -> LoggedMessage:
        """The same message holding only the start of a long content and a
        digest of all of it: what the differ needs (identity, size, a few
        words), in bounded memory.  Short contents are kept whole.

        >>> from prunecheck.model.context import Role
        >>> long = LoggedMessage(Role.TOOL, "x" * 5000, answers="c1")
        >>> short = long.abbreviated()
        >>> (len(short.text) < 400, short.tokens == long.tokens, short.chars)
        (True, True, 5000)
        >>> short == LoggedMessage(Role.TOOL, "x" * 4999 + "y", answers="c1").abbreviated()
        False
        """
        if self.chars is not None or len(self.text) <= keep + 64:
            return self
        whole = hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=16)
        text = f"{self.text[:keep]}… [{len(self.text)} characters, {whole.hexdigest()}]"
        return LoggedMessage(self.role, text, self.calls, self.answers, len(self.text))

    @property
    def digest(self) -> str:
        """A short digest of the content (role, text, calls)."""
        raw = json.dumps(
            [self.role.value, self.text, [[c.id, c.name, c.arguments] for c in self.calls]],
            ensure_ascii=True,
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:8]

    @property
    def tokens(self) -> int:
        extra = sum(len(c.name) + len(c.arguments) + 8 for c in self.calls)
        size = len(self.text) if self.chars is None else self.chars
        return max(1, math.ceil((size + extra) / 4))

    def describe(self) -> str:
        """A few words naming the message, for findings."""
        if self.answers is not None:
            return f"the result of {self.answers}"
        if self.calls:
            return f"the assistant message holding {_span(tuple(c.id for c in self.calls))}"
        snippet = " ".join(self.text.split())
        snippet = snippet if len(snippet) <= 40 else snippet[:39] + "…"
        return f"the {self.role.value} message “{snippet}”"


def _span(ids: tuple[str, ...]) -> str:
    if len(ids) == 1:
        return f"call {ids[0]}"
    if len(ids) <= 3:
        return "calls " + ", ".join(ids)
    return f"calls {ids[0]}–{ids[-1]} ({len(ids)} calls)"


@dataclass(frozen=True, slots=True)
class Source:
    """Where a record was read: a file and a line, span or run within it."""

    file: str
    where: str = ""

    def __str__(self) -> str:
        return f"{self.file} ({self.where})" if self.where else self.file


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One model request of a conversation, as the log shows it.

    Attributes
    ----------
    conversation : str
        The conversation it belongs to (conversation, session, thread or
        trace id, or the user's key).
    at : float or None
        When it was sent (seconds since the epoch), if the log says.
    source : Source
        Where it was read.
    provider : Provider
        Whose rules apply.
    format : LogFormat
        The shape it was logged in.
    messages : tuple[LoggedMessage, ...]
        The messages sent.
    reply : tuple[LoggedMessage, ...] or None
        The model's answer, when the response was logged.
    rejection : str or None
        The provider's error text, when the request was rejected.
    status : int or None
        The HTTP status of a rejection, if logged.
    body : dict or None
        The request body in the provider's format, when logged as such.
    blind : tuple[str, ...]
        What this record cannot tell (server-side state, truncation …).
    ended : float or None
        When the response arrived, if the log says.
    """

    conversation: str
    at: float | None
    source: Source
    provider: Provider
    format: LogFormat
    messages: tuple[LoggedMessage, ...]
    reply: tuple[LoggedMessage, ...] | None = None
    rejection: str | None = None
    status: int | None = None
    body: dict[str, Any] | None = field(default=None, compare=False)
    blind: tuple[str, ...] = ()
    ended: float | None = None

    @property
    def tokens(self) -> int:
        return sum(m.tokens for m in self.messages)

    def request_body(self) -> dict[str, Any]:
        """The body in the provider's format: as logged, else rendered."""
        return self.body if self.body is not None else provider_body(self.messages, self.provider)


def _responses_items(messages: tuple[LoggedMessage, ...]) -> list[dict[str, Any]]:
    """OpenAI Responses ``input`` items: a message item per text, a
    ``function_call`` item per call, a ``function_call_output`` per result."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.TOOL:
            items.append({"type": "function_call_output", "call_id": m.answers, "output": m.text})
            continue
        if m.text or not m.calls:
            items.append({"type": "message", "role": m.role.value, "content": m.text})
        items += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in m.calls
        ]
    return items


def provider_body(messages: tuple[LoggedMessage, ...], provider: Provider) -> dict[str, Any]:
    """The request body ``messages`` make for ``provider`` (logged call ids kept).

    >>> from prunecheck.model.context import Role
    >>> messages = (LoggedMessage(Role.USER, "hi"), LoggedMessage(Role.TOOL, "42", answers="t1"))
    >>> body = provider_body(messages, Provider.ANTHROPIC)
    >>> body["messages"][1]["content"][0]["tool_use_id"]
    't1'
    """
    if provider is Provider.OPENAI_RESPONSES:
        return {"input": _responses_items(messages)}
    if provider is Provider.OPENAI:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role is Role.TOOL:
                out.append({"role": "tool", "tool_call_id": m.answers, "content": m.text})
            elif m.calls:
                out.append(
                    {
                        "role": "assistant",
                        "content": m.text or None,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments},
                            }
                            for c in m.calls
                        ],
                    }
                )
            else:
                out.append({"role": m.role.value, "content": m.text})
        return {"messages": out}
    system = [m.text for m in messages if m.role is Role.SYSTEM]
    rendered: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        if m.role is Role.TOOL:
            block = {"type": "tool_result", "tool_use_id": m.answers, "content": m.text}
            last = rendered[-1] if rendered else None
            if last is not None and last["role"] == "user" and last.get("_results"):
                last["content"].append(block)
            else:
                rendered.append({"role": "user", "content": [block], "_results": True})
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
        blocks += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": _arguments(c.arguments)}
            for c in m.calls
        ]
        rendered.append({"role": m.role.value, "content": blocks or m.text})
    for entry in rendered:
        entry.pop("_results", None)
    body: dict[str, Any] = {"messages": rendered}
    if system:
        body["system"] = "\n\n".join(system)
    return body


def _arguments(text: str) -> object:
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {"arguments": text}


@dataclass(frozen=True, slots=True)
class Incomplete:
    """A model request the log shows only in part: counted, named, not diffed.

    Readers return one instead of a :class:`LoggedRequest` when what the
    log holds of a request cannot be trusted as the whole request.  The
    request still counts ("12 requests, 3 incomplete") and is named where it
    falls in time; no removal is read from it.

    Attributes
    ----------
    conversation : str
        The conversation it belongs to (set by the reader once known).
    at : float or None
        When it was sent, if the log says.
    source : Source
        Where it was read.
    reason : str
        Why it is incomplete, in words naming the evidence: "its
        gen_ai.input.messages attribute (1024 characters) is cut off",
        "the SDK dropped 37 attributes (droppedAttributesCount 37)".
    known : str
        What is known of it nonetheless ("8 of at least 20 messages",
        "the provider rejected it"), or "".
    rejection : str or None
        The provider's error text, when the request was rejected.
    status : int or None
        The HTTP status of a rejection, if logged.
    messages : tuple[LoggedMessage, ...]
        The messages that could be read (possibly none); never diffed.
    """

    conversation: str
    at: float | None
    source: Source
    reason: str
    known: str = ""
    rejection: str | None = None
    status: int | None = None
    messages: tuple[LoggedMessage, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        known = f" ({self.known})" if self.known else ""
        return f"{self.source}: {self.reason}{known}: this request is not in the trace"
