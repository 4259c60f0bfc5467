"""What the Strands Agents adapter puts at Strands' own boundaries: a scripted
``strands.models.Model`` and fake tool bodies, and the rendering of Strands'
messages (Bedrock Converse shaped: ``text``, ``toolUse`` and ``toolResult``
blocks) as OpenAI Chat Completions messages, the form the harness judges.

* :class:`ScriptedModel` implements the model interface's ``stream``
  contract: it renders the messages it is handed (after the conversation
  manager: what the provider would receive), asks :meth:`Harness.model` and
  streams the scripted reply as Strands' stream events (``messageStart``,
  ``contentBlockStart``/``Delta``/``Stop`` per text and ``toolUse`` block,
  ``messageStop`` with ``tool_use`` or ``end_turn``).
* :func:`fake_tools` copies each of the agent's tools keeping its name and
  spec; a ``@tool`` function keeps Strands' own ``DecoratedFunctionTool``
  (its input validation and its error results: ``Error: KIND - text``), only
  the function body is the harness's; any other ``AgentTool`` becomes a tool
  of the same spec whose result is the harness's answer, as Strands formats it.

Nothing here imports Strands at import time.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any

from ..contract import Harness, Reply, ToolCall, ToolSpec

__all__ = ["SUMMARY", "ScriptedModel", "fake_tools", "render_messages", "tool_json", "tool_spec"]

#: The tool use a fake body belongs to (set by the fake's ``stream``: each tool
#: runs in its own task under Strands' concurrent executor, in turn under the
#: sequential one).
_CALL: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("strands_tool_use")


def _result_text(content: object) -> str:
    """A ``toolResult``'s content list as one text (``text`` items; ``json`` dumped)."""
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts: list[str] = []
    for item in content:
        if not isinstance(item, Mapping):
            parts.append(str(item))
        elif "text" in item:
            parts.append(str(item["text"]))
        elif "json" in item:
            parts.append(json.dumps(item["json"], sort_keys=True))
    return "".join(parts)


def render_messages(
    messages: Iterable[Mapping[str, Any]], system: str | None
) -> list[dict[str, object]]:
    """Strands messages as OpenAI Chat Completions messages.

    A user message's ``toolResult`` blocks become ``tool`` messages (in block
    order, before the message's text); an assistant message's ``toolUse``
    blocks become its ``tool_calls``; reasoning and media blocks are left out.

    >>> render_messages([{"role": "assistant", "content": [{"toolUse": {
    ...     "toolUseId": "c1", "name": "f", "input": {}}}]}], None)[0]["tool_calls"][0]["id"]
    'c1'
    """
    out: list[dict[str, object]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        blocks = [b for b in message.get("content") or [] if isinstance(b, Mapping)]
        text = "".join(str(b["text"]) for b in blocks if "text" in b)
        if message.get("role") == "assistant":
            calls = [
                {
                    "id": b["toolUse"].get("toolUseId"),
                    "type": "function",
                    "function": {
                        "name": b["toolUse"].get("name"),
                        "arguments": json.dumps(b["toolUse"].get("input"), sort_keys=True),
                    },
                }
                for b in blocks
                if "toolUse" in b
            ]
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for b in blocks:
            if "toolResult" in b:
                result = b["toolResult"]
                out.append({"role": "tool", "tool_call_id": result.get("toolUseId"),
                            "content": _result_text(result.get("content"))})  # fmt: skip
        if text or not any("toolResult" in b for b in blocks):
            out.append({"role": "user", "content": text})
    return out


def tool_json(spec: Mapping[str, Any]) -> dict[str, object]:
    """A Strands tool spec as an OpenAI ``tools`` entry."""
    schema = spec.get("inputSchema") or {}
    params = schema.get("json", schema) if isinstance(schema, Mapping) else {}
    return {"type": "function", "function": {"name": spec.get("name"),
            "description": spec.get("description") or "", "parameters": params}}  # fmt: skip


def tool_spec(spec: Mapping[str, Any]) -> ToolSpec:
    """A Strands tool spec as the harness's :class:`ToolSpec`."""
    function = tool_json(spec)["function"]
    assert isinstance(function, dict)
    return ToolSpec(str(function["name"]), str(function["description"]),
                    dict(function["parameters"]))  # fmt: skip


#: What the double answers a side call made off the harness's loop: the
#: ``SummarizingConversationManager`` summarizes through ``run_async`` (a thread
#: of its own, with its own event loop), which the harness cannot schedule.
SUMMARY = "Summary: the conversation so far, its tool calls and their results."


def _chunks(text: str, n: int) -> list[str]:
    if n <= 1 or len(text) <= 1:
        return [text]
    size = -(-len(text) // n)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _scripted_model_class() -> type:
    from strands.models.model import Model

    class ScriptedModel(Model):
        """The model double: the harness's scripted replies as Strands stream events."""

        def __init__(self, harness: Harness | None, issued: dict[str, ToolCall],
                     config: Mapping[str, Any] | None = None) -> None:  # fmt: skip
            self._harness = harness
            self._issued = issued
            self._config = dict(config or {})
            self._cancelled: asyncio.Event | None = None
            self.home: asyncio.AbstractEventLoop | None = None  # the loop the turns run on

        def cancel_now(self) -> None:
            """The agent was cancelled: a request in flight streams its first chunk,
            and Strands' checkpoint between chunks stops the turn."""
            if self._cancelled is not None:
                self._cancelled.set()

        def new_turn(self) -> None:
            self.home = asyncio.get_running_loop()
            if self._cancelled is not None:
                self._cancelled.clear()

        async def _ask(self, request: Mapping[str, object]) -> Reply | None:
            """The harness's reply, or None if the agent is cancelled first."""
            assert self._harness is not None
            if self._cancelled is None:
                self._cancelled = asyncio.Event()
            if self._cancelled.is_set():
                return None
            ask = asyncio.ensure_future(self._harness.model(request))
            stop = asyncio.ensure_future(self._cancelled.wait())
            await asyncio.wait({ask, stop}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if ask.done():
                return ask.result()
            ask.cancel()
            return None

        def update_config(self, **model_config: Any) -> None:
            self._config.update(model_config)

        def get_config(self) -> Any:
            return dict(self._config)

        def structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("prunecheck's model double gives no structured output")

        async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None,
                         **kwargs: Any) -> AsyncIterator[Any]:  # fmt: skip
            request = {
                "messages": render_messages(messages, system_prompt),
                "tools": [tool_json(s) for s in tool_specs or []],
            }
            if self._harness is None or asyncio.get_running_loop() is not self.home:
                reply = Reply(SUMMARY)  # a side call off the harness's loop: a summary
            else:
                answered = await self._ask(request)
                if answered is None:  # cancelled in flight: the reply's first chunk comes,
                    yield {"messageStart": {"role": "assistant"}}  # Strands' checkpoint stops
                    return
                reply = answered
            yield {"messageStart": {"role": "assistant"}}
            if reply.text or not reply.calls:
                for piece in _chunks(reply.text, reply.chunks):
                    yield {"contentBlockDelta": {"delta": {"text": piece}}}
                yield {"contentBlockStop": {}}
            for call in reply.calls:
                self._issued[call.id] = call
                start = {"toolUse": {"toolUseId": call.id, "name": call.name}}
                yield {"contentBlockStart": {"start": start}}
                for piece in _chunks(call.arguments, reply.chunks):
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}}}
                yield {"contentBlockStop": {}}
            stop = "tool_use" if reply.calls else "end_turn"
            yield {"messageStop": {"stopReason": stop}}

    return ScriptedModel


