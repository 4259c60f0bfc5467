"""Request and response bodies as providers take them, read into messages.

Three request shapes: OpenAI Chat Completions (``messages`` with ``tool``
messages and ``tool_calls``), OpenAI Responses (``input`` items:
``message``, ``function_call``, ``function_call_output``), Anthropic
Messages (``system`` and ``messages`` with ``tool_use`` / ``tool_result``
blocks).  Each reads into :class:`~.records.LoggedMessage` records, with a
note of what the body cannot tell: ``previous_response_id`` and
``conversation`` (the history lives on OpenAI's servers), encrypted
reasoning and compaction items, Anthropic's server-side
``context_management``.

>>> fmt, provider, messages, blind = read_body(
...     {"messages": [{"role": "user", "content": "hi"},
...                   {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
...                    "function": {"name": "read", "arguments": "{}"}}]},
...                   {"role": "tool", "tool_call_id": "call_1", "content": "42"}]}, "req")
>>> fmt.value, provider.value, [m.role.value for m in messages], messages[2].answers
('openai-chat', 'openai', ['user', 'assistant', 'tool'], 'call_1')
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from prunecheck.model.context import Role
from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Provider,
    first_rule,
)
from prunecheck.sim.ingest.records import LogFormat, LoggedCall, LoggedMessage

__all__ = [
    "RESPONSES_TEXT",
    "body_format",
    "error_text",
    "provider_message",
    "read_body",
    "read_reply",
]

#: The OpenAI Responses API's words for the two tool pairing errors (from
#: prunecheck.model.provider's rules, with ``{id}`` for the call id).
RESPONSES_TEXT = {
    kind: first_rule(Provider.OPENAI_RESPONSES, kind).template
    for kind in (RESULT_WITHOUT_CALL, CALL_WITHOUT_RESULT)
}

_PROVIDER = {
    LogFormat.OPENAI_CHAT: Provider.OPENAI,
    LogFormat.OPENAI_RESPONSES: Provider.OPENAI_RESPONSES,
    LogFormat.ANTHROPIC: Provider.ANTHROPIC,
}
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking"}
_ROLES = {"system": Role.SYSTEM, "developer": Role.SYSTEM, "user": Role.USER,
          "assistant": Role.ASSISTANT}  # fmt: skip


def text_of(content: object) -> str:
    """Plain text of a content value: a string, or text parts and blocks joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                for key in ("text", "content", "output", "refusal"):
                    value = part.get(key)
                    if isinstance(value, str):
                        parts.append(value)
                        break
                    if isinstance(value, list):
                        parts.append(text_of(value))
                        break
        return "\n".join(parts)
    return json.dumps(content, sort_keys=True, ensure_ascii=False)


def body_format(body: Mapping[str, Any]) -> LogFormat | None:
    """Which provider shape a request body has, or None if it cannot tell
    (a ``messages`` list of plain strings fits both)."""
    if "input" in body and "messages" not in body:
        return LogFormat.OPENAI_RESPONSES
    if "system" in body or "context_management" in body:
        return LogFormat.ANTHROPIC
    messages = body.get("messages")
    for m in messages if isinstance(messages, list) else []:
        if not isinstance(m, Mapping):
            continue
        if m.get("role") in ("tool", "system", "developer", "function") or "tool_calls" in m:
            return LogFormat.OPENAI_CHAT
        content = m.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") in _ANTHROPIC_BLOCKS:
                return LogFormat.ANTHROPIC
            if isinstance(block, Mapping) and block.get("type") in ("image_url", "input_audio"):
                return LogFormat.OPENAI_CHAT
    return None


def read_body(
    body: Mapping[str, Any], where: str, hint: LogFormat | None = None
) -> tuple[LogFormat, Provider, tuple[LoggedMessage, ...], tuple[str, ...]]:
    """The messages of one request body, its format, provider and blind spots.

    Raises
    ------
    TranscriptError
        naming ``where`` if the body is neither shape, or malformed.
    """
    fmt = body_format(body) or hint or LogFormat.OPENAI_CHAT
    if fmt is LogFormat.OPENAI_RESPONSES:
        messages, blind = _responses(body, where)
    else:
        raw = body.get("messages")
        if not isinstance(raw, list):
            raise TranscriptError(
                where,
                "is a JSON object without a 'messages' list or an 'input' list; it is not "
                "a request body of OpenAI Chat Completions, OpenAI Responses or Anthropic.",
                "log the body your runtime sends to the model, one per line.",
            )
        if fmt is LogFormat.ANTHROPIC:
            messages, blind = _anthropic(body, raw, where)
        else:
            messages, blind = _chat(raw, where), ()
    return fmt, _PROVIDER[fmt], messages, blind


def _message(m: object, where: str) -> Mapping[str, Any]:
    if not isinstance(m, Mapping):
        raise TranscriptError(
            where,
            f"is a JSON {type(m).__name__}; a message is an object with 'role' and 'content'.",
            "check that the log holds request bodies, not their contents.",
        )
    return m


