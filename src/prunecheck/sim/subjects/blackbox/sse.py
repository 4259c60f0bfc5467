"""Streamed replies: each API's server-sent events, in its real event format.

:func:`events` turns a scripted :class:`~prunecheck.sim.subjects.loops.contract.Reply`
into the list of SSE events the API streams for it, each already encoded
(``event: …`` where the API names its events, ``data: {…}``, a blank line):

- OpenAI Chat Completions: ``chat.completion.chunk`` objects (the role, the
  text in :attr:`Reply.chunks` pieces, per call a header delta with its id
  and name then its arguments in pieces, the ``finish_reason``, the usage
  chunk when ``stream_options.include_usage`` asks for it), then
  ``data: [DONE]``.
- OpenAI Responses: ``response.created``, ``response.in_progress``, per
  output item ``response.output_item.added`` … ``response.output_item.done``
  (text deltas, ``response.function_call_arguments.delta``/``.done``), then
  ``response.completed``; every event carries its ``sequence_number``.
- Anthropic Messages: ``message_start``, ``ping``, per block ``content_block_start``,
  ``content_block_delta`` (``text_delta`` / ``input_json_delta``),
  ``content_block_stop``, then ``message_delta`` and ``message_stop``.

Pure; O(size of the reply).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..loops.contract import Reply
from .exchange import Api
from .wire import (
    ids,
    messages_blocks,
    responses_envelope,
    responses_items,
    tool_input_json,
    usage,
)

__all__ = ["encode", "events", "pieces"]


def encode(data: object, event: str | None = None) -> bytes:
    """One SSE event: ``event:`` (if named) and ``data:`` lines, a blank line."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def pieces(text: str, count: int) -> list[str]:
    """``text`` in ``count`` pieces as even as can be (fewer when ``text`` is
    shorter; none for ``""``).

    >>> pieces("abcdefg", 3)
    ['abc', 'de', 'fg']
    >>> pieces("ab", 5), pieces("", 2)
    (['a', 'b'], [])
    """
    n = max(1, min(count, len(text)))
    size, extra = divmod(len(text), n)
    out: list[str] = []
    at = 0
    for k in range(n):
        step = size + (1 if k < extra else 0)
        if step:
            out.append(text[at : at + step])
        at += step
    return out


def events(api: Api, index: int, body: Mapping[str, object], reply: Reply) -> list[bytes]:
    """Every SSE event of ``api``'s stream answering ``body`` with ``reply``."""
    return {Api.CHAT: _chat, Api.RESPONSES: _responses, Api.MESSAGES: _messages}[api](
        index, body, reply
    )


def _chat(index: int, body: Mapping[str, object], reply: Reply) -> list[bytes]:
    model = body.get("model") if isinstance(body.get("model"), str) else "prunecheck-fake"
    head = {"id": ids(Api.CHAT, index), "object": "chat.completion.chunk", "created": 0}
    head |= {"model": model, "system_fingerprint": None}

    def chunk(delta: Mapping[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return encode({**head, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    out += [chunk({"content": p}) for p in pieces(reply.text, reply.chunks)]
    for k, call in enumerate(reply.calls):
        function = {"name": call.name, "arguments": ""}
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": k, "id": call.id, "type": "function", "function": function}
                    ]
                }
            )
        )
        out += [
            chunk({"tool_calls": [{"index": k, "function": {"arguments": p}}]})
            for p in pieces(call.arguments, reply.chunks)
        ]
    out.append(chunk({}, "tool_calls" if reply.calls else "stop"))
    options = body.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage"):
        prompt, completion = usage(body, reply)
        totals = {"prompt_tokens": prompt, "completion_tokens": completion}
        totals["total_tokens"] = prompt + completion
        out.append(encode({**head, "choices": [], "usage": totals}))
    out.append(encode("[DONE]"))
    return out


def _responses(index: int, body: Mapping[str, object], reply: Reply) -> list[bytes]:
    out: list[bytes] = []

    def emit(kind: str, **fields: object) -> None:
        out.append(encode({"type": kind, "sequence_number": len(out), **fields}, kind))

    emit("response.created", response=responses_envelope(index, body, reply, "in_progress", []))
    emit("response.in_progress", response=responses_envelope(index, body, reply, "in_progress", []))
    items = responses_items(index, reply)
    for at, item in enumerate(items):
        where = {"output_index": at, "item_id": item["id"]}
        if item["type"] == "message":
            text = reply.text
            emit(
                "response.output_item.added",
                output_index=at,
                item={**item, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", **where, content_index=0, part=part)
            for p in pieces(text, reply.chunks):
                emit("response.output_text.delta", **where, content_index=0, delta=p, logprobs=[])
            emit("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
            emit(
                "response.content_part.done", **where, content_index=0, part={**part, "text": text}
            )
        else:
            arguments = str(item["arguments"])
            emit(
                "response.output_item.added",
                output_index=at,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for p in pieces(arguments, reply.chunks):
                emit("response.function_call_arguments.delta", **where, delta=p)
            emit("response.function_call_arguments.done", **where, arguments=arguments)
        emit("response.output_item.done", output_index=at, item=item)
    emit("response.completed", response=responses_envelope(index, body, reply, "completed", items))
    return out


def _messages(index: int, body: Mapping[str, object], reply: Reply) -> list[bytes]:
    out: list[bytes] = []

    def emit(kind: str, **fields: object) -> None:
        out.append(encode({"type": kind, **fields}, kind))

    prompt, completion = usage(body, reply)
    model = body.get("model") if isinstance(body.get("model"), str) else "prunecheck-fake"
    message: dict[str, object] = {
        "id": ids(Api.MESSAGES, index),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": 1},
    }
    emit("message_start", message=message)
    emit("ping")  # as Anthropic sends one after message_start
    calls = iter(reply.calls)
    for at, block in enumerate(messages_blocks(reply)):
        if block["type"] == "text":
            emit("content_block_start", index=at, content_block={"type": "text", "text": ""})
            for p in pieces(reply.text, reply.chunks):
                emit("content_block_delta", index=at, delta={"type": "text_delta", "text": p})
        else:
            call = next(calls)
            emit("content_block_start", index=at, content_block={**block, "input": {}})
            for p in pieces(tool_input_json(call), reply.chunks):
                emit(
                    "content_block_delta",
                    index=at,
                    delta={"type": "input_json_delta", "partial_json": p},
                )
        emit("content_block_stop", index=at)
    stop = {"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None}
    emit("message_delta", delta=stop, usage={"output_tokens": completion})
    emit("message_stop")
    return out