def ScriptedModel(harness: Harness | None, issued: dict[str, ToolCall],
                  config: Mapping[str, Any] | None = None) -> Any:  # fmt: skip
    """A ``strands.models.Model`` answering with ``harness``'s scripted replies
    (the class is made when Strands is first needed: Strands is imported lazily).

    ``issued`` collects the calls the double issued (id -> call); ``config``
    is what ``get_config()`` answers (the user's model's ``context_window_limit``).
    A request in flight when the agent is cancelled streams the reply's first
    chunk only, as a provider keeps streaming until Strands' checkpoint between
    chunks stops the turn.  A double without a harness answers every request
    with a short summary text.
    """
    return _scripted_model_class()(harness, issued, config)


def fake_tools(
    tools: Iterable[Any], body: Callable[[ToolCall], Any], issued: Mapping[str, ToolCall]
) -> list[Any]:
    """A fake of each Strands tool, of the same name and spec, whose body is ``body``.

    Parameters
    ----------
    tools : Iterable[AgentTool]
        The agent's tools (``agent.tool_registry.registry.values()``).
    body : Callable[[ToolCall], Awaitable[str]]
        The harness's tool body (:meth:`Harness.tool`).
    issued : Mapping[str, ToolCall]
        The calls the model double issued (their arguments as issued).
    """
    from strands.tools.decorator import DecoratedFunctionTool

    def call_of(use: Mapping[str, Any], name: str) -> ToolCall:
        cid = str(use.get("toolUseId") or "")
        return issued.get(cid) or ToolCall(cid, name, json.dumps(use.get("input") or {}))

    out: list[Any] = []
    for tool in tools:
        if isinstance(tool, DecoratedFunctionTool):
            out.append(_decorated(tool, body, call_of))
        else:
            out.append(_plain(tool, body, call_of))
    return out


def _decorated(tool: Any, body: Callable[[ToolCall], Any], call_of: Any) -> Any:
    fake = copy.copy(tool)
    name = tool.tool_name
    inner = fake.stream

    async def function(**_: Any) -> str:
        return str(await body(call_of(_CALL.get(), name)))

    async def stream(tool_use: Any, invocation_state: Any, **kwargs: Any) -> AsyncIterator[Any]:
        _CALL.set(tool_use)
        async for event in inner(tool_use, invocation_state, **kwargs):
            yield event

    fake._tool_func = function  # Strands' validation and error results kept
    fake.stream = stream
    return fake


def _plain(tool: Any, body: Callable[[ToolCall], Any], call_of: Any) -> Any:
    from strands.types._events import ToolResultEvent
    from strands.types.tools import AgentTool

    spec, name, kind = tool.tool_spec, tool.tool_name, tool.tool_type

    class _Fake(AgentTool):
        @property
        def tool_name(self) -> str:
            return str(name)

        @property
        def tool_spec(self) -> Any:
            return spec

        @property
        def tool_type(self) -> str:
            return str(kind)

        async def stream(self, tool_use: Any, invocation_state: Any, **kwargs: Any) -> Any:
            cid = tool_use.get("toolUseId")
            try:
                text = str(await body(call_of(tool_use, name)))
            except Exception as exc:  # as Strands' decorated tools word a raised error
                text = f"Error: {type(exc).__name__} - {exc}"
                yield ToolResultEvent({"toolUseId": cid, "status": "error",
                                       "content": [{"text": text}]})  # fmt: skip
                return
            yield ToolResultEvent({"toolUseId": cid, "status": "success",
                                   "content": [{"text": text}]})  # fmt: skip

    return _Fake()
