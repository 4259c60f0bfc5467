"""Readers: what a message object says about structure, per format.

A reader maps one of the runtime's message objects to an :class:`Item`:
its role, the calls it issues, the calls it answers, the resources its
calls name and its text (content, and the calls' names and arguments).
Formats: OpenAI Chat Completions dicts, Anthropic Messages dicts, LangChain
message objects, AutoGen ``LLMMessage`` objects.  The framework readers
touch only attributes, so this module imports no framework.

A message a reader cannot read structurally — ``None``, a tool message
without its call id, a call without an id, an id that is not a string, or a
message in another format than the one named (an Anthropic ``tool_use``
block in an OpenAI list, an OpenAI ``tool_calls`` in an Anthropic list, a
dict where framework objects belong) — is refused with
:class:`~.errors.GuardError` naming the rule: guessing would let the guard
cut a unit it cannot see.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import GuardError

__all__ = ["READERS", "Item", "Reader", "count_tokens", "count_words", "reader_for"]

#: Characters per token of the default counter (as ``prunecheck check`` sizes messages).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Item:
    """What one message says about structure."""

    role: str
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    resources: frozenset[str] = frozenset()
    text: str = ""


Reader = Callable[[Any], Item]


def count_tokens(item: Item) -> int:
    """The default token count: 4 characters per token of the message's text
    (content, call names and arguments), rounded up, at least 1 — the size
    ``prunecheck check`` gives messages."""
    return max(1, -(-len(item.text) // CHARS_PER_TOKEN))


def count_words(item: Item) -> int:
    """Whitespace-separated words of the text, at least 1 (the default before
    0.3; far below a real tokenizer's count on code or long tokens)."""
    return max(1, len(item.text.split()))


def _bad(format: str, rule: str, hint: str = "") -> GuardError:
    text = f"a message of format {format!r} {rule}"
    return GuardError(f"{text} Hint: {hint}" if hint else text)


def _id(value: object, format: str, what: str) -> str:
    if isinstance(value, str) and value:
        return str(value)
    raise _bad(format, f"has {what} {value!r}, which is not a non-empty string.")


def _strings(args: object) -> frozenset[str]:
    if isinstance(args, str):
        text = args
        try:
            args = json.loads(text)
        except ValueError:
            return frozenset({text}) if text else frozenset()
    if isinstance(args, Mapping):
        return frozenset(v for v in args.values() if isinstance(v, str) and v)
    return frozenset()


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                for key in ("text", "content"):
                    if isinstance(part.get(key), str):
                        parts.append(part[key])
                        break
                else:
                    if isinstance(part.get("content"), list):
                        parts.append(_text(part["content"]))
                    elif part.get("type") == "tool_use":
                        parts.append(f"{part.get('name', '')} {json.dumps(part.get('input'))}")
            else:
                inner = getattr(part, "content", None)
                if isinstance(inner, str):
                    parts.append(inner)
        return " ".join(parts)
    return ""


def _mapping(message: object, format: str) -> Mapping[str, Any]:
    if isinstance(message, Mapping):
        return message
    found = "None" if message is None else f"a {type(message).__name__}"
    raise _bad(
        format,
        f"must be a dict, got {found}.",
        "a list of framework objects needs format='langchain' or 'autogen'"
        if message is not None
        else "drop None entries from the list.",
    )


def read_openai(message: Mapping[str, Any]) -> Item:
    m = _mapping(message, "openai")
    role = m.get("role", "user")
    content = m.get("content")
    if isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result") for b in content
    ):
        raise _bad(
            "openai",
            "holds an Anthropic tool_use / tool_result block: this list is in Anthropic's format.",
            "give format='anthropic'.",
        )
    calls = m.get("tool_calls") or ()
    if not isinstance(calls, list | tuple):
        raise _bad("openai", f"has tool_calls {calls!r}, which is not a list.")
    ids = []
    texts = [_text(content)]
    resources: set[str] = set()
    for call in calls:
        if not isinstance(call, Mapping):
            raise _bad("openai", f"has a tool call {call!r}, which is not a dict.")
        ids.append(_id(call.get("id"), "openai", "a tool call id"))
        function = call.get("function") or {}
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        resources |= _strings(arguments)
        if isinstance(function, Mapping):
            texts.append(f"{function.get('name', '')} {arguments or ''}")
    answers: tuple[str, ...] = ()
    if role == "tool":
        if "tool_call_id" not in m:
            raise _bad(
                "openai",
                "has role 'tool' but no tool_call_id: a tool message answers one call.",
                "set tool_call_id to the id of the call it answers.",
            )
        answers = (_id(m["tool_call_id"], "openai", "tool_call_id"),)
    return Item(
        str(role), tuple(ids), answers, frozenset(resources), " ".join(t for t in texts if t)
    )


