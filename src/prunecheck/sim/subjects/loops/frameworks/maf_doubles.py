"""What the Microsoft Agent Framework adapter puts at the framework's own
boundaries: a scripted chat client and fake tool bodies, and the rendering
of the framework's ``Message`` objects as OpenAI Chat Completions messages,
the form the harness judges.

* :func:`ScriptedChatClient` is a chat client of the framework's own layers
  (``FunctionInvocationLayer``, ``ChatMiddlewareLayer`` over
  ``BaseChatClient``, as ``OpenAIChatCompletionClient`` is composed, less
  telemetry): its ``_inner_get_response`` renders the messages it is handed
  (after the agent's history providers, compaction provider and in-run
  compaction: what the provider would receive), asks :meth:`Harness.model`
  and answers the scripted text and parallel ``function_call`` contents as a
  ``ChatResponse``.  The function-invocation loop, the user's compaction
  strategy and tokenizer, and the user's client's function-invocation
  configuration run as the framework runs them.
* :func:`fake_tools` copies each of the agent's ``FunctionTool`` objects
  keeping its name, description, schema and approval mode; only the
  function is the harness's (the framework's argument validation and error
  results are kept).

Nothing here imports the framework at import time.
"""

from __future__ import annotations

import contextvars
import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..contract import Harness, Reply, ToolCall, ToolSpec

__all__ = [
    "SUMMARY",
    "ScriptedChatClient",
    "SummaryClient",
    "fake_tools",
    "render_messages",
    "tool_json",
    "tool_spec",
]

#: What the summarizer's client answers (a ``SummarizationStrategy`` asks its
#: own client, not the agent's: a side call the harness does not schedule).
SUMMARY = "Summary: the conversation so far, its tool calls and their results."

#: The call id a fake body belongs to (set by the fake's ``invoke``: the
#: framework runs each call of a batch in its own task).
_CALL_ID: contextvars.ContextVar[str] = contextvars.ContextVar("maf_tool_call_id", default="")


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text(getattr(item, "text", None) or item) for item in value)
    try:
        return json.dumps(value, sort_keys=True)
    except TypeError:
        return str(value)


def _arguments(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value or {}, sort_keys=True)


def _result_text(content: Any) -> str:
    """A ``function_result`` content's text, as the framework sends it: its
    result, else its exception (a failed call)."""
    result = getattr(content, "result", None)
    if result is not None:
        return _text(result)
    return _text(getattr(content, "exception", None))


def render_messages(messages: Iterable[Any], system: str | None) -> list[dict[str, object]]:
    """Agent Framework ``Message`` objects as OpenAI Chat Completions messages.

    An assistant message's ``function_call`` contents become its
    ``tool_calls``; each ``function_result`` content (of a ``tool`` message)
    becomes one ``tool`` message; reasoning, media and hosted-tool contents
    are left out.  ``system`` (the agent's instructions) comes first.
    """
    out: list[dict[str, object]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        role = str(getattr(message, "role", ""))
        contents = list(getattr(message, "contents", None) or ())
        text = "".join(str(c.text) for c in contents if c.type == "text" and c.text)
        if role == "assistant":
            calls = [
                {"id": c.call_id, "type": "function",
                 "function": {"name": c.name, "arguments": _arguments(c.arguments)}}
                for c in contents if c.type == "function_call"
            ]  # fmt: skip
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            if calls or text:
                out.append(entry)
            continue
        results = [c for c in contents if c.type == "function_result"]
        for c in results:
            out.append({"role": "tool", "tool_call_id": c.call_id, "content": _result_text(c)})
        if role in ("user", "system") and (text or not results):
            out.append({"role": role, "content": text})
    return out


def tool_json(tool: Any) -> dict[str, object]:
    """A ``FunctionTool`` as an OpenAI ``tools`` entry."""
    return {"type": "function", "function": {"name": tool.name,
            "description": tool.description or "", "parameters": tool.parameters()}}  # fmt: skip


def tool_spec(tool: Any) -> ToolSpec:
    """A ``FunctionTool`` as the harness's :class:`ToolSpec`."""
    return ToolSpec(str(tool.name), str(tool.description or ""), dict(tool.parameters()))


def _client_class() -> type:
    from agent_framework import (
        BaseChatClient,
        ChatMiddlewareLayer,
        ChatResponse,
        Content,
        FunctionInvocationLayer,
        Message,
    )

    class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any],
                             BaseChatClient[Any]):  # fmt: skip
        """The model double: the harness's scripted replies as ``ChatResponse`` objects."""

        OTEL_PROVIDER_NAME = "prunecheck"

        def __init__(self, harness: Harness, issued: dict[str, ToolCall],
                     **kwargs: Any) -> None:  # fmt: skip
            super().__init__(**kwargs)
            self._harness = harness
            self._issued = issued

        async def _ask(self, messages: Sequence[Any], options: Mapping[str, Any]) -> Any:
            tools = [t for t in options.get("tools") or () if hasattr(t, "parameters")]
            request = {
                "messages": render_messages(messages, options.get("instructions")),
                "tools": [tool_json(t) for t in tools],
            }
            reply: Reply = await self._harness.model(request)
            contents: list[Any] = [Content.from_text(reply.text)] if reply.text else []
            for call in reply.calls:
                self._issued[call.id] = call
                contents.append(Content.from_function_call(call.id, call.name,
                                                           arguments=call.arguments))  # fmt: skip
            return ChatResponse(
                messages=[Message(role="assistant", contents=contents)],
                finish_reason="tool_calls" if reply.calls else "stop",
                model="prunecheck-scripted",
            )

        def _inner_get_response(self, *, messages: Sequence[Any], stream: bool,
                                options: Mapping[str, Any], **kwargs: Any) -> Any:  # fmt: skip
            if stream:
                raise NotImplementedError("prunecheck drives the agent's non-streaming run")
            return self._ask(messages, options)

    return ScriptedChatClient


