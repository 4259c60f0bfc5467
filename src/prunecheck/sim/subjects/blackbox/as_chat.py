"""A request of any API the fake endpoint speaks, as the judge reads it.

The loop judge (:mod:`prunecheck.sim.subjects.loops.judge`) and the ledger
read OpenAI Chat Completions bodies; a black-box agent may speak OpenAI
Responses or Anthropic Messages.  :func:`as_chat` renders its request in
Chat Completions words, keeping what the judge needs: the order of the
messages, each call (id, name, arguments) in the assistant turn that issued
it, each result (call id, text) as a ``tool`` message.  Reasoning items,
images and cache hints are dropped; a block of unknown type is kept as text.

>>> use = {"type": "tool_use", "id": "c1", "name": "f", "input": {}}
>>> result = {"type": "tool_result", "tool_use_id": "c1", "content": "x"}
>>> chat = as_chat(Api.MESSAGES, {"system": "s", "messages": [
...     {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]})
>>> [m["role"] for m in chat["messages"]], chat["messages"][1]["tool_calls"][0]["id"]
(['system', 'assistant', 'tool'], 'c1')
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .exchange import Api

__all__ = ["as_chat"]


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(p.get("text", p.get("content", ""))) if isinstance(p, dict) else str(p)
                       for p in content)  # fmt: skip
    return "" if content is None else json.dumps(content)


def _call(cid: str, name: str, arguments: object) -> dict[str, object]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


def _messages_api(body: Mapping[str, object]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": _text(system)})
    for m in body.get("messages") or []:  # type: ignore[attr-defined]
        if not isinstance(m, dict):
            continue
        role, content = m.get("role"), m.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        text = ""
        calls: list[dict[str, object]] = []
        results: list[dict[str, object]] = []
        for block in content if isinstance(content, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_use":
                calls.append(
                    _call(str(block.get("id")), str(block.get("name")), block.get("input", {}))
                )
            elif kind == "tool_result":
                results.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id")),
                                "content": _text(block.get("content"))})  # fmt: skip
            elif kind == "text":
                text += str(block.get("text", ""))
        out += results
        if role == "assistant":
            message: dict[str, object] = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = calls
            out.append(message)
        elif text or not results:
            out.append({"role": role, "content": text})
    return out


def _responses_api(body: Mapping[str, object]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    if body.get("instructions"):
        out.append({"role": "system", "content": _text(body["instructions"])})
    items = body.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" or (kind is None and "role" in item):
            out.append({"role": item.get("role"), "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = _call(str(item.get("call_id")), str(item.get("name")), item.get("arguments", ""))
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant":
                calls = last.setdefault("tool_calls", [])
                assert isinstance(calls, list)
                calls.append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": str(item.get("call_id")),
                        "content": _text(item.get("output"))})  # fmt: skip
    return out


def as_chat(api: Api, body: Mapping[str, object]) -> dict[str, object]:
    """``body`` (of ``api``) as a Chat Completions body: ``{"messages", "tools"}``."""
    if api is Api.CHAT:
        return json.loads(json.dumps(body, default=str))  # type: ignore[no-any-return]
    messages = _messages_api(body) if api is Api.MESSAGES else _responses_api(body)
    tools = []
    for t in body.get("tools") or []:  # type: ignore[attr-defined]
        if isinstance(t, dict) and t.get("name"):
            params = t.get("input_schema", t.get("parameters", {}))
            tools.append(
                {"type": "function", "function": {"name": t["name"], "parameters": params}}
            )
    return {"messages": messages, "tools": tools}
