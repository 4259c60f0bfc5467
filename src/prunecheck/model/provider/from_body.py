"""A request body read back as our model's messages, and rendered for another provider.

A loop's request arrives as an OpenAI Chat Completions body (the adapters
render what the framework sends in that one format); an agent that talks to
Gemini or to OpenAI's Responses API sends the same history in its own
format.  :func:`messages_of_body` reads a Chat Completions (or Anthropic
Messages) body back as our :class:`~prunecheck.model.context.Message` s, and
:func:`as_provider` renders it in another provider's format with the tool
names the body's calls carry, so that provider's rules (:func:`~.rules.validate`)
judge the history the agent really sent.  Pure: no I/O; O(messages + calls).

>>> body = {"messages": [{"role": "user", "content": "hi"},
...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
...      "function": {"name": "search", "arguments": '{"q": "x"}'}}]}]}
>>> as_provider(body, Provider.GEMINI)["contents"][1]["parts"][0]["functionCall"]["name"]
'search'
"""

from __future__ import annotations

from collections.abc import Mapping

from prunecheck.model.context import Message, Role
from prunecheck.model.provider.request_body import render
from prunecheck.model.provider.vocabulary import Provider

__all__ = ["as_provider", "call_names", "messages_of_body"]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def messages_of_body(
    body: Mapping[str, object], provider: Provider = Provider.OPENAI
) -> list[Message]:
    """The model's messages of an OpenAI Chat Completions or Anthropic Messages
    request body: what was sent, to render in another provider's format.

    >>> body = {"messages": [{"role": "assistant", "content": None, "tool_calls": [
    ...     {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "42"}]}
    >>> [(m.role.value, m.tool_calls, m.call_id) for m in messages_of_body(body, Provider.OPENAI)]
    [('assistant', ('c1',), None), ('tool', (), 'c1')]
    """
    raw = body.get("messages")
    items = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    out: list[Message] = []

    def add(role: Role, text: str, calls: tuple[str, ...] = (), call: str | None = None) -> None:
        out.append(Message(f"m{len(out) + 1}", role, 1, 0, float(len(out)), calls, call, text=text))

    if Provider(provider) is Provider.ANTHROPIC:
        system = body.get("system")
        if system:
            add(Role.SYSTEM, _text_of(system))
        for m in items:
            content = m.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            if m.get("role") == "assistant":
                calls = tuple(str(b.get("id")) for b in blocks
                              if isinstance(b, dict) and b.get("type") == "tool_use")  # fmt: skip
                add(Role.ASSISTANT, _text_of([b for b in blocks if b.get("type") == "text"]), calls)
                continue
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    add(Role.TOOL, _text_of(b.get("content")), call=str(b.get("tool_use_id")))
            texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
            if texts or not blocks:
                add(Role.USER, _text_of(texts))
        return out
    for m in items:
        role = m.get("role")
        text = _text_of(m.get("content"))
        if role in ("system", "developer"):
            add(Role.SYSTEM, text)
        elif role == "tool":
            add(Role.TOOL, text, call=str(m.get("tool_call_id")))
        elif role == "assistant":
            raw_calls = m.get("tool_calls")
            calls = tuple(
                str(c.get("id")) for c in (raw_calls if isinstance(raw_calls, list) else [])
                if isinstance(c, dict)
            )  # fmt: skip
            add(Role.ASSISTANT, text, calls)
        else:
            add(Role.USER, text)
    return out


def call_names(body: Mapping[str, object]) -> dict[str, tuple[str, str]]:
    """Call id -> (tool name, "") of every call of a Chat Completions body: the
    ``tools`` argument of :func:`~.request_body.render`."""
    raw = body.get("messages")
    out: dict[str, tuple[str, str]] = {}
    for m in raw if isinstance(raw, list) else []:
        for c in (m.get("tool_calls") if isinstance(m, dict) else None) or []:
            fn = c.get("function") if isinstance(c, dict) else None
            if isinstance(fn, dict) and isinstance(c.get("id"), str):
                out[c["id"]] = (str(fn.get("name") or "tool"), "")
    return out


def as_provider(body: Mapping[str, object], provider: Provider) -> dict[str, object]:
    """An OpenAI Chat Completions body in ``provider``'s request format: the
    same messages, in order, each call under its tool's name (its arguments
    are not what the rules read, and read ``{"path": ""}``)."""
    return render(messages_of_body(body, Provider.OPENAI), Provider(provider),
                  tools=call_names(body))  # fmt: skip
