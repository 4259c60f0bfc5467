"""The event algebra: every atomic thing that can happen in a runtime.

Events are plain frozen records with a JSON form.  Drivers (the SimPy
simulator, the Hypothesis machine, the explorer) choose *which* events happen
*when*; the subject's :meth:`~prunecheck.model.system.System.apply` (which the
drivers call) decides what each one does — for the model runtime,
:func:`prunecheck.model.runtime.apply`, whose pure form is ``step``.
Ids of messages and calls are assigned by the runtime in order (``m1``,
``c1`` …), so a trace names calls by the ids the runtime gave them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

from .errors import TraceError

__all__ = [
    "EVENT_TYPES",
    "AssistantChunk",
    "BudgetCheck",
    "CallSpec",
    "ClearToolUses",
    "Compaction",
    "Effect",
    "Event",
    "ExternalWrite",
    "FailureReason",
    "Invoke",
    "IssueBatch",
    "NewSession",
    "ResultChunk",
    "Retry",
    "SystemPrompt",
    "ToolFailure",
    "UserMessage",
    "event_from_json",
    "event_to_json",
]


class Effect(StrEnum):
    """What a tool does to the world when it runs."""

    READ = "read"
    WRITE = "write"


class FailureReason(StrEnum):
    ERROR = "error"
    TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class CallSpec:
    """One tool call of a batch: which tool, on which file, with which effect.

    ``background`` marks a long-running call that may stay pending across
    turn boundaries; the runtime treats it like any other pending call.
    """

    tool: str
    path: str = ""
    effect: Effect = Effect.READ
    background: bool = False


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """The system message, normally the first event of a trace."""

    kind: ClassVar[str] = "system"
    tokens: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user message; starts a new turn (also while a batch is in flight)."""

    kind: ClassVar[str] = "user"
    tokens: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class AssistantChunk:
    """A chunk of streamed assistant text; opens a message if none is open,
    closes it when ``last``.  A whole message is one chunk with ``last``."""

    kind: ClassVar[str] = "assistant"
    tokens: int
    last: bool = True
    text: str = ""


@dataclass(frozen=True, slots=True)
class IssueBatch:
    """The model's assistant message issuing a parallel batch of calls.

    The runtime runs every tool at once (reads see the current file version,
    writes bump it) and waits for each result.  ``reasoning`` > 0: a
    reasoning model wrote a reasoning item of that many tokens before the
    batch (OpenAI Responses' ``reasoning`` item, Anthropic's signed
    ``thinking`` block): a message of its own in the batch's unit, which
    the provider wants sent with the batch.
    """

    kind: ClassVar[str] = "batch"
    calls: tuple[CallSpec, ...]
    tokens: int
    text: str = ""
    reasoning: int = 0


