"""Readers: what a message object says about structure, per format.

A reader maps one of the runtime's message objects to an :class:`Item`:
its role, the calls it issues, the calls it answers, the resources its
calls name and its text.  Formats: OpenAI Chat Completions dicts, Anthropic
Messages dicts, LangChain message objects, AutoGen ``LLMMessage`` objects.
The framework readers touch only attributes, so this module imports no
framework.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["READERS", "Item", "Reader", "count_words", "reader_for"]


@dataclass(frozen=True, slots=True)
class Item:
    role: str
    calls: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    resources: frozenset[str] = frozenset()
    text: str = ""


Reader = Callable[[Any], Item]


def count_words(item: Item) -> int:
    """The default token count: whitespace-separated words of the text, at
    least 1 (prunecheck's stimuli are sized in words)."""
    return max(1, len(item.text.split()))


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
            else:
                inner = getattr(part, "content", None)
                if isinstance(inner, str):
                    parts.append(inner)
        return " ".join(parts)
    return ""


def read_openai(message: Mapping[str, Any]) -> Item:
    calls = message.get("tool_calls") or ()
    ids = tuple(str(c["id"]) for c in calls)
    resources = (
        frozenset().union(*(_strings(c.get("function", {}).get("arguments")) for c in calls))
        if calls
        else frozenset()
    )
    answers = (str(message["tool_call_id"]),) if message.get("role") == "tool" else ()
    return Item(
        str(message.get("role", "user")), ids, answers, resources, _text(message.get("content"))
    )


def read_anthropic(message: Mapping[str, Any]) -> Item:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    uses = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
    results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    resources = (
        frozenset().union(*(_strings(b.get("input")) for b in uses)) if uses else frozenset()
    )
    role = str(message.get("role", "user"))
    return Item(
        "tool" if results and role == "user" else role,
        tuple(str(b["id"]) for b in uses),
        tuple(str(b["tool_use_id"]) for b in results),
        resources,
        _text(content),
    )


_LANGCHAIN_ROLES = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def read_langchain(message: Any) -> Item:
    role = _LANGCHAIN_ROLES.get(str(getattr(message, "type", "human")), "user")
    calls = getattr(message, "tool_calls", None) or ()
    ids = tuple(str(c["id"]) for c in calls)
    resources = (
        frozenset().union(*(_strings(c.get("args")) for c in calls)) if calls else frozenset()
    )
    answers = (str(message.tool_call_id),) if role == "tool" else ()
    return Item(role, ids, answers, resources, _text(getattr(message, "content", "")))


def read_autogen(message: Any) -> Item:
    kind = type(message).__name__
    content: Any = getattr(message, "content", "")
    if kind == "SystemMessage":
        return Item("system", text=_text(content))
    if kind == "FunctionExecutionResultMessage":
        return Item(
            "tool",
            answers=tuple(str(r.call_id) for r in content),
            text=" ".join(str(r.content) for r in content),
        )
    if kind == "AssistantMessage" and isinstance(content, list):
        return Item(
            "assistant",
            tuple(str(c.id) for c in content),
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
