"""What the LlamaIndex adapter puts at LlamaIndex's own boundaries: its test
model (``MockFunctionCallingLLM``) answering with the harness's scripted
replies, fake tool bodies, and the rendering of LlamaIndex's ``ChatMessage``
objects as OpenAI Chat Completions messages, the form the harness judges.

* :func:`scripted_llm` is LlamaIndex's own ``MockFunctionCallingLLM`` (a
  ``FunctionCallingLLM``) whose ``achat`` and ``astream_chat`` render the
  messages the agent hands it (after the memory: what the provider would
  receive), ask :meth:`Harness.model` and answer with the scripted text and
  parallel ``ToolCallBlock`` blocks (streamed in ``Reply.chunks`` chunks when
  the agent streams, LlamaIndex's default);
* :func:`fake_tools` copies each of the agent's tools as a ``FunctionTool``
  of the same metadata (name, description, argument schema,
  ``return_direct``) whose body calls :meth:`Harness.tool`; LlamaIndex's own
  ``_call_tool`` turns a raised error into an error result, as it does for
  the user's tool;
* :func:`summary_llm`: the model a summarizing memory
  (``ChatSummaryMemoryBuffer``) asks for its summaries, a side call the
  harness does not schedule (it answers :data:`SUMMARY`).

Nothing here imports LlamaIndex at import time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from ..contract import Harness, Reply, ToolCall, ToolSpec

__all__ = [
    "SUMMARY",
    "fake_tools",
    "render_messages",
    "scripted_llm",
    "summary_llm",
    "tool_json",
    "tool_spec",
]

#: What the summarizing memory's model answers (a side call, not scheduled).
SUMMARY = "Summary: the conversation so far, its tool calls and their results."

_ASSISTANT = frozenset({"assistant", "chatbot", "model"})
_SYSTEM = frozenset({"system", "developer"})


def _arguments(kwargs: object) -> str:
    return kwargs if isinstance(kwargs, str) else json.dumps(kwargs, sort_keys=True)


def _calls_of(message: Any) -> list[dict[str, object]]:
    """The tool calls of an assistant ``ChatMessage``: its ``ToolCallBlock`` blocks,
    else the ``additional_kwargs["tool_calls"]`` older agents record."""
    try:
        from llama_index.core.base.llms.types import ToolCallBlock
    except ImportError:  # LlamaIndex 0.11: tool calls in additional_kwargs only
        blocks: list[Any] = []
    else:
        blocks = [b for b in getattr(message, "blocks", []) if isinstance(b, ToolCallBlock)]
    calls: list[dict[str, object]] = [
        {"id": b.tool_call_id, "type": "function",
         "function": {"name": b.tool_name, "arguments": _arguments(b.tool_kwargs)}}
        for b in blocks
    ]  # fmt: skip
    if calls:
        return calls
    for raw in message.additional_kwargs.get("tool_calls") or []:
        item = raw if isinstance(raw, Mapping) else getattr(raw, "model_dump", lambda: {})()
        function = item.get("function") or {}
        calls.append({"id": item.get("id"), "type": "function",
                      "function": {"name": function.get("name"),
                                   "arguments": function.get("arguments") or "{}"}})  # fmt: skip
    return calls


def render_messages(messages: Iterable[Any]) -> list[dict[str, object]]:
    """LlamaIndex ``ChatMessage`` objects as OpenAI Chat Completions messages.

    An assistant message's ``ToolCallBlock`` blocks become its ``tool_calls``;
    a ``tool`` message's ``additional_kwargs["tool_call_id"]`` its
    ``tool_call_id``; text blocks are joined; other blocks are left out.
    """
    out: list[dict[str, object]] = []
    for message in messages:
        role = str(getattr(message.role, "value", message.role))
        text = message.content or ""
        if role in _ASSISTANT:
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            calls = _calls_of(message)
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif role in ("tool", "function"):
            out.append({"role": "tool", "content": text,
                        "tool_call_id": message.additional_kwargs.get("tool_call_id")})  # fmt: skip
        else:
            out.append({"role": "system" if role in _SYSTEM else "user", "content": text})
    return out


def tool_json(tool: Any) -> dict[str, object]:
    """A LlamaIndex tool as an OpenAI ``tools`` entry (``metadata.to_openai_tool()``)."""
    meta = tool.metadata
    try:
        params = meta.get_parameters_dict()
    except Exception:  # a schema LlamaIndex cannot render: no parameters
        params = {"type": "object", "properties": {}}
    return {"type": "function", "function": {"name": meta.get_name(),
            "description": meta.description or "", "parameters": params}}  # fmt: skip


def tool_spec(tool: Any) -> ToolSpec:
    """A LlamaIndex tool as the harness's :class:`ToolSpec`."""
    function = tool_json(tool)["function"]
    assert isinstance(function, dict)
    return ToolSpec(str(function["name"]), str(function["description"]),
                    dict(function["parameters"]))  # fmt: skip