def _call(raw: object, where: str) -> LoggedCall:
    call = _message(raw, where)
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    cid = call.get("id", call.get("call_id"))
    if not isinstance(cid, str):
        raise TranscriptError(where, "is a tool call without a string 'id'.")
    arguments = function.get("arguments", call.get("arguments", call.get("input", "")))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    name = function.get("name", call.get("name", ""))
    return LoggedCall(cid, name if isinstance(name, str) else "", arguments)


def _chat(raw: list[object], where: str) -> tuple[LoggedMessage, ...]:
    out = []
    for i, item in enumerate(raw):
        at = f"{where}: messages[{i}]"
        m = _message(item, at)
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str):
                raise TranscriptError(at, "is a tool message without a string 'tool_call_id'.")
            out.append(LoggedMessage(Role.TOOL, text_of(m.get("content")), answers=cid))
            continue
        if role not in _ROLES:
            raise TranscriptError(
                at,
                f"has role {role!r}; an OpenAI Chat Completions message's role is system, "
                "developer, user, assistant or tool.",
                "is this an Anthropic body? then its system prompt is the top-level 'system'.",
            )
        calls = m.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TranscriptError(at, "has 'tool_calls' that is not a list.")
        logged = tuple(_call(c, f"{at}.tool_calls[{j}]") for j, c in enumerate(calls))
        out.append(LoggedMessage(_ROLES[role], text_of(m.get("content")), logged))
    return tuple(out)


def _anthropic(
    body: Mapping[str, Any], raw: list[object], where: str
) -> tuple[tuple[LoggedMessage, ...], tuple[str, ...]]:
    out: list[LoggedMessage] = []
    blind: list[str] = []
    system = body.get("system")
    if system:
        out.append(LoggedMessage(Role.SYSTEM, text_of(system)))
    if body.get("context_management"):
        blind.append(
            "Anthropic edits this request's context on its servers (context_management): "
            "the model saw less than the logged body, and the log does not say what"
        )
    for i, item in enumerate(raw):
        at = f"{where}: messages[{i}]"
        m = _message(item, at)
        role = m.get("role")
        if role not in ("user", "assistant"):
            raise TranscriptError(
                at,
                f"has role {role!r}; an Anthropic message's role is user or assistant.",
                "an OpenAI Chat Completions body has 'tool' and 'system' roles: is the "
                "log in the other provider's format?",
            )
        content = m.get("content")
        if isinstance(content, str) or content is None:
            out.append(LoggedMessage(_ROLES[role], content or ""))
            continue
        if not isinstance(content, list):
            raise TranscriptError(at, "has content that is neither a string nor a block list.")
        texts, calls = [], []
        for k, block in enumerate(content):
            b = _message(block, f"{at}.content[{k}]")
            kind = b.get("type")
            if kind == "tool_result":
                cid = b.get("tool_use_id")
                if not isinstance(cid, str):
                    raise TranscriptError(f"{at}.content[{k}]", "has no string 'tool_use_id'.")
                out.append(LoggedMessage(Role.TOOL, text_of(b.get("content")), answers=cid))
            elif kind == "tool_use":
                calls.append(_call(b, f"{at}.content[{k}]"))
            elif kind == "redacted_thinking" or (kind == "thinking" and "signature" in b):
                blind.append("thinking blocks are signed or redacted: their content is not read")
            elif kind == "compaction":  # Anthropic's server compaction, round-tripped
                blind.append(
                    f"messages[{i}] holds a compaction block: Anthropic ignores the {i} "
                    "message(s) before it (the model saw the block's summary instead), so "
                    "what the log shows before it is not what the model saw"
                )
                texts.append(text_of(b.get("content")) or "(compaction block)")
            else:
                texts.append(text_of([b]))
        if texts or calls or role == "assistant":
            out.append(LoggedMessage(_ROLES[role], "\n".join(t for t in texts if t), tuple(calls)))
    return tuple(out), tuple(dict.fromkeys(blind))


