"""Reply and error bodies in each API's own JSON, not streamed.

:func:`reply_body` turns a scripted :class:`~prunecheck.sim.subjects.loops.contract.Reply`
into the body OpenAI Chat Completions, OpenAI Responses or Anthropic
Messages would answer (text, then one tool call per scripted call, any
width); :func:`error_body` turns a provider's rejection into the error body
that provider sends with its HTTP 400, with the exact text of
:mod:`prunecheck.model.provider`.  Ids are derived from the exchange's
index, so the same schedule gives the same bytes.  Pure.
"""

from __future__ import annotations

import json

from prunecheck.model.provider import ProviderError

from ..loops.contract import Reply, ToolCall
from .exchange import Api

__all__ = [
    "NOT_FOUND_KIND",
    "error_body",
    "ids",
    "messages_blocks",
    "plain_error",
    "reply_body",
    "responses_envelope",
    "responses_items",
    "tool_input",
    "tool_input_json",
    "usage",
]


#: The kind of the rejection of a ``previous_response_id`` the server does not hold.
NOT_FOUND_KIND = "previous_response_not_found"


def ids(api: Api, index: int) -> str:
    """The id of the reply to exchange ``index`` (``chatcmpl-…``, ``resp_…``, ``msg_…``)."""
    prefix = {Api.CHAT: "chatcmpl-pc", Api.RESPONSES: "resp_pc", Api.MESSAGES: "msg_pc"}[api]
    return f"{prefix}{index:06d}"


def usage(body: object, reply: Reply) -> tuple[int, int]:
    """Token counts (input, output), estimated at 4 characters a token:
    deterministic, never zero."""
    sent = len(json.dumps(body, sort_keys=True, default=str))
    made = len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.calls)
    return max(1, sent // 4), max(1, made // 4)


def tool_input(call: ToolCall) -> object:
    """A call's arguments as Anthropic's ``input`` object ({} when they are
    not a JSON object: Anthropic's input is always one)."""
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def tool_input_json(call: ToolCall) -> str:
    """A call's arguments as Anthropic streams its ``input``: verbatim when
    they are a JSON object, ``"{}"`` when they are not, ``""`` when empty."""
    if not call.arguments.strip():
        return ""
    return call.arguments if _is_object(call) else "{}"


def _is_object(call: ToolCall) -> bool:
    try:
        return isinstance(json.loads(call.arguments), dict)
    except json.JSONDecodeError:
        return False


def _model(body: object) -> str:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) and model else "prunecheck-fake"


def reply_body(api: Api, index: int, body: object, reply: Reply) -> dict[str, object]:
    """The whole (non-streamed) answer of ``api`` to request ``body`` with ``reply``."""
    return {Api.CHAT: _chat, Api.RESPONSES: _responses, Api.MESSAGES: _messages}[api](
        index, body, reply
    )


def _chat(index: int, body: object, reply: Reply) -> dict[str, object]:
    prompt, completion = usage(body, reply)
    message: dict[str, object] = {
        "role": "assistant",
        "content": reply.text if reply.text or not reply.calls else None,
        "refusal": None,
        "annotations": [],
    }
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in reply.calls
        ]
    return {
        "id": ids(Api.CHAT, index),
        "object": "chat.completion",
        "created": 0,
        "model": _model(body),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "system_fingerprint": None,
    }


def responses_items(index: int, reply: Reply) -> list[dict[str, object]]:
    """The ``output`` items of a Responses reply: a message (if there is
    text or no call), then one ``function_call`` item per call."""
    items: list[dict[str, object]] = []
    if reply.text or not reply.calls:
        items.append(
            {
                "type": "message",
                "id": f"msg_pc{index:06d}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    items.extend(
        {
            "type": "function_call",
            "id": f"fc_pc{index:06d}_{k}",
            "call_id": c.id,
            "name": c.name,
            "arguments": c.arguments,
            "status": "completed",
        }
        for k, c in enumerate(reply.calls)
    )
    return items


def responses_envelope(
    index: int, body: object, reply: Reply, status: str, output: list[dict[str, object]]
) -> dict[str, object]:
    """A Responses ``response`` object with ``status`` and ``output``."""
    prompt, completion = usage(body, reply)
    done = status == "completed"
    return {
        "id": ids(Api.RESPONSES, index),
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": _model(body),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
        if done
        else None,
        "user": None,
        "metadata": {},
    }


def _responses(index: int, body: object, reply: Reply) -> dict[str, object]:
    return responses_envelope(index, body, reply, "completed", responses_items(index, reply))


def messages_blocks(reply: Reply) -> list[dict[str, object]]:
    """The ``content`` blocks of an Anthropic reply: a text block (if there
    is text or no call), then one ``tool_use`` block per call."""
    blocks: list[dict[str, object]] = []
    if reply.text or not reply.calls:
        blocks.append({"type": "text", "text": reply.text})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c)}
        for c in reply.calls
    )
    return blocks


def _messages(index: int, body: object, reply: Reply) -> dict[str, object]:
    prompt, completion = usage(body, reply)
    return {
        "id": ids(Api.MESSAGES, index),
        "type": "message",
        "role": "assistant",
        "model": _model(body),
        "content": messages_blocks(reply),
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def _openai_param(api: Api, path: str) -> str | None:
    if api is Api.RESPONSES:
        return "input"
    # OpenAI names the message as "messages.[N].role" where our paths read "messages.N".
    parts = path.split(".")
    if len(parts) >= 2 and parts[0] == "messages" and parts[1].isdigit():
        return f"messages.[{parts[1]}].role"
    return None


def error_body(api: Api, error: ProviderError) -> dict[str, object]:
    """The body the provider sends with its HTTP 400 for ``error``: OpenAI's
    ``{"error": {"message", "type", "param", "code"}}``, Anthropic's
    ``{"type": "error", "error": {"type", "message"}}``; the message is
    the rule's exact text."""
    if api is Api.MESSAGES:
        return plain_error(api, error.text)
    param: str | None
    code: str | None
    if error.kind == NOT_FOUND_KIND:
        param, code = "previous_response_id", NOT_FOUND_KIND
    else:
        param, code = _openai_param(api, error.path), None
    return {
        "error": {
            "message": error.text,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }


def plain_error(api: Api, message: str, kind: str = "invalid_request_error") -> dict[str, object]:
    """An error body of ``api``'s shape carrying ``message`` (for errors that
    are the endpoint's own, not a provider rule's)."""
    if api is Api.MESSAGES:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
