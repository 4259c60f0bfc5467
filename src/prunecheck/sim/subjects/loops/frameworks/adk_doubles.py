"""What the Google ADK adapter puts at ADK's own boundaries: a scripted
``google.adk.models.BaseLlm`` and fake tools, and the rendering of ADK's
``google.genai`` contents (``text``, ``function_call`` and
``function_response`` parts) as OpenAI Chat Completions messages, the form
the harness judges.

* :func:`ScriptedLlm` implements the model interface's
  ``generate_content_async``: it renders the ``LlmRequest`` it is handed
  (after ADK's contents processors, its compaction and every
  ``before_model_callback``: what the provider would receive), asks
  :meth:`Harness.model` and yields the scripted reply as one ``LlmResponse``
  (text and parallel ``function_call`` parts), with a ``prompt_token_count``
  counted as the harness counts (characters / 4), so a token-threshold
  compaction runs as configured.  A model without a harness answers every
  request with :data:`SUMMARY` (the compaction summarizer's calls).
* :func:`fake_tools` makes, for each of the agent's tools, a ``BaseTool`` of
  the same name and declaration whose ``run_async`` is the harness's body.

ADK has no test model in its public API (``google.adk.cli.agent_test_runner``'s
``MockModel`` replays a fixed list of responses at once and imports pytest),
so the double is a ``BaseLlm`` subclass.  Nothing here imports ADK at import time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import Any

from ..contract import Harness, ToolCall, ToolSpec

__all__ = [
    "SUMMARY",
    "ScriptedLlm",
    "declarations",
    "fake_tools",
    "render_contents",
    "render_events",
    "request_body",
    "tool_json",
    "tool_spec",
]

#: What the double answers a request made without a harness (the summarizer of
#: an ``EventsCompactionConfig``: ADK's ``LlmEventSummarizer`` on the double).
SUMMARY = "Summary: the conversation so far, its tool calls and their results."


def _response_text(response: object) -> str:
    """A ``function_response``'s ``response`` as the tool message's text: the
    ``result`` ADK wraps a non-dict return in, else the dict as JSON."""
    if isinstance(response, Mapping):
        if set(response) == {"result"}:
            value = response["result"]
            return value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        return json.dumps(dict(response), sort_keys=True, default=str)
    return "" if response is None else str(response)


def render_contents(contents: Iterable[Any], system: str | None) -> list[dict[str, object]]:
    """ADK's ``types.Content`` list as OpenAI Chat Completions messages.

    A ``user`` content's ``function_response`` parts become ``tool`` messages
    (in part order, before the content's text); a ``model`` content's
    ``function_call`` parts become its ``tool_calls``; thoughts and media are
    left out.
    """
    out: list[dict[str, object]] = [{"role": "system", "content": system}] if system else []
    for content in contents:
        parts = list(getattr(content, "parts", None) or [])
        text = "".join(p.text for p in parts if p.text and not p.thought)
        if getattr(content, "role", None) == "model":
            calls = [
                {"id": p.function_call.id, "type": "function",
                 "function": {"name": p.function_call.name,
                              "arguments": json.dumps(p.function_call.args or {}, sort_keys=True)}}
                for p in parts if p.function_call is not None
            ]  # fmt: skip
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        results = [p.function_response for p in parts if p.function_response is not None]
        for r in results:
            out.append({"role": "tool", "tool_call_id": r.id,
                        "content": _response_text(r.response)})  # fmt: skip
        if text or not results:
            out.append({"role": "user", "content": text})
    return out


def render_events(events: Iterable[Any], system: str | None) -> list[dict[str, object]]:
    """A session's raw events (what ADK holds: every event appended, compaction
    summaries left out) as OpenAI Chat Completions messages."""
    contents = [
        e.content
        for e in events
        if e.content is not None and not (e.actions is not None and e.actions.compaction)
    ]
    return render_contents(contents, system)


def tool_json(declaration: Any) -> dict[str, object]:
    """An ADK ``FunctionDeclaration`` as an OpenAI ``tools`` entry."""
    params = declaration.parameters_json_schema
    if params is None and declaration.parameters is not None:
        params = declaration.parameters.model_dump(exclude_none=True, mode="json")
    return {"type": "function", "function": {"name": declaration.name,
            "description": declaration.description or "",
            "parameters": params or {"type": "object", "properties": {}}}}  # fmt: skip


def tool_spec(declaration: Any) -> ToolSpec:
    """An ADK ``FunctionDeclaration`` as the harness's :class:`ToolSpec`."""
    function = tool_json(declaration)["function"]
    assert isinstance(function, dict)
    return ToolSpec(str(function["name"]), str(function["description"]),
                    dict(function["parameters"]))  # fmt: skip