def ScriptedChatClient(harness: Harness, issued: dict[str, ToolCall], **kwargs: Any) -> Any:
    """A chat client answering with ``harness``'s scripted replies (the class is
    made when the framework is first needed: it is imported lazily).

    ``issued`` collects the calls the double issued (id -> call); ``kwargs``
    are the user's client's ``compaction_strategy``, ``tokenizer`` and
    ``function_invocation_configuration``, kept as configured.
    """
    return _client_class()(harness, issued, **kwargs)


def SummaryClient() -> Any:
    """A chat client answering every request with :data:`SUMMARY` (the client of
    a ``SummarizationStrategy``; the class is made when the framework is first needed)."""
    from agent_framework import BaseChatClient, ChatResponse, Message

    class _Summary(BaseChatClient[Any]):
        OTEL_PROVIDER_NAME = "prunecheck"

        async def _inner_get_response(self, **_: Any) -> Any:
            return ChatResponse(messages=[Message(role="assistant", contents=[SUMMARY])])

    return _Summary()


def fake_tools(
    tools: Iterable[Any], body: Callable[[ToolCall], Any], issued: Mapping[str, ToolCall]
) -> list[Any]:
    """A fake of each ``FunctionTool``, of the same name, schema and approval
    mode, whose function is ``body`` (any other tool is kept as it is).

    Parameters
    ----------
    tools : Iterable[FunctionTool]
        The agent's tools (``agent.default_options["tools"]``).
    body : Callable[[ToolCall], Awaitable[str]]
        The harness's tool body (:meth:`Harness.tool`).
    issued : Mapping[str, ToolCall]
        The calls the model double issued (their arguments as issued).
    """
    from agent_framework import FunctionTool

    out: list[Any] = []
    for tool in tools:
        if not isinstance(tool, FunctionTool):
            out.append(tool)
            continue
        out.append(_fake(tool, body, issued))
    return out


def _fake(tool: Any, body: Callable[[ToolCall], Any], issued: Mapping[str, ToolCall]) -> Any:
    fake = copy.copy(tool)
    name = tool.name
    inner = fake.invoke

    async def function(**arguments: Any) -> str:
        cid = _CALL_ID.get()
        call = issued.get(cid) or ToolCall(cid, name, json.dumps(arguments, sort_keys=True))
        return str(await body(call))

    async def invoke(*args: Any, tool_call_id: str | None = None, **kwargs: Any) -> Any:
        _CALL_ID.set(tool_call_id or "")
        return await inner(*args, tool_call_id=tool_call_id, **kwargs)

    fake.func = function
    fake.invoke = invoke
    return fake