@dataclass(frozen=True, slots=True)
class ResultChunk:
    """A chunk of a tool result for ``call``; the result is complete at ``last``.
    A result delivered whole is one chunk with ``last``."""

    kind: ClassVar[str] = "result"
    call: str
    tokens: int
    last: bool = True


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A tool failed or timed out; the runtime appends an error result."""

    kind: ClassVar[str] = "failure"
    call: str
    reason: FailureReason = FailureReason.ERROR
    tokens: int = 20


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """An explicit budget check (the runtime also fires its own, per its
    ``check_at`` knob)."""

    kind: ClassVar[str] = "check"


@dataclass(frozen=True, slots=True)
class Invoke:
    """A model invocation: the runtime renders the context and sends it.

    ``chained`` is an OpenAI Responses request with ``previous_response_id``:
    it names the last response, which the server stored with every item it
    held, and sends only the items the server does not hold (provider
    ``openai-responses`` only).  What the model sees is then the server's
    items plus the new ones, whatever the client did to its own copy.
    """

    kind: ClassVar[str] = "invoke"
    chained: bool = False


@dataclass(frozen=True, slots=True)
class Retry:
    """The runtime's reaction to the last rejected invocation, per its
    ``retry`` knob.  Does nothing if the last invocation was not rejected."""

    kind: ClassVar[str] = "retry"


@dataclass(frozen=True, slots=True)
class ExternalWrite:
    """Something outside the agent changed a file (an intervening step)."""

    kind: ClassVar[str] = "write"
    path: str


@dataclass(frozen=True, slots=True)
class NewSession:
    """The agent starts a fresh session: the context, the call and batch
    records and the spill store are dropped (a system prompt and a user
    message normally follow).  The world of files, the runtime's counters
    and its id numbering carry over, so ids stay unique within a trace.
    Only possible when no call is pending and nothing streams."""

    kind: ClassVar[str] = "session"


@dataclass(frozen=True, slots=True)
class Compaction:
    """OpenAI Responses server-side compaction (``context_management`` with
    ``compact_threshold``, or ``/responses/compact``): the server replaces
    the assistant messages, tool calls and tool results it holds for the
    chain by one compaction item of ``tokens`` tokens; user messages and
    the instructions stay.  Needs a stored response (an invocation before it
    under provider ``openai-responses``).
    See https://developers.openai.com/api/docs/guides/compaction.

    Under provider ``anthropic``: Anthropic's server compaction
    (``context_management`` edit ``compact_20260112``): the response
    carries a ``compaction`` block of ``tokens`` tokens that the client
    keeps in its history; the server ignores every message before it but
    the system prompt while the client sends the block.
    See https://platform.claude.com/docs/en/build-with-claude/compaction."""

    kind: ClassVar[str] = "compaction"
    tokens: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class ClearToolUses:
    """Anthropic server-side context editing (``context_management.edits``
    of type ``clear_tool_uses_20250919``), sent with every request from here
    on: before the model sees a request of more than ``trigger`` input
    tokens, the server replaces the oldest tool results by a placeholder,
    keeping the ``keep`` most recent ones and every result of a tool named in
    ``exclude_tools``, and clears nothing unless that frees at least
    ``clear_at_least`` tokens; ``clear_tool_inputs`` clears the calls'
    inputs too.  The client's copy is left whole.  Provider ``anthropic`` only.
    See https://platform.claude.com/docs/en/build-with-claude/context-editing."""

    kind: ClassVar[str] = "clear_tool_uses"
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    clear_tool_inputs: bool = False


Event = (
    SystemPrompt
    | UserMessage
    | AssistantChunk
    | IssueBatch
    | ResultChunk
    | ToolFailure
    | BudgetCheck
    | Invoke
    | Retry
    | ExternalWrite
    | NewSession
    | Compaction
    | ClearToolUses
)

EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        SystemPrompt,
        UserMessage,
        AssistantChunk,
        IssueBatch,
        ResultChunk,
        ToolFailure,
        BudgetCheck,
        Invoke,
        Retry,
        ExternalWrite,
        NewSession,
        Compaction,
        ClearToolUses,
    )
}


def event_to_json(event: Event) -> dict[str, Any]:
    """The JSON form: ``{"kind": ..., field: value, ...}``; defaults omitted.

    >>> event_to_json(ResultChunk("c2", 40, last=False))
    {'kind': 'result', 'call': 'c2', 'tokens': 40, 'last': False}
    """
    out: dict[str, Any] = {"kind": event.kind}
    for f in fields(event):
        value = getattr(event, f.name)
        if value == f.default:
            continue
        if isinstance(event, IssueBatch) and f.name == "calls":
            value = [_call_to_json(c) for c in event.calls]
        elif isinstance(value, tuple):
            value = list(value)
        out[f.name] = value.value if isinstance(value, StrEnum) else value
    return out


def _call_to_json(call: CallSpec) -> dict[str, Any]:
    data = {k: v for k, v in asdict(call).items() if v not in ("", False)}
    if call.effect is Effect.READ:
        data.pop("effect")
    else:
        data["effect"] = call.effect.value
    return data