def request_body(llm_request: Any) -> dict[str, object]:
    """An ``LlmRequest`` as the OpenAI Chat Completions body the harness judges."""
    config = llm_request.config
    system = config.system_instruction if config is not None else None
    if system is not None and not isinstance(system, str):
        system = "".join(p.text or "" for p in getattr(system, "parts", None) or [])
    tools = [
        tool_json(d)
        for t in (config.tools or [] if config is not None else [])
        for d in (getattr(t, "function_declarations", None) or [])
    ]
    return {"messages": render_contents(llm_request.contents, system or None), "tools": tools}


def _scripted_class() -> type:
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types
    from pydantic import PrivateAttr

    class _ScriptedLlm(BaseLlm):
        """The model double: the harness's scripted replies as ``LlmResponse``s."""

        model: str = "prunecheck-scripted"
        _harness: Any = PrivateAttr(default=None)
        _issued: Any = PrivateAttr(default=None)
        _held: Any = PrivateAttr(default=None)

        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[Any, None]:
            body = request_body(llm_request)
            tokens = len(json.dumps(body)) // 4
            usage = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=tokens, total_token_count=tokens
            )
            if self._harness is None:  # the summarizer's call
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text=SUMMARY)]),
                    usage_metadata=usage,
                )
                return
            reply = await self._harness.model(body)
            parts: list[Any] = []
            if reply.text or not reply.calls:
                parts.append(types.Part(text=reply.text))
            for call in reply.calls:
                self._issued[call.id] = call
                args = json.loads(call.arguments or "{}")
                parts.append(types.Part(function_call=types.FunctionCall(
                    id=call.id, name=call.name, args=args)))  # fmt: skip
            yield LlmResponse(content=types.Content(role="model", parts=parts),
                              usage_metadata=usage)  # fmt: skip

    return _ScriptedLlm


def ScriptedLlm(harness: Harness | None, issued: dict[str, ToolCall]) -> Any:
    """A ``BaseLlm`` answering with ``harness``'s scripted replies (the class is
    made when ADK is first needed: ADK is imported lazily).

    ``issued`` collects the calls the double issued (id -> call).  A double
    without a harness answers every request with :data:`SUMMARY`.
    """
    llm = _scripted_class()()
    llm._harness = harness
    llm._issued = issued
    return llm


def _declaration(tool: Any) -> Any:
    from google.adk.tools.function_tool import FunctionTool

    made = tool if hasattr(tool, "_get_declaration") else FunctionTool(tool)
    return made, made._get_declaration()


def declarations(tools: Iterable[Any]) -> list[tuple[Any, Any]]:
    """Each of the agent's tools (a function or a ``BaseTool``) with its declaration;
    a toolset is refused (its tools are known only at run time)."""
    from google.adk.tools.base_toolset import BaseToolset

    out: list[tuple[Any, Any]] = []
    for tool in tools:
        if isinstance(tool, BaseToolset):
            raise TypeError(
                f"the ADK adapter drives function tools and BaseTool instances; the toolset "
                f"{type(tool).__name__} lists its tools only at run time"
            )
        made, declaration = _declaration(tool)
        if declaration is None:
            raise TypeError(f"the ADK tool {made.name!r} declares no function to the model")
        out.append((made, declaration))
    return out


def fake_tools(
    tools: Iterable[Any], body: Callable[[ToolCall], Any], issued: Mapping[str, ToolCall]
) -> list[Any]:
    """A fake of each ADK tool, of the same name and declaration, whose body is ``body``.

    Parameters
    ----------
    tools : Iterable
        The agent's tools (``agent.tools``: functions or ``BaseTool`` instances).
    body : Callable[[ToolCall], Awaitable[str]]
        The harness's tool body (:meth:`Harness.tool`); what it raises, the fake
        raises, as the user's function would (ADK's ``on_tool_error_callback``
        answers it, else the invocation ends with the error).
    issued : Mapping[str, ToolCall]
        The calls the model double issued (their arguments as issued).
    """
    from google.adk.tools.base_tool import BaseTool

    class _Fake(BaseTool):
        def __init__(self, declaration: Any) -> None:
            super().__init__(name=declaration.name, description=declaration.description or "")
            self._decl = declaration

        def _get_declaration(self) -> Any:
            return self._decl

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            cid = str(getattr(tool_context, "function_call_id", "") or "")
            call = issued.get(cid) or ToolCall(cid, self.name, json.dumps(args, sort_keys=True))
            return str(await body(call))

    return [_Fake(declaration) for _, declaration in declarations(tools)]
