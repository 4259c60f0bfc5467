"""AutoGen doubles for the loop harness: a ``ChatCompletionClient`` that asks
the :class:`~prunecheck.sim.subjects.loops.contract.Harness` what to answer, and fake
tools of the user's names and argument schemas.

The client renders each ``create`` call as the OpenAI Chat Completions body
``OpenAIChatCompletionClient`` would send for the same ``LLMMessage`` list:
an ``AssistantMessage`` of ``FunctionCall``\\ s becomes one assistant message
with ``tool_calls`` (arguments as the model wrote them), a
``FunctionExecutionResultMessage`` one ``tool`` message per result.  Like
that client it links the request's future to the ``CancellationToken``, so
``token.cancel()`` interrupts a pending model call.  ``count_tokens`` is
deterministic (four characters of rendered JSON per token), for
``TokenLimitedChatCompletionContext`` built on the same client.

A fake tool is a ``BaseTool`` with the user's tool's ``args_type``,
``return_type``, name and description; its body is ``harness.tool`` with the
call id AutoGen passes to ``run_json``.  AutoGen's workbench links it to the
cancellation token, as it does the user's tool.

A model call the agent's model context makes while it builds the messages
(a summarizer of the user's own, asking the agent's client or another client
the adapter replaced) is the user's own request, not the agent's turn:
:func:`watch_context` marks the context's ``get_messages`` so that the
client asks the harness with ``aside=True`` (not judged as the agent's
context; a ``model_error`` step may fail it, as a provider's error), and
every other request, AutoGen's reflection on tool use (no tools offered)
included, with ``aside=False``.

Everything here imports AutoGen: imported only when the AutoGen adapter is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from autogen_core.tools import BaseTool, Tool, ToolSchema
from pydantic import BaseModel

from prunecheck.sim.subjects.loops.contract import Harness, Reply, ToolCall, ToolSpec

__all__ = ["HarnessClient", "fake_tool", "render_messages", "tool_spec", "watch_context"]

_CURRENT_CALL: ContextVar[tuple[str, str]] = ContextVar("prunecheck_ag_call", default=("", "{}"))
#: True while the agent's model context builds the messages (its own model calls are asides).
_IN_CONTEXT: ContextVar[bool] = ContextVar("prunecheck_ag_in_context", default=False)
_INFO: ModelInfo = {
    "vision": False,
    "function_calling": True,
    "json_output": True,
    "family": "unknown",
    "structured_output": True,
    "multiple_system_messages": True,
}


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part for part in content if isinstance(part, str))
    return str(content)


def render_messages(messages: Sequence[LLMMessage]) -> list[dict[str, object]]:
    """AutoGen ``LLMMessage``\\ s as OpenAI Chat Completions messages."""
    out: list[dict[str, object]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _content_text(message.content)})
        elif isinstance(message, AssistantMessage):
            if isinstance(message.content, list):
                calls = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in message.content
                ]
                out.append({"role": "assistant", "content": message.thought, "tool_calls": calls})
            else:
                out.append({"role": "assistant", "content": message.content})
        elif isinstance(message, FunctionExecutionResultMessage):
            out.extend(
                {"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                for r in message.content
            )
    return out


def _tool_schema(tool: Tool | ToolSchema) -> dict[str, object]:
    schema: Mapping[str, Any] = tool.schema if isinstance(tool, Tool) else tool
    function: dict[str, object] = {"name": schema["name"]}
    if "description" in schema:
        function["description"] = schema["description"]
    function["parameters"] = dict(schema.get("parameters", {}))
    return {"type": "function", "function": function}


def tool_spec(tool: Tool) -> ToolSpec:
    """The name, description and JSON schema of an AutoGen tool."""
    schema = tool.schema
    return ToolSpec(
        name=schema["name"],
        description=schema.get("description", ""),
        parameters=dict(schema.get("parameters", {})),
    )


class HarnessClient(ChatCompletionClient):
    """A ``ChatCompletionClient`` whose every answer comes from ``harness.model``.

    Parameters
    ----------
    harness : Harness or None
        None builds a client for reading the agent's configuration only
        (calling it then is an error).
    """

    def __init__(self, harness: Harness | None = None) -> None:
        self._harness = harness
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    async def _ask(
        self,
        messages: Sequence[LLMMessage],
        tools: Sequence[Tool | ToolSchema],
        cancellation_token: CancellationToken | None,
    ) -> tuple[Reply, CreateResult]:
        if self._harness is None:
            raise RuntimeError("this HarnessClient only reads the agent's configuration")
        request: dict[str, object] = {"messages": render_messages(messages)}
        if tools:
            request["tools"] = [_tool_schema(t) for t in tools]
        future = asyncio.ensure_future(self._harness.model(request, aside=_IN_CONTEXT.get()))
        if cancellation_token is not None:
            cancellation_token.link_future(future)
        reply = await future
        if reply.calls:
            calls = [FunctionCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.calls]
            result = CreateResult(
                finish_reason="function_calls",
                content=calls,
                usage=self._usage,
                cached=False,
                thought=reply.text or None,
            )
        else:
            result = CreateResult(
                finish_reason="stop", content=reply.text, usage=self._usage, cached=False
            )
        return reply, result

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | str = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        return (await self._ask(messages, tools, cancellation_token))[1]

    async def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | str = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """The reply's text in ``reply.chunks`` pieces, then the whole result
        (as ``model_client_stream=True`` agents consume it)."""
        reply, result = await self._ask(messages, tools, cancellation_token)
        text = reply.text if not reply.calls else ""
        pieces = max(1, reply.chunks)
        size = -(-len(text) // pieces) if text else 0
        for start in range(0, len(text), size or 1):
            yield text[start : start + size]
        yield result

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(
        self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []
    ) -> int:
        body = json.dumps(render_messages(messages)) + json.dumps([_tool_schema(t) for t in tools])
        return len(body) // 4

    def remaining_tokens(
        self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []
    ) -> int:
        return 128_000 - self.count_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> Any:  # deprecated in AutoGen, still abstract
        return {"vision": False, "function_calling": True, "json_output": True}

    @property
    def model_info(self) -> ModelInfo:
        return _INFO


def watch_context(context: Any) -> None:
    """Mark ``context``'s ``get_messages`` (the user's model context, as AutoGen
    calls it before each model call): a model call made inside it is the
    user's own request (a summarizer's), asked with ``aside=True``."""
    read = context.get_messages

    async def get_messages() -> list[LLMMessage]:
        token = _IN_CONTEXT.set(True)
        try:
            messages: list[LLMMessage] = await read()
            return messages
        finally:
            with contextlib.suppress(ValueError):  # closed by a crashed loop's teardown
                _IN_CONTEXT.reset(token)

    context.get_messages = get_messages


class _FakeTool(BaseTool[BaseModel, BaseModel]):
    def __init__(self, tool: BaseTool[Any, Any], harness: Harness) -> None:
        super().__init__(
            args_type=tool.args_type(),
            return_type=tool.return_type(),
            name=tool.name,
            description=tool.description,
            strict=bool(tool.schema.get("strict", False)),
        )
        self._harness = harness

    async def run_json(
        self,
        args: Mapping[str, Any],
        cancellation_token: CancellationToken,
        call_id: str | None = None,
    ) -> Any:
        token = _CURRENT_CALL.set((call_id or "", json.dumps(dict(args), ensure_ascii=False)))
        try:
            return await super().run_json(args, cancellation_token, call_id=call_id)
        finally:
            with contextlib.suppress(ValueError):  # closed by a crashed loop's teardown
                _CURRENT_CALL.reset(token)

    async def run(self, args: BaseModel, cancellation_token: CancellationToken) -> Any:
        call_id, arguments = _CURRENT_CALL.get()
        return await self._harness.tool(ToolCall(id=call_id, name=self.name, arguments=arguments))

    def return_value_as_string(self, value: Any) -> str:
        return value if isinstance(value, str) else super().return_value_as_string(value)


def fake_tool(tool: BaseTool[Any, Any], harness: Harness) -> BaseTool[Any, Any]:
    """A tool of ``tool``'s name, description and argument schema whose body is ``harness.tool``."""
    return _FakeTool(tool, harness)
