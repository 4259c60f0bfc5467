"""LangChain doubles for the loop harness: a chat model that asks the
:class:`~prunecheck.sim.subjects.loops.contract.Harness` what to answer, fake tools
of the user's names and schemas, and an SQLite checkpointer whose async
methods run inline.

The chat model renders every request as the OpenAI Chat Completions body
``langchain-openai`` would send for the same LangChain messages (tool-call
arguments as ``json.dumps(args, ensure_ascii=False)``, as ``ChatOpenAI``
writes them), so the judge reads exactly what a provider would receive.

Why the checkpointer is :class:`InlineSqliteSaver`, not ``AsyncSqliteSaver``:
``AsyncSqliteSaver`` runs every statement on aiosqlite's worker thread and
hands the result back with ``call_soon_threadsafe``, so when a checkpoint
write finishes relative to the harness's steps would depend on the
operating system's thread scheduler, and the harness could not tell
"every task waits on me" from "a task waits on a thread".  ``SqliteSaver``
is the same storage (the same tables, the same serializer, one committed
transaction per write, the file is the durable record); its async methods
here call the synchronous ones on the event loop's thread, so a write is
durable exactly when LangGraph's ``await aput(...)`` returns.  Every other
part of the checkpointer is LangGraph's own.

Everything here imports LangChain: this module is imported only when the
LangGraph adapter is used.  The checkpointer is in :mod:`.lc_saver` (it needs
``langgraph-checkpoint-sqlite``, which LangGraph 0.x installs did not always
have); ``lc_doubles.InlineSqliteSaver`` still names it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from prunecheck.sim.subjects.loops.contract import Harness, ToolCall, ToolSpec
from prunecheck.sim.subjects.loops.handoff import run_on_loop

__all__ = [
    "ASKS_HUMAN",
    "HarnessChatModel",
    "asks_human",
    "fake_tool",
    "inline_langsmith",
    "inline_sync_executors",
    "render_message",
    "render_messages",
    "tool_spec",
    "whole_state",
]

#: The id and arguments of the tool call a fake tool's body is running for.
_CURRENT_CALL: ContextVar[tuple[str, str]] = ContextVar("prunecheck_call", default=("", "{}"))


def _arguments(args: object) -> str:
    return json.dumps(args, ensure_ascii=False)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


async def _inline_to_thread(
    _default: Any, ctx: Any, func: Callable[..., Any], /, *args: Any, **kwargs: Any
) -> Any:
    return ctx.run(func, *args, **kwargs)


def inline_langsmith() -> None:
    """Make LangSmith's ``traceable`` run its bookkeeping on the event loop's thread.

    ``create_agent`` wraps every ``wrap_model_call`` and ``wrap_tool_call``
    middleware hook in ``langsmith.traceable``, whose async wrapper runs its
    set-up and tear-down with ``run_in_executor`` even when tracing is off:
    a thread per hook call, finishing whenever the OS schedules it.
    ``langsmith.set_runtime_overrides(aio_to_thread=...)`` is LangSmith's own
    hook for deterministic runtimes (Temporal); the harness installs it once.
    """
    import langsmith

    overrides = getattr(langsmith, "set_runtime_overrides", None)
    if overrides is not None:  # older LangSmith (with LangGraph 0.x, no middleware) has none
        overrides(aio_to_thread=_inline_to_thread)


_SYNC_POOLS: list[bool] = []


def inline_sync_executors() -> None:
    """Make the thread pools of a sync ``graph.invoke`` run inline on a handoff worker.

    A sync graph runs parallel tasks (``Send`` fan-outs, a ``ToolNode``'s
    calls) in a ``ContextThreadPoolExecutor`` from LangChain's
    ``get_executor_for_config``: free threads the harness could not order, and
    a fake tool's sync body waits on the harness only from a handoff worker
    (:func:`..handoff.run_on_loop`).  On a handoff worker the executor runs
    each task at once, on that thread; anywhere else it is LangChain's own
    (the wrapper is installed once, for the process).
    """
    if _SYNC_POOLS:
        return
    import importlib

    from langchain_core.runnables import config as lc_config

    from ..handoff import is_worker
    from ._common import InlineExecutor

    original = lc_config.get_executor_for_config

    @contextlib.contextmanager
    def get_executor_for_config(config: Any = None) -> Any:
        if not is_worker():
            with original(config) as executor:
                yield executor
            return
        yield InlineExecutor(max_workers=1)

    for name in ("langchain_core.runnables.config", "langgraph.pregel._executor",
                 "langgraph.prebuilt.tool_node"):  # fmt: skip
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module, "get_executor_for_config", None) is original:
            setattr(module, "get_executor_for_config", get_executor_for_config)  # noqa: B010
    _SYNC_POOLS.append(True)


def render_message(message: BaseMessage) -> dict[str, object]:
    """One LangChain message as an OpenAI Chat Completions message.

    Parameters
    ----------
    message : BaseMessage
        A system, human, AI or tool message.

    Returns
    -------
    dict[str, object]
        ``{"role": ..., "content": ...}``, with ``tool_calls`` on an assistant
        message that issued calls and ``tool_call_id`` on a tool message.
    """
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": _content_text(message.content)}
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": _content_text(message.content)}
    if isinstance(message, AIMessage):
        out: dict[str, object] = {"role": "assistant", "content": _content_text(message.content)}
        calls = [
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {"name": call["name"], "arguments": _arguments(call["args"])},
            }
            for call in message.tool_calls
        ]
        calls += [
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {"name": call.get("name") or "", "arguments": call.get("args") or ""},
            }
            for call in message.invalid_tool_calls
        ]
        if calls:
            out["tool_calls"] = calls
        return out
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": _content_text(message.content),
        }
    return {"role": message.type, "content": _content_text(message.content)}


def render_messages(messages: Sequence[BaseMessage]) -> list[dict[str, object]]:
    """A list of LangChain messages as OpenAI Chat Completions messages."""
    return [render_message(m) for m in messages]


def tool_spec(tool: BaseTool) -> ToolSpec:
    """The name, description and JSON schema of a LangChain tool, as the model sees it."""
    function = convert_to_openai_tool(tool)["function"]
    return ToolSpec(
        name=str(function["name"]),
        description=str(function.get("description", "")),
        parameters=dict(function.get("parameters", {})),
    )


#: The state's messages the user's own graph node was called with, while the
#: framework's plain agent runs (:func:`whole_state`): what the model is sent
#: instead of the node's own selection of them.
_NODE_STATE: ContextVar[list[Any] | None] = ContextVar("prunecheck_node_state", default=None)


def _kept(update: Any) -> Any:
    """A node's state update without the ``RemoveMessage`` s it returns under
    ``messages`` (the plain agent keeps every message: a cut of the state the
    user's node makes, as the docs' summary node's, is undone)."""
    from langchain_core.messages import RemoveMessage

    if not isinstance(update, Mapping) or not isinstance(update.get("messages"), list):
        return update
    kept = [m for m in update["messages"] if not isinstance(m, RemoveMessage)]
    return {**update, "messages": kept}


def whole_state(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a node of the user's own graph), keeping the state's messages it is
    called with where :class:`HarnessChatModel` (``whole_state=True``) finds them:
    the plain agent's model is sent the whole state, not what the node picked,
    and the messages the node removes from the state stay (:func:`_kept`)."""
    import functools
    import inspect

    def held(args: tuple[Any, ...]) -> list[Any] | None:
        state = args[0] if args else None
        found = (
            state.get("messages")
            if isinstance(state, Mapping)
            else getattr(state, "messages", None)
        )
        return list(found) if isinstance(found, list) else None

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def node(*args: Any, **kwargs: Any) -> Any:
            token = _NODE_STATE.set(held(args))
            try:
                return _kept(await fn(*args, **kwargs))
            finally:
                with contextlib.suppress(ValueError):
                    _NODE_STATE.reset(token)

        return node

    @functools.wraps(fn)
    def sync_node(*args: Any, **kwargs: Any) -> Any:
        token = _NODE_STATE.set(held(args))
        try:
            return _kept(fn(*args, **kwargs))
        finally:
            with contextlib.suppress(ValueError):
                _NODE_STATE.reset(token)

    return sync_node


class HarnessChatModel(BaseChatModel):
    """A chat model whose every answer comes from ``harness.model``.

    ``bind_tools`` keeps the OpenAI form of the tools (what
    ``ChatOpenAI.bind_tools`` sends); each call renders the messages and the
    tools as one Chat Completions body and turns the harness's
    :class:`~prunecheck.sim.subjects.loops.contract.Reply` into an ``AIMessage``.
    A synchronous call (``model.invoke`` in a sync graph node or a sync
    middleware hook, which LangGraph runs on a thread) asks the harness too:
    the thread is a handoff worker (:mod:`..handoff`) and waits, as a
    thread waits on a provider, until the schedule's reply.
    """

    harness: Any = None
    model_name: str = "prunecheck-double"
    #: Send the whole state a user's own node was called with (:func:`whole_state`),
    #: its system messages kept: the framework's plain agent of a hand-built graph.
    whole_state: bool = False

    def _sent(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        state = _NODE_STATE.get() if self.whole_state else None
        if state is None:
            return messages
        system = [m for m in messages if isinstance(m, SystemMessage)]
        return system + [m for m in state if not isinstance(m, SystemMessage)]

    @property
    def _llm_type(self) -> str:
        return "prunecheck-harness"

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: object = None,
        **kwargs: Any,
    ) -> Any:
        formatted = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return run_on_loop(self._agenerate(self._sent(messages), stop, None, **kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request: dict[str, object] = {"messages": render_messages(self._sent(messages))}
        tools = kwargs.get("tools")
        if tools:
            request["tools"] = list(tools)
        harness: Harness = self.harness
        reply = await harness.model(request)
        message = AIMessage(
            content=reply.text,
            tool_calls=[
                {"name": c.name, "args": json.loads(c.arguments or "{}"), "id": c.id}
                for c in reply.calls
            ],
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class _FakeTool(StructuredTool):
    """A ``StructuredTool`` that knows the id of the call it runs for (also
    when sync code invokes it: its sync body waits on the harness from a
    handoff worker, :mod:`..handoff`)."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        token = _CURRENT_CALL.set(_current(input))
        try:
            return super().invoke(input, config, **kwargs)
        finally:
            with contextlib.suppress(ValueError):
                _CURRENT_CALL.reset(token)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        token = _CURRENT_CALL.set(_current(input))
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            with contextlib.suppress(ValueError):  # closed by a crashed loop's teardown
                _CURRENT_CALL.reset(token)


def _current(input: Any) -> tuple[str, str]:
    if isinstance(input, Mapping) and input.get("type") == "tool_call":
        return (str(input.get("id") or ""), _arguments(input.get("args", {})))
    return ("", _arguments(input))


#: The value of the interrupt a fake of a tool that asks a human raises.
ASKS_HUMAN = "prunecheck_asks_human"


def asks_human(tool: BaseTool) -> bool:
    """Whether the user's tool pauses for a human: its function calls LangGraph's
    ``interrupt()`` (a name of its code bound to that function, in its module or
    in a closure)."""
    try:
        from langgraph.types import interrupt
    except ImportError:
        return False
    for function in (getattr(tool, "coroutine", None), getattr(tool, "func", None)):
        code = getattr(function, "__code__", None)
        if code is None:
            continue
        names = getattr(function, "__globals__", None) or {}
        if any(names.get(n) is interrupt for n in code.co_names):
            return True
        for cell in getattr(function, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell
                if cell.cell_contents is interrupt:
                    return True
    return False


def _ask_human(call_id: str) -> None:
    """What a tool that asks a human does first: LangGraph's ``interrupt()`` (the
    graph stops; on resume it returns the human's answer and the body goes on)."""
    from langgraph.types import interrupt

    interrupt({"type": ASKS_HUMAN, "tool_call_id": call_id})


def fake_tool(tool: BaseTool, harness: Harness, *, human: bool = False) -> BaseTool:
    """A tool of ``tool``'s name, description and argument schema whose body
    is ``harness.tool``.

    Parameters
    ----------
    tool : BaseTool
        The user's tool (its body is never run).
    harness : Harness
        Decides when and how every call of the fake returns.
    human : bool
        The user's tool asks a human (:func:`asks_human`): the fake calls
        ``interrupt()`` first, as it does, then its body is ``harness.tool``.

    Returns
    -------
    BaseTool
        The fake; its error handling (``handle_tool_error``,
        ``handle_validation_error``) and ``return_direct`` are the user's.
    """
    name = tool.name
    schema = tool.args_schema if tool.args_schema is not None else tool.get_input_schema()

    async def run(call_id: str, arguments: str) -> str:
        return await harness.tool(ToolCall(id=call_id, name=name, arguments=arguments))

    async def body(**_kwargs: Any) -> str:
        call_id, arguments = _CURRENT_CALL.get()
        if human:
            _ask_human(call_id)
        return await run(call_id, arguments)

    def sync_body(**kwargs: Any) -> str:
        call_id, arguments = _CURRENT_CALL.get()
        if human:  # in the graph's own context, before the harness's loop takes over
            _ask_human(call_id)
        return run_on_loop(run(call_id, arguments))

    return _FakeTool(
        name=name,
        description=tool.description,
        args_schema=schema,
        func=sync_body,
        coroutine=body,
        return_direct=tool.return_direct,
        handle_tool_error=tool.handle_tool_error,
        handle_validation_error=tool.handle_validation_error,
        response_format="content",
    )


def __getattr__(name: str) -> Any:
    """``InlineSqliteSaver``, from :mod:`.lc_saver` (imported when asked for)."""
    if name == "InlineSqliteSaver":
        from .lc_saver import InlineSqliteSaver

        return InlineSqliteSaver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