def _responses(
    body: Mapping[str, Any], where: str
) -> tuple[tuple[LoggedMessage, ...], tuple[str, ...]]:
    out: list[LoggedMessage] = []
    blind: list[str] = []
    if body.get("previous_response_id"):
        blind.append(
            f"it continues response {body['previous_response_id']} (previous_response_id): "
            "the earlier history lives on OpenAI's servers, and the log shows only what "
            "this request added"
        )
    if body.get("conversation"):
        blind.append(
            "it names a server-side conversation: the history lives on OpenAI's servers, "
            "and the log shows only what this request added"
        )
    if isinstance(body.get("instructions"), str):
        out.append(LoggedMessage(Role.SYSTEM, body["instructions"]))
    items = body.get("input")
    if isinstance(items, str):
        return (*out, LoggedMessage(Role.USER, items)), tuple(blind)
    if not isinstance(items, list):
        raise TranscriptError(where, "has an 'input' that is neither a string nor a list of items.")
    for i, raw in enumerate(items):
        at = f"{where}: input[{i}]"
        item = _message(raw, at)
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in _ROLES:
                raise TranscriptError(at, f"is a message item with role {role!r}.")
            out.append(LoggedMessage(_ROLES[role], text_of(item.get("content"))))
        elif kind == "function_call":
            call = _call({**item, "id": item.get("call_id")}, at)
            last = out[-1] if out else None
            if last is not None and last.role is Role.ASSISTANT:
                out[-1] = LoggedMessage(Role.ASSISTANT, last.text, (*last.calls, call))
            else:
                out.append(LoggedMessage(Role.ASSISTANT, "", (call,)))
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if not isinstance(cid, str):
                raise TranscriptError(at, "is a function_call_output without a string 'call_id'.")
            out.append(LoggedMessage(Role.TOOL, text_of(item.get("output")), answers=cid))
        elif kind == "reasoning":
            if item.get("encrypted_content"):
                blind.append("reasoning items are encrypted: their content is not read")
        elif item.get("encrypted_content"):
            blind.append(
                f"input[{i}] is an encrypted {kind} item: what it replaced was compacted on "
                "OpenAI's servers and cannot be read from the log"
            )
        elif kind == "item_reference":
            blind.append(f"input[{i}] refers to a stored item by id: its content is not logged")
        else:
            blind.append(f"input[{i}] is a {kind} item, which prunecheck does not model")
    return tuple(out), tuple(dict.fromkeys(blind))


def read_reply(response: object, fmt: LogFormat) -> tuple[LoggedMessage, ...] | None:
    """The assistant message(s) of a logged response body, or None if it is
    not a successful response of that format."""
    if not isinstance(response, Mapping):
        return None
    if fmt is LogFormat.OPENAI_CHAT:
        choices = response.get("choices")
        if not isinstance(choices, list) or not choices:
            return None
        message = choices[0].get("message") if isinstance(choices[0], Mapping) else None
        if not isinstance(message, Mapping):
            return None
        return _chat([{**message, "role": "assistant"}], "response")
    if fmt is LogFormat.OPENAI_RESPONSES:
        output = response.get("output")
        if not isinstance(output, list):
            return None
        items = [o for o in output if isinstance(o, Mapping)]
        return _responses({"input": items}, "response")[0]
    content = response.get("content")
    if response.get("type") == "error" or not isinstance(content, list):
        return None
    return _anthropic({}, [{"role": "assistant", "content": content}], "response")[0]


def error_text(response: object) -> str | None:
    """The provider's error message in a logged error body, or None: OpenAI's,
    Anthropic's and Gemini's ``{"error": {"message": ...}}``, Mistral's and
    Bedrock's ``{"message": ...}`` (Mistral's with ``"object": "error"``),
    botocore's ``{"Error": {"Message": ...}}``.

    >>> error_text({"object": "error", "message": "Not the same number of function calls "
    ...             "and responses", "type": "invalid_request_error"})
    'Not the same number of function calls and responses'
    >>> error_text({"choices": [], "message": "not an error"}) is None
    True
    """
    if isinstance(response, str):
        return response or None
    if not isinstance(response, Mapping):
        return None
    error = response.get("error")
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    boto = response.get("Error")
    if isinstance(boto, Mapping) and isinstance(boto.get("Message"), str):
        return str(boto["Message"])
    message = response.get("message")
    if isinstance(message, str) and ("choices" not in response and "content" not in response):
        return message
    return None


_SDK_ERROR = re.compile(r"Error code: (\d{3}) - (.*)")
_QUOTED = re.compile(r"""['"]message['"]: (['"])(.*?)\1[,}]""")


def provider_message(text: str) -> tuple[str, int | None]:
    """The provider's own words in an SDK's error string (``Error code: 400 -
    {...}`` as the openai and anthropic clients print it), and the status.

    >>> provider_message("Error code: 400 - {'error': {'message': 'bad', 'type': 'x'}}")
    ('bad', 400)
    >>> provider_message('BadRequestError("Error code: 400 - Invalid parameter: x.")')
    ('Invalid parameter: x.', 400)
    """
    first = text.strip().splitlines()[0] if text.strip() else ""
    found = _SDK_ERROR.search(first)
    status = int(found.group(1)) if found else None
    rest = found.group(2) if found else first
    if rest.startswith("{"):
        for end in range(len(rest), 0, -1):
            if rest[end - 1] != "}":
                continue
            try:
                value = ast.literal_eval(rest[:end])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            message = error_text(value)
            if message:
                return message, status
            break
    quoted = _QUOTED.search(rest)
    if quoted:
        return quoted.group(2), status
    for tail in ('")', "')"):
        if rest.endswith(tail):
            rest = rest[: -len(tail)]
    return rest, status