_FIELDS: dict[type, tuple[dict[str, Any], frozenset[str]]] = {}


def _fields_of(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    """An event class's fields by name, and the keys its JSON may hold (cached)."""
    found = _FIELDS.get(cls)
    if found is None:
        names = {f.name: f for f in fields(cls)}
        found = _FIELDS[cls] = (names, frozenset(names) | {"kind"})
    return found


def event_from_json(data: object, where: str = "event") -> Event:
    """Parse one event; raise :class:`TraceError` naming ``where`` if malformed.

    >>> event_from_json({"kind": "user", "tokens": 12})
    UserMessage(tokens=12, text='')
    """
    if not isinstance(data, Mapping):
        raise TraceError(where, f"an event must be a JSON object, not {type(data).__name__}.")
    kind = data.get("kind")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TraceError(
            where,
            f"unknown event kind {kind!r}.",
            f"use one of: {', '.join(sorted(EVENT_TYPES))}.",
        )
    names, allowed = _fields_of(cls)
    if not allowed.issuperset(data):
        extra = set(data) - allowed
        raise TraceError(
            where,
            f"event {kind!r} has unknown field(s) {sorted(extra)}.",
            f"its fields are {sorted(names)}.",
        )
    kwargs: dict[str, Any] = {}
    for name in names:
        if name not in data:
            continue
        value = data[name]
        if name == "calls":
            value = _calls_from_json(value, where)
        elif name == "reason":
            value = _enum(FailureReason, value, where, name)
        elif name in _COUNTS:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TraceError(
                    where, f"field {name!r} must be a non-negative integer, got {value!r}."
                )
        elif name in _FLAGS:
            if not isinstance(value, bool):
                raise TraceError(where, f"field {name!r} must be true or false, got {value!r}.")
        elif name == "exclude_tools":
            value = _names(value, where, name)
        elif not isinstance(value, str):
            raise TraceError(where, f"field {name!r} must be a string, got {value!r}.")
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        missing = [
            n
            for n, f in names.items()
            if n not in data and f.default is MISSING and f.default_factory is MISSING
        ]
        raise TraceError(
            where,
            f"event {kind!r} is missing field(s) {missing}.",
            f"see the example traces under tests/corpus/. ({exc})",
        ) from None


#: Fields that hold a count (tokens, a threshold) and fields that hold a flag.
_COUNTS = frozenset({"tokens", "trigger", "keep", "clear_at_least", "reasoning"})
_FLAGS = frozenset({"last", "chained", "clear_tool_inputs"})


def _names(value: object, where: str, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TraceError(
            where,
            f"field {name!r} must be a list of tool names, got {value!r}.",
            'for example ["memory"].',
        )
    return tuple(value)


def _enum(cls: type[FailureReason] | type[Effect], value: object, where: str, name: str) -> Any:
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return cls(value)
    except ValueError:
        choices = ", ".join(m.value for m in cls)
        raise TraceError(
            where, f"field {name!r} must be one of {choices}, got {value!r}."
        ) from None


def _calls_from_json(value: object, where: str) -> tuple[CallSpec, ...]:
    if not isinstance(value, list) or not value:
        raise TraceError(where, "field 'calls' must be a non-empty list of calls.")
    calls = []
    for i, item in enumerate(value):
        at = f"{where}.calls[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str):
            raise TraceError(
                at,
                "a call must be an object with a string 'tool'.",
                'for example {"tool": "read_file", "path": "src/app.py"}.',
            )
        extra = set(item) - {"tool", "path", "effect", "background"}
        if extra:
            raise TraceError(at, f"unknown call field(s) {sorted(extra)}.")
        calls.append(
            CallSpec(
                tool=item["tool"],
                path=str(item.get("path", "")),
                effect=_enum(Effect, item.get("effect", "read"), at, "effect"),
                background=bool(item.get("background", False)),
            )
        )
    return tuple(calls)
