"""Format conversion: our model's context as the request body a runtime
would send to a provider, so that a reproduction shows the rejection a user
sees.  Pure: no I/O, no clock; O(number of messages + calls).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from prunecheck.model.context import Message, Role
from prunecheck.model.provider.vocabulary import Provider

__all__ = ["render"]

_ANTHROPIC_MODEL = "claude-sonnet-4-5"
_OPENAI_MODEL = "gpt-4.1"
_DEFAULT_TOOL = "read_file"
_Tools = Mapping[str, tuple[str, str]]  # call id -> (tool name, argument path)


def render(
    messages: Iterable[Message],
    provider: Provider,
    *,
    tools: Mapping[str, tuple[str, str]] | None = None,
    model: str | None = None,
) -> dict[str, object]:
    """The request body a runtime would send for this context.

    Anthropic: system messages become the top-level ``"system"`` (omitted if
    none); an assistant message becomes a text block (if it has text) and one
    ``tool_use`` block per call; a tool message becomes a ``tool_result``
    block of a user message.  Messages of the same role that follow each
    other merge into one message, as Anthropic requires alternation: tool
    results, and a user message after them, join one user message, with the
    ``tool_result`` blocks first.  OpenAI: one message per message, tool
    messages carry ``tool_call_id``, ``function.arguments`` is a JSON string.
    Cleared messages read ``"[cleared]"``; a summary is a user message
    ``"[summary of N messages] ..."``; an empty text reads ``"(<id>)"``.

    Parameters
    ----------
    messages:
        The context, in order.
    provider:
        Whose request format to produce.
    tools:
        Call id -> (tool name, argument path), the input of each call;
        unknown calls read ``read_file`` of ``"<call id>.txt"``.
    model:
        The model named in the body; ``claude-sonnet-4-5`` / ``gpt-4.1`` if None.

    Returns
    -------
    dict
        The request body, JSON-serialisable.

    Examples
    --------
    >>> ctx = [Message("m1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1",)),
    ...        Message("m2", Role.TOOL, 5, 1, 1.0, call_id="c1", text="42"),
    ...        Message("m3", Role.USER, 5, 2, 2.0, text="thanks")]
    >>> render(ctx, Provider.ANTHROPIC, tools={"c1": ("read_file", "a.txt")})["messages"]
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'c1', 'name': 'read_file',
       'input': {'path': 'a.txt'}}]},
     {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'c1', 'content': '42'},
       {'type': 'text', 'text': 'thanks'}]}]
    >>> from prunecheck.model.provider import validate
    >>> validate(render(ctx, Provider.OPENAI), Provider.OPENAI)
    []
    """
    provider = Provider(provider)
    known = tools or {}
    if provider is Provider.ANTHROPIC:
        return _render_anthropic(messages, known, model or _ANTHROPIC_MODEL)
    return _render_openai(messages, known, model or _OPENAI_MODEL)


def _text(message: Message) -> str:
    text = "[cleared]" if message.cleared else (message.text or f"({message.id})")
    if message.summary_of:
        text = f"[summary of {len(message.summary_of)} messages] {text}"
    return text


def _assistant_text(message: Message) -> str | None:
    """The assistant's text, or None for a bare tool call."""
    if message.tool_calls and not message.cleared and not message.text:
        return None
    return _text(message)


def _call(cid: str, tools: _Tools) -> tuple[str, str]:
    return tools.get(cid, (_DEFAULT_TOOL, f"{cid}.txt"))


def _call_id(message: Message) -> str:
    if message.call_id is None:
        raise ValueError(f"tool message {message.id!r} answers no call (call_id is None)")
    return message.call_id


def _render_anthropic(messages: Iterable[Message], tools: _Tools, model: str) -> dict[str, object]:
    system: list[str] = []
    turns: list[tuple[str, list[dict[str, object]]]] = []

    def push(role: str, blocks: list[dict[str, object]]) -> None:
        if not turns or turns[-1][0] != role:
            turns.append((role, blocks))
            return
        merged = turns[-1][1]
        at = sum(1 for b in merged if b["type"] == "tool_result")  # results stay first
        merged[at:at] = [b for b in blocks if b["type"] == "tool_result"]
        merged.extend(b for b in blocks if b["type"] != "tool_result")

    for m in messages:
        if m.summary_of or m.role == Role.USER:
            push("user", [{"type": "text", "text": _text(m)}])
        elif m.role == Role.SYSTEM:
            system.append(_text(m))
        elif m.role == Role.TOOL:
            push("user", [{"type": "tool_result", "tool_use_id": _call_id(m), "content": _text(m)}])
        else:
            text = _assistant_text(m)
            blocks: list[dict[str, object]] = [{"type": "text", "text": text}] if text else []
            for cid in m.tool_calls:
                name, path = _call(cid, tools)
                args = {"path": path}
                blocks.append({"type": "tool_use", "id": cid, "name": name, "input": args})
            push("assistant", blocks)
    body: dict[str, object] = {"model": model, "max_tokens": 1024}
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = [
        {"role": role, "content": b[0]["text"] if len(b) == 1 and b[0]["type"] == "text" else b}
        for role, b in turns
    ]
    return body


def _render_openai(messages: Iterable[Message], tools: _Tools, model: str) -> dict[str, object]:
    out: list[dict[str, object]] = []
    for m in messages:
        if m.summary_of:
            out.append({"role": "user", "content": _text(m)})
        elif m.role == Role.TOOL:
            out.append({"role": "tool", "tool_call_id": _call_id(m), "content": _text(m)})
        elif m.role == Role.ASSISTANT and m.tool_calls:
            calls = []
            for cid in m.tool_calls:
                name, path = _call(cid, tools)
                function = {"name": name, "arguments": json.dumps({"path": path})}
                calls.append({"id": cid, "type": "function", "function": function})
            out.append({"role": "assistant", "content": _assistant_text(m), "tool_calls": calls})
        else:
            out.append({"role": str(m.role), "content": _text(m)})
    return {"model": model, "messages": out}
