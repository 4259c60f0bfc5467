"""Provider rules: check a request body the way Anthropic and OpenAI do.

A provider rejects a request (HTTP 400) whose history breaks tool pairing: a
result that answers no call, or a call that no result answers.  A pruning
policy that cuts a unit in two produces exactly such a history.  This module
checks a request body as the provider does and answers with the provider's
own error texts.  Pure: no I/O, no clock; O(number of messages + blocks).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NoReturn

from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider.vocabulary import CALL_WITHOUT_RESULT, RESULT_WITHOUT_CALL, Provider

__all__ = ["ProviderError", "error_of", "implicated_calls", "validate"]

# Verbatim as the providers send them (HTTP 400); "preceeding" is OpenAI's.
_ANTHROPIC_TEXT = {
    RESULT_WITHOUT_CALL: (
        "{path}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message."
    ),
    CALL_WITHOUT_RESULT: (
        "{path}: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message."
    ),
}
_OPENAI_TEXT = {
    RESULT_WITHOUT_CALL: (
        "Invalid parameter: messages with role 'tool' must be a response to a "
        "preceeding message with 'tool_calls'."
    ),
    CALL_WITHOUT_RESULT: (
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have "
        "response messages: {ids}"
    ),
}

_ANTHROPIC_ROLES = ("user", "assistant")
_OPENAI_ROLES = ("system", "developer", "user", "assistant", "tool", "function")


@dataclass(frozen=True, slots=True)
class ProviderError:
    """One tool pairing error, as the provider would answer it.

    Attributes
    ----------
    provider: the provider that rejects the request.
    kind: ``"result_without_call"`` or ``"call_without_result"``.
    path: the offending message (``"messages.4"``) or block
        (``"messages.3.content.0"``), indexed in the request's ``messages``.
    ids: the tool_use / tool_call ids involved.
    text: the exact text the provider sends.
    status: the HTTP status.
    """

    provider: Provider
    kind: str
    path: str
    ids: tuple[str, ...]
    text: str
    status: int = 400

    def __str__(self) -> str:
        return f"HTTP {self.status} ({self.provider}): {self.text}"


def error_of(provider: Provider, kind: str, path: str, ids: tuple[str, ...]) -> ProviderError:
    """The error ``provider`` answers for one pairing error of ``kind`` at ``path``."""
    texts = _ANTHROPIC_TEXT if provider is Provider.ANTHROPIC else _OPENAI_TEXT
    text = texts[kind].format(path=path, ids=", ".join(ids))
    return ProviderError(provider, kind, path, ids, text)


# ----------------------------------------------------------------- validate
def validate(
    payload: object, provider: Provider, *, source: str = "transcript"
) -> list[ProviderError]:
    """Every tool pairing error of a request, in message order.

    The provider stops at the first error: ``errors[0]`` is what the API
    answers; the others surface one by one as each is fixed.

    Anthropic: each ``tool_result`` block of a user message must answer a
    ``tool_use`` block of the immediately previous (assistant) message, and
    each ``tool_use`` block must be answered in the immediately next (user)
    message.  OpenAI Chat Completions: each ``tool`` message must answer a
    call of the nearest preceding assistant message with ``tool_calls``, with
    only tool messages in between, and every such call must be answered by
    the tool messages directly after it.  A call with nothing after it (the
    last message) counts as unanswered for both.  O(messages + blocks).

    Parameters
    ----------
    payload:
        A request body (a dict with ``"messages"``; for Anthropic optionally
        ``"system"``) or a bare list of message dicts, as parsed from JSON.
    provider:
        Whose rules and texts to use.
    source:
        How to name the payload in a :class:`TranscriptError`.

    Returns
    -------
    list[ProviderError]
        Empty when the provider would accept the request's tool pairing.

    Raises
    ------
    TranscriptError
        When the payload is not a transcript of that provider at all.

    Examples
    --------
    >>> body = {"messages": [
    ...     {"role": "user", "content": "hi"},
    ...     {"role": "user", "content": [
    ...         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}]},
    ... ]}
    >>> [e.text for e in validate(body, Provider.ANTHROPIC)]  # doctest: +NORMALIZE_WHITESPACE
    ['messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1.
      Each `tool_result` block must have a corresponding `tool_use` block in the previous
      message.']
    >>> validate([{"role": "user", "content": "hi"}], Provider.OPENAI)
    []
    """
    provider = Provider(provider)
    messages = _messages_of(payload, provider, source)
    if provider is Provider.ANTHROPIC:
        return _validate_anthropic(messages, source)
    return _validate_openai(messages, source)


def implicated_calls(errors: Iterable[ProviderError]) -> frozenset[str]:
    """The union of the call ids that the errors involve.

    >>> implicated_calls(validate([{"role": "tool", "tool_call_id": "c1", "content": ""}],
    ...                           Provider.OPENAI))
    frozenset({'c1'})
    """
    return frozenset(cid for error in errors for cid in error.ids)


_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean",
               int: "number", float: "number", type(None): "null"}  # fmt: skip
# Anthropic block type -> (the role that may carry it, the key naming its call)
_CALL_BLOCKS = {"tool_use": ("assistant", "id"), "tool_result": ("user", "tool_use_id")}


def _json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _fail(where: str, rule: str, hint: str) -> NoReturn:
    raise TranscriptError(where, rule, hint)


def _messages_of(payload: object, provider: Provider, source: str) -> list[dict[str, object]]:
    raw = payload
    if isinstance(payload, dict):
        if "messages" not in payload:
            _fail(
                source,
                "is a JSON object without 'messages'; a request body holds its "
                "conversation in 'messages'.",
                'Pass a request body {"messages": [...]} or a bare list of messages.',
            )
        raw, system = payload["messages"], payload.get("system")
        if provider is Provider.ANTHROPIC and not isinstance(system, str | list | None):
            _fail(
                f"{source}: system",
                f"is a JSON {_json_type(system)}; Anthropic's "
                "'system' is a string or a list of text blocks.",
                'Write the system prompt as "system": "...".',
            )
    if not isinstance(raw, list):
        _fail(
            source,
            f"holds a JSON {_json_type(raw)} where a list of messages was expected.",
            'Pass a bare list [{"role": ..., "content": ...}] or a body with "messages".',
        )
    for i, message in enumerate(raw):
        if not isinstance(message, dict):
            _fail(
                f"{source}: messages[{i}]",
                f"is a JSON {_json_type(message)}; a message "
                "is an object with 'role' and 'content'.",
                "Check that the list holds messages, not their contents.",
            )
    return raw


def _role(message: dict[str, object], where: str, provider: Provider) -> str:
    role = message.get("role")
    allowed = _ANTHROPIC_ROLES if provider is Provider.ANTHROPIC else _OPENAI_ROLES
    if isinstance(role, str) and role in allowed:
        return role
    hint = f"Use one of {', '.join(map(repr, allowed))}."
    if provider is Provider.ANTHROPIC and role == "system":
        hint = "Anthropic takes the system prompt as the top-level 'system' of the request."
    elif provider is Provider.ANTHROPIC and role == "tool":
        hint = (
            "Anthropic carries tool results as 'tool_result' blocks of a user message; "
            "an OpenAI Chat Completions transcript must be validated as openai."
        )
    shown = "no 'role'" if role is None else f"role {role!r}"
    who = "an Anthropic" if provider is Provider.ANTHROPIC else "an OpenAI"
    _fail(where, f"has {shown}; {who} message's role is one of {', '.join(allowed)}.", hint)


def _id_field(obj: dict[str, object], key: str, where: str, what: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        _fail(
            where,
            f"is {what} without a string '{key}' (found {_json_type(value)}).",
            f"{what.capitalize()} names its call in '{key}'.",
        )
    return value


def _validate_anthropic(messages: list[dict[str, object]], source: str) -> list[ProviderError]:
    uses: list[list[str]] = []  # per message: its tool_use ids, in order
    results: list[list[tuple[int, str]]] = []  # per message: (block index, tool_use_id)
    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role, content = _role(message, where, Provider.ANTHROPIC), message.get("content")
        uses.append([])
        results.append([])
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            _fail(
                where,
                f"has content of type {_json_type(content)}; Anthropic content is "
                "a string or a list of blocks.",
                'Write "content": "..." or a block list.',
            )
        for k, block in enumerate(content):
            at = f"{where}.content[{k}]"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                _fail(
                    at,
                    "is not a content block (an object with a string 'type').",
                    'Blocks look like {"type": "text", "text": "..."}.',
                )
            if block["type"] not in _CALL_BLOCKS:
                continue
            owner, key = _CALL_BLOCKS[block["type"]]
            if role != owner:
                _fail(
                    at,
                    f"is a {block['type']} block in a {role} message; it belongs in "
                    f"the {owner}'s message.",
                    "Check the message's role.",
                )
            cid = _id_field(block, key, at, f"a {block['type']} block")
            if owner == "assistant":
                uses[i].append(cid)
            else:
                results[i].append((k, cid))
    errors: list[ProviderError] = []
    for i in range(len(messages)):
        previous = set(uses[i - 1]) if i > 0 else set()
        for k, cid in results[i]:
            if cid not in previous:
                path = f"messages.{i}.content.{k}"
                errors.append(error_of(Provider.ANTHROPIC, RESULT_WITHOUT_CALL, path, (cid,)))
        answered = {cid for _, cid in results[i + 1]} if i + 1 < len(messages) else set()
        missing = tuple(dict.fromkeys(cid for cid in uses[i] if cid not in answered))
        if missing:
            errors.append(
                error_of(Provider.ANTHROPIC, CALL_WITHOUT_RESULT, f"messages.{i}", missing)
            )
    return errors


def _openai_calls(message: dict[str, object], role: str, where: str) -> tuple[str, ...]:
    calls = message.get("tool_calls")
    if calls is None:
        return ()
    if not isinstance(calls, list) or (calls and role != "assistant"):
        _fail(
            where,
            f"has 'tool_calls' (a JSON {_json_type(calls)}) in a {role} message; "
            "only an assistant message carries tool_calls, as a list of calls.",
            'Write "tool_calls": [{"id": ..., "type": "function", "function": {...}}].',
        )
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            _fail(
                f"{where}.tool_calls[{j}]",
                f"is a JSON {_json_type(call)}; a tool call is an object with an 'id'.",
                'Write {"id": ..., "type": "function", ...}.',
            )
    return tuple(_id_field(c, "id", f"{where}.tool_calls[{j}]", "a tool call")
                 for j, c in enumerate(calls))  # fmt: skip


def _validate_openai(messages: list[dict[str, object]], source: str) -> list[ProviderError]:
    found: list[tuple[int, ProviderError]] = []
    batch_at, answered = -1, dict[str, bool]()  # the assistant whose tool messages may follow

    def close_batch() -> None:
        missing = tuple(cid for cid, done in answered.items() if not done)
        if missing:
            path = f"messages.{batch_at}"
            found.append((batch_at, error_of(Provider.OPENAI, CALL_WITHOUT_RESULT, path, missing)))

    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role, content = _role(message, where, Provider.OPENAI), message.get("content")
        if not isinstance(content, str | list | None):
            _fail(
                where,
                f"has content of type {_json_type(content)}; OpenAI content is a "
                "string, a list of parts or null.",
                'Write "content": "...".',
            )
        if role == "tool":
            cid = _id_field(message, "tool_call_id", where, "a tool message")
            if cid in answered:
                answered[cid] = True
            else:
                error = error_of(Provider.OPENAI, RESULT_WITHOUT_CALL, f"messages.{i}", (cid,))
                found.append((i, error))
            continue
        close_batch()
        batch_at, answered = i, dict.fromkeys(_openai_calls(message, role, where), False)
    close_batch()
    found.sort(key=lambda pair: pair[0])  # a batch's error is found only when it closes
    return [error for _, error in found]
