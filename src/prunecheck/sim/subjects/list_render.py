"""Rendering a context as a provider message list, with provenance: what a
list function ``trim(messages)`` receives, and which of our messages each
dict (OpenAI) or content block (Anthropic) carries.

See :mod:`.lists` for how kept items map back to message ids; every
rendered message carries text of its declared size, 4 characters per token
(:mod:`.sized_content`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from prunecheck.model.actions import PLACEHOLDER_TOKENS
from prunecheck.model.context import Message, Role
from prunecheck.model.provider import Provider, render
from prunecheck.sim.subjects.sized_content import CHARS_PER_TOKEN, sized_text

__all__ = ["RenderedList", "TokenCounter", "message_blocks", "render_list"]

_Block = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RenderedList:
    """A context rendered as a provider message list, with provenance.

    Attributes
    ----------
    messages: the provider message dicts, as the function receives them.
    owners: per provider message, per part (the whole message for OpenAI,
        each content block for Anthropic), the id of the message it came from.
    keys: the ``(message index, part index)`` pairs that carry each
        message's identity (see the module notes).
    tokens: our model's tokens per part (a message's tokens sit on its first
        key part).
    hidden: ids of messages not passed to the function (Anthropic's system).
    """

    messages: list[dict[str, Any]]
    owners: tuple[tuple[str, ...], ...]
    keys: dict[str, tuple[tuple[int, int], ...]]
    tokens: dict[tuple[int, int], int]
    format: Provider = Provider.OPENAI
    hidden: frozenset[str] = frozenset()


def render_list(messages: Iterable[Message], fmt: Provider | str) -> RenderedList:
    """Render messages as the list a ``fmt`` list function receives.

    The OpenAI list equals ``render(messages, openai)["messages"]`` and the
    Anthropic list equals ``render(messages, anthropic)["messages"]``.  O(n).
    """
    fmt = Provider(fmt)
    given = list(messages)
    tools = _tools(given)
    ordered = [
        _sized(m, tuple(tools.get(c, ("read_file", f"{c}.txt")) for c in m.tool_calls))
        for m in given
    ]
    if fmt is Provider.OPENAI:
        body = render(ordered, Provider.OPENAI, tools=tools)["messages"]
        assert isinstance(body, list)
        keys: dict[str, tuple[tuple[int, int], ...]] = {
            m.id: ((i, 0),) for i, m in enumerate(ordered)
        }
        tokens = {(i, 0): m.tokens for i, m in enumerate(ordered)}
        return RenderedList(body, tuple((m.id,) for m in ordered), keys, tokens, fmt)
    return _render_anthropic(ordered, tools)


@lru_cache(maxsize=1 << 16)
def _sized(m: Message, calls: tuple[tuple[str, str], ...]) -> Message:
    """``m`` with text of its declared size (see :mod:`.sized_content`):
    the calls' names and JSON arguments (``calls``: name and path per call),
    and a summary's prefix, count towards it.  A cleared message keeps its
    placeholder (and, if only partly cleared, what is left of its size).
    Cached per message record: a budget check re-renders only what changed."""
    head = "[cleared]" if m.cleared else m.text
    chars = 0
    for name, path in calls:
        chars += len(name) + len(json.dumps({"path": path}))
    if m.summary_of:
        chars += len(f"[summary of {len(m.summary_of)} messages] ")
    tokens = max(0, m.tokens - chars // CHARS_PER_TOKEN)
    if m.cleared and m.tokens <= PLACEHOLDER_TOKENS:
        tokens = 0
    text = sized_text(m.id, tokens, head)
    return replace(m, text=text, cleared=False) if text != m.text or m.cleared else m


_CALL_TEXT = re.compile(r"^\s*([\w.-]+)\((.*)\)\s*$")


def _tools(ordered: list[Message]) -> dict[str, tuple[str, str]]:
    """Tool name and path per call, read back from a batch message's text
    (``read_file(a.txt); grep(src)``, as the runtime writes it)."""
    tools: dict[str, tuple[str, str]] = {}
    for m in ordered:
        if not m.tool_calls:
            continue
        parts = [_CALL_TEXT.match(p) for p in m.text.split(";")]
        if len(parts) == len(m.tool_calls) and all(parts):
            for cid, match in zip(m.tool_calls, parts, strict=True):
                assert match is not None
                tools[cid] = (match.group(1), match.group(2))
    return tools


def _render_anthropic(ordered: list[Message], tools: dict[str, tuple[str, str]]) -> RenderedList:
    turns: list[tuple[str, list[tuple[_Block, str, bool]]]] = []
    hidden: list[str] = []
    for m in ordered:
        if m.role is Role.SYSTEM and not m.summary_of:
            hidden.append(m.id)
            continue
        body = render([m], Provider.ANTHROPIC, tools=tools)["messages"]
        assert isinstance(body, list) and len(body) == 1
        single: dict[str, Any] = body[0]
        content = single["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        has_use = any(b["type"] == "tool_use" for b in blocks)
        parts = [(b, m.id, b["type"] == "tool_use" or not has_use) for b in blocks]
        role = single["role"]
        if not turns or turns[-1][0] != role:
            turns.append((role, parts))
            continue
        merged = turns[-1][1]  # same rule as provider.render: tool results first
        at = sum(1 for p in merged if p[0]["type"] == "tool_result")
        merged[at:at] = [p for p in parts if p[0]["type"] == "tool_result"]
        merged.extend(p for p in parts if p[0]["type"] != "tool_result")
    out: list[dict[str, Any]] = []
    owners: list[tuple[str, ...]] = []
    keys: dict[str, list[tuple[int, int]]] = {}
    tokens: dict[tuple[int, int], int] = {}
    size = {m.id: m.tokens for m in ordered}
    for i, (role, parts) in enumerate(turns):
        blocks = [p[0] for p in parts]
        one_text = len(blocks) == 1 and blocks[0]["type"] == "text"
        out.append({"role": role, "content": blocks[0]["text"] if one_text else blocks})
        owners.append(tuple(p[1] for p in parts))
        for k, (_, owner, is_key) in enumerate(parts):
            if is_key:
                if owner not in keys:
                    tokens[(i, k)] = size[owner]
                keys.setdefault(owner, []).append((i, k))
    return RenderedList(
        out,
        tuple(owners),
        {k: tuple(v) for k, v in keys.items()},
        tokens,
        Provider.ANTHROPIC,
        frozenset(hidden),
    )


def message_blocks(message: dict[str, Any]) -> list[Any]:
    """An Anthropic message's content blocks (a string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


class TokenCounter:
    """Our model's tokens for a message dict, a block, or a list of them."""

    __slots__ = ("_by_id", "_parts")

    def __init__(self, rendered: RenderedList) -> None:
        self._by_id: dict[int, int] = {}
        self._parts: list[tuple[object, int]] = []
        for i, message in enumerate(rendered.messages):
            total = 0
            if rendered.format is Provider.ANTHROPIC:
                for k, block in enumerate(message_blocks(message)):
                    size = rendered.tokens.get((i, k), 0)
                    total += size
                    self._parts.append((block, size))
                    self._by_id[id(block)] = size
            else:
                total = rendered.tokens.get((i, 0), 0)
            self._by_id[id(message)] = total
            self._parts.append((message, total))

    def __call__(self, item: object) -> int:
        if isinstance(item, list | tuple):
            return sum(self(x) for x in item)
        found = self._by_id.get(id(item))
        if found is not None:
            return found
        for part, size in self._parts:
            if part == item:
                return size
        if isinstance(item, dict) and isinstance(item.get("content"), list):
            return sum(self(b) for b in item["content"])
        return max(1, len(repr(item)) // 4)