def read_anthropic(message: Mapping[str, Any]) -> Item:
    m = _mapping(message, "anthropic")
    if m.get("tool_calls") or m.get("role") == "tool" or "tool_call_id" in m:
        raise _bad(
            "anthropic",
            "has OpenAI's tool_calls / role 'tool' / tool_call_id: this list is in "
            "OpenAI's format.",
            "give format='openai'.",
        )
    content = m.get("content")
    blocks = content if isinstance(content, list) else []
    uses, results = [], []
    for b in blocks:
        if isinstance(b, Mapping) and b.get("type") == "tool_use":
            uses.append(_id(b.get("id"), "anthropic", "a tool_use id"))
        elif isinstance(b, Mapping) and b.get("type") == "tool_result":
            results.append(_id(b.get("tool_use_id"), "anthropic", "a tool_result tool_use_id"))
    resources = frozenset().union(
        *(
            _strings(b.get("input"))
            for b in blocks
            if isinstance(b, Mapping) and b.get("type") == "tool_use"
        )
    )
    role = str(m.get("role", "user"))
    return Item(
        "tool" if results and role == "user" else role,
        tuple(uses),
        tuple(results),
        resources,
        _text(content),
    )


_LANGCHAIN_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def read_langchain(message: Any) -> Item:
    if message is None or isinstance(message, Mapping):
        found = "None" if message is None else "a dict"
        raise _bad("langchain", f"must be a LangChain message object, got {found}.")
    role = _LANGCHAIN_ROLES.get(str(getattr(message, "type", "human")), "user")
    calls = getattr(message, "tool_calls", None) or ()
    ids = tuple(_id(c.get("id"), "langchain", "a tool call id") for c in calls)
    resources = (
        frozenset().union(*(_strings(c.get("args")) for c in calls)) if calls else frozenset()
    )
    answers: tuple[str, ...] = ()
    if role == "tool":
        answers = (_id(getattr(message, "tool_call_id", None), "langchain", "tool_call_id"),)
    text = _text(getattr(message, "content", ""))
    extra = " ".join(f"{c.get('name', '')} {json.dumps(c.get('args'))}" for c in calls)
    return Item(role, ids, answers, resources, f"{text} {extra}" if extra else text)


def read_autogen(message: Any) -> Item:
    if message is None or isinstance(message, Mapping):
        found = "None" if message is None else "a dict"
        raise _bad("autogen", f"must be an AutoGen LLMMessage, got {found}.")
    kind = type(message).__name__
    content: Any = getattr(message, "content", "")
    if kind == "SystemMessage":
        return Item("system", text=_text(content))
    if kind == "FunctionExecutionResultMessage":
        return Item(
            "tool",
            answers=tuple(_id(r.call_id, "autogen", "a result call_id") for r in content),
            text=" ".join(str(r.content) for r in content),
        )
    if kind == "AssistantMessage" and isinstance(content, list):
        return Item(
            "assistant",
            tuple(_id(c.id, "autogen", "a function call id") for c in content),
            resources=frozenset().union(*(_strings(c.arguments) for c in content)),
            text=" ".join(f"{c.name} {c.arguments}" for c in content),
        )
    return Item("assistant" if kind == "AssistantMessage" else "user", text=_text(content))


READERS: dict[str, Reader] = {
    "openai": read_openai,
    "anthropic": read_anthropic,
    "langchain": read_langchain,
    "autogen": read_autogen,
}


def reader_for(format: str) -> Reader:
    try:
        return READERS[format]
    except KeyError:
        raise ValueError(f"format {format!r} is not one of {', '.join(READERS)}") from None