def _chunks(text: str, n: int) -> list[str]:
    if n <= 1 or len(text) <= 1:
        return [text]
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _message(reply: Reply, text: str, calls: bool) -> Any:
    from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock

    blocks: list[Any] = [TextBlock(text=text)] if text else []
    if calls:
        blocks += [ToolCallBlock(tool_call_id=c.id, tool_name=c.name, tool_kwargs=c.arguments)
                   for c in reply.calls]  # fmt: skip
    return ChatMessage(role="assistant", blocks=blocks)


def scripted_llm(harness: Harness | None, context_window: int | None = None) -> Any:
    """LlamaIndex's ``MockFunctionCallingLLM`` answering with ``harness``'s scripted replies.

    One class for the process (:func:`_scripted_class`), the harness and the
    window on the instance: a class made per run (a pydantic model class,
    which pydantic and LlamaIndex keep) kept each run's harness, and with it
    the run's whole ledger, for the life of the process (about 240 kB a run
    of a long search).

    Parameters
    ----------
    harness : Harness or None
        Whose :meth:`Harness.model` answers each request (None: every request
        is answered with :data:`SUMMARY`).
    context_window : int or None
        What the model's metadata says its context window is (the user's
        model's: a memory built from the model sizes itself by it).
    """
    llm = _scripted_class()()
    llm._harness, llm._window = harness, context_window
    return llm


_SCRIPTED: list[type] = []


def _scripted_class() -> type:
    """The model double's class, made once (see :func:`scripted_llm`)."""
    if _SCRIPTED:
        return _SCRIPTED[0]
    from llama_index.core.base.llms.types import ChatResponse, LLMMetadata
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from pydantic import PrivateAttr

    class ScriptedLLM(MockFunctionCallingLLM):
        """The model double (LlamaIndex's test model, its replies the harness's)."""

        _harness: Any = PrivateAttr(default=None)
        _window: Any = PrivateAttr(default=None)

        @property
        def metadata(self) -> LLMMetadata:
            meta = super().metadata
            window = self._window
            return meta.model_copy(update={"context_window": window}) if window else meta

        async def _ask(self, messages: Any, kwargs: Mapping[str, Any]) -> Reply:
            harness = self._harness
            if harness is None:
                return Reply(SUMMARY)
            request = {"messages": render_messages(messages),
                       "tools": [tool_json(t) for t in kwargs.get("tools") or []]}  # fmt: skip
            reply: Reply = await harness.model(request)
            return reply

        async def achat(self, messages: Any, **kwargs: Any) -> Any:
            reply = await self._ask(messages, kwargs)
            return ChatResponse(message=_message(reply, reply.text, True), delta=reply.text)

        async def astream_chat(self, messages: Any, **kwargs: Any) -> Any:
            reply = await self._ask(messages, kwargs)

            async def stream() -> AsyncIterator[Any]:
                pieces = _chunks(reply.text, reply.chunks)
                shown = ""
                for n, piece in enumerate(pieces, 1):
                    shown += piece
                    yield ChatResponse(message=_message(reply, shown, n == len(pieces)),
                                       delta=piece)  # fmt: skip

            return stream()

        def chat(self, messages: Any, **kwargs: Any) -> Any:
            text = SUMMARY if self._harness is None else ""
            return ChatResponse(message=_message(Reply(text), text, False), delta=text)

    _SCRIPTED.append(ScriptedLLM)
    return ScriptedLLM


def summary_llm() -> Any:
    """The model a summarizing memory asks for a summary (:data:`SUMMARY`)."""
    return scripted_llm(None)


def fake_tools(tools: Iterable[Any], body: Callable[[ToolCall], Any]) -> list[Any]:
    """A ``FunctionTool`` of each tool's metadata whose body is ``body``.

    Parameters
    ----------
    tools : Iterable[BaseTool]
        The agent's tools (``agent.tools``, functions already made ``FunctionTool``).
    body : Callable[[ToolCall], Awaitable[str]]
        The harness's tool body (:meth:`Harness.tool`); LlamaIndex hands a tool
        its arguments, not its call id, so the call is named by its name and
        arguments (the contract's empty id).
    """
    from llama_index.core.tools import FunctionTool

    def fake(tool: Any) -> Any:
        name = tool.metadata.get_name()

        async def run(**kwargs: Any) -> str:
            return str(await body(ToolCall("", name, json.dumps(kwargs, sort_keys=True))))

        return FunctionTool.from_defaults(async_fn=run, tool_metadata=tool.metadata)

    return [fake(t) for t in tools]
