"""The OpenAI Agents SDK's ``Runner`` driven through its own loop (issue 21).

The user's ``Agent`` and ``RunConfig`` run as configured — the run config's
``call_model_input_filter``, ``session_input_callback`` and
``session_settings`` (the SDK's trimming hooks), the tools' ``needs_approval``,
``timeout_seconds``, failure handlers and tool output guardrails (a
guardrail that replaces an output is the configuration's trimming) — with
two substitutions at the SDK's own boundaries:

- the model is a ``Model`` (the SDK's provider-neutral interface, set as
  ``RunConfig.model`` so that it serves every agent of the run) which renders
  the Responses input items it is handed with the SDK's own Chat Completions
  converter (``Converter.items_to_messages``, what ``OpenAIChatCompletionsModel``
  sends), asks :meth:`Harness.model` and answers with the scripted message and
  parallel ``function_call`` items;
- every ``FunctionTool`` of the agent is a copy whose ``on_invoke_tool`` calls
  :meth:`Harness.tool`, rebound to the original's failure handler: name, JSON
  schema, approval, timeout and error-as-result behaviour are the user's.

**Durable persistence** is the session the application passes: a factory
may return ``(agent, run_config, session)``.  A ``SQLiteSession``, or the
user's subclass of it (its ``get_items``/``add_items`` overrides and
attributes kept: :func:`session_on_store`), runs on
``<store>/openai-agents-session.sqlite`` (in memory if the user's was: a crash
loses it); another session class is used as the user's object.  Without one,
the SDK's ``SQLiteSession`` on the store.  What the runner wrote there is what
a crash keeps.  A user's session class that overrides ``get_items`` trims: the
trimming scenario class applies.  The session's ``asyncio.to_thread`` work
runs on the harness's handoff threads (:mod:`..handoff`), in the schedule's
order.

**Cancel** is ``RunResultStreaming.cancel()`` (the turn runs
``Runner.run_streamed``; ``cancel_mode`` chooses ``"immediate"``, the SDK's
default, or ``"after_turn"``).  There is no resume of a crashed run: the SDK
resumes only a ``RunState`` the application kept from an interruption, so
after a crash the loop offers a **new message** on the same session.
**Approval**: a run that ends with ``interruptions`` waits; once every pending
call is answered, ``RunState.approve``/``reject`` and ``Runner.run_streamed(agent,
state)`` continue it.

**Other agents of the user's module** (a summarizer ``Agent`` the user's
filter or session runs with ``Runner.run``, on its own model string) run on
a model double too (:func:`_answer_aside`): each of their model calls is a
side request (no tools offered) the schedule answers with a text, or fails
with a ``model_error`` step (the summarizer raises, as a provider's error),
as pydantic-ai's other agents do; none reaches a provider.

A target is an ``Agent``, or a factory returning one or ``(agent, run_config)``.
Needs ``pip install 'prunecheck[loops]'``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Reply, ToolCall, ToolSpec
from ..versions import Needs, Supported
from ._common import build_target, inline_executor
from .model_providers import ModelProvider, model_provider

__all__ = ["SUPPORTED", "OpenAIAgentsAdapter", "render_items"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("openai-agents", "0.8.0", "0.25"),),
    tested=("0.8.0", "0.24.0"),
    oldest_pins=("openai-agents==0.8.0", "openai==2.9.0"),
)

_FILE = "openai-agents-session.sqlite"
_SESSION = "prunecheck"


def _is_agent(obj: object) -> bool:
    from agents import Agent

    return isinstance(obj, Agent)


def _is_session(obj: object) -> bool:
    from agents.memory import Session, SessionABC

    return isinstance(obj, SessionABC | Session) and not _is_agent(obj)


def _target(target: object) -> tuple[Any, Any, Any] | None:
    """``(agent, run_config, session or None)`` of ``target``, or None if it is not the SDK's.

    A factory may return the agent alone, ``(agent, run_config)``, or the
    three the application passes to ``Runner.run``: ``(agent, run_config,
    session)`` (the run config may be None).
    """
    from_target = build_target(target, "agents", _is_agent)
    if from_target is None:
        return None
    parts = list(from_target) if isinstance(from_target, tuple) else [from_target]
    from agents import RunConfig

    agent = parts[0]
    config = next((p for p in parts[1:] if isinstance(p, RunConfig)), None) or RunConfig()
    session = next((p for p in parts[1:] if _is_session(p)), None)
    return agent, config, session


def _need(target: object) -> tuple[Any, Any, Any]:
    found = _target(target)
    if found is None:
        raise TypeError(
            f"{target!r}: the OpenAI Agents SDK adapter drives an Agent; this is not one, nor "
            "a function of no argument returning one, (agent, run_config) or (agent, "
            "run_config, session). Hint: point at the Agent (file.py:agent) or at a factory "
            "returning it with its RunConfig and Session."
        )
    return found


def _own_session_class(session: Any) -> bool:
    """Whether ``session`` is the user's own class (not one the SDK ships)."""
    return type(session).__module__.split(".")[0] != "agents"


def trims_in_session(session: Any) -> bool:
    """Whether the user's session rewrites what it hands the runner (its own ``get_items``)."""
    from agents import SQLiteSession

    if session is None or not _own_session_class(session):
        return False
    if isinstance(session, SQLiteSession):
        return type(session).get_items is not SQLiteSession.get_items
    return True


def session_on_store(session: Any, path: Path) -> Any:
    """The session a process of the loop runs on: the user's, as written, on the store.

    None: the SDK's ``SQLiteSession`` on ``path``.  A ``SQLiteSession`` (or a
    subclass of the user's: its methods and attributes kept) is a copy
    re-initialised by ``SQLiteSession.__init__`` on ``path`` (or in memory,
    as the user's was: a crash then loses it), with the user's session id
    and table names.  Any other session is the user's object itself.
    """
    from agents import SQLiteSession

    if session is None:
        return SQLiteSession(_SESSION, db_path=path)
    if not isinstance(session, SQLiteSession):
        return session
    fresh = copy.copy(session)
    where: Any = ":memory:" if str(session.db_path) == ":memory:" else path
    SQLiteSession.__init__(
        fresh,
        session.session_id,
        where,
        sessions_table=session.sessions_table,
        messages_table=session.messages_table,
        session_settings=session.session_settings,
    )
    return fresh


def _function_tools(agent: Any) -> list[Any]:
    from agents import FunctionTool

    return [t for t in agent.tools if isinstance(t, FunctionTool)]


def _output_guardrails(agent: Any) -> list[Any]:
    """The tool output guardrails of the agent's function tools: each runs after
    its tool returns, and one answering ``reject_content(message)`` has the SDK
    send the model that message as the call's output (the user's code
    rewriting a tool's output on its way to the history)."""
    return [
        g for t in _function_tools(agent) for g in getattr(t, "tool_output_guardrails", None) or []
    ]


@dataclass(slots=True)
class OpenAIAgentsAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of the OpenAI Agents SDK.

    Attributes
    ----------
    cancel_mode : str
        ``RunResultStreaming.cancel(mode=...)``: ``"immediate"`` (the SDK's
        default) or ``"after_turn"``.
    plain : bool
        Open the framework's plain agent (:meth:`without_trimming`).
    """

    cancel_mode: str = "immediate"
    plain: bool = False
    framework: str = field(default="openai-agents", init=False)
    supported: ClassVar[Supported] = SUPPORTED
    #: Another agent of the user's module (a summarizer) asks the harness: its request
    #: may fail (``model_error``).
    model_faults: ClassVar[bool] = True

    def without_trimming(self) -> OpenAIAgentsAdapter:
        """This adapter opening the framework's plain agent: the user's agent
        with a ``RunConfig`` without its model-input filter, session input
        callback and session settings (a limit), its function tools without
        their tool output guardrails."""
        return replace(self, plain=True)

    def accepts(self, target: object) -> bool:
        return _target(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        agent, _, _ = _need(target)
        return [
            ToolSpec(t.name, t.description or "", dict(t.params_json_schema))
            for t in _function_tools(agent)
        ]

    def capabilities(self, target: object) -> frozenset[Capability]:
        from .budgets import openai_agents_limit

        agent, config, session = _need(target)
        caps = {Capability.CANCEL, Capability.CRASH_NEW_MESSAGE}
        tools = _function_tools(agent)
        if any(t.needs_approval is not False for t in tools):
            caps.add(Capability.INTERRUPT)
        if not self.plain and (
            config.call_model_input_filter is not None
            or config.session_input_callback is not None
            or openai_agents_limit(config, session) is not None
            or trims_in_session(session)
            or _output_guardrails(agent)
        ):
            caps.add(Capability.TRIM_HOOK)
        if any(getattr(t, "timeout_seconds", None) is not None for t in tools):  # 0.9.0+
            caps.add(Capability.TOOL_TIMEOUT)
        return frozenset(caps)

    def budget(self, target: object) -> Any:
        """``RunConfig.session_settings.limit`` (items), or the count of items
        its ``call_model_input_filter`` starts cutting at (probed), else the
        threshold on one tool output a tool output guardrail reads as a module
        constant (:func:`~..reach.hook_budget`)."""
        from ..reach import hook_budget
        from .budgets import openai_agents_budget

        agent, config, session = _need(target)
        found = openai_agents_budget(config, agent, session)
        if found is not None:
            return found
        hooks = (hook_budget(g, "tool output guardrail") for g in _output_guardrails(agent))
        return next((b for b in hooks if b is not None), None)

    def provider(self, target: object) -> ModelProvider:
        """The provider the agent's model talks to: the run config's model, else
        the agent's; a model name without a prefix (or none) on the SDK's OpenAI
        provider, whose default API is Responses (``set_default_openai_api`` or
        the run config's provider may say Chat Completions); ``litellm/…`` by
        the provider LiteLLM is told; a ``Model`` by its class (``OpenAIChatCompletionsModel``:
        Chat Completions; ``LitellmModel``: its model string's prefix)."""
        agent, config, _ = _need(target)
        api = _default_api(config)
        model = config.model if config.model is not None else agent.model
        if isinstance(model, str) and model.startswith("litellm/"):
            held = model_provider(model.removeprefix("litellm/"))
            return ModelProvider(held.names, f"LiteLLM, {held.source}")
        if model is None or (isinstance(model, str) and "/" not in model.removeprefix("openai/")):
            what = f"model {model!r}" if model else "the SDK's default model"
            said = "Responses API" if api == "openai-responses" else "Chat Completions API"
            return ModelProvider(frozenset({api}), f"{what} on the SDK's OpenAI provider, "
                                 f"whose API is the {said}")  # fmt: skip
        return model_provider(model, default=api)

    def providers(self, target: object) -> frozenset[str]:
        """The providers whose rules judge the requests (:meth:`provider`)."""
        return self.provider(target).names

    def open(self, target: object, harness: Harness) -> _AgentsLoop:
        agent, config, session = _need(target)
        if self.plain:  # the framework's plain agent: nothing of the user's on the history's path
            config = replace(config, call_model_input_filter=None, session_input_callback=None,
                             session_settings=None)  # fmt: skip
            session = None
        _answer_aside(_other_agents(target, agent))
        return _AgentsLoop(agent, config, session, harness, self.cancel_mode,
                           guarded=not self.plain)  # fmt: skip

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        from ._common import provider_says
        from .openai_agents_repro import script_text

        return script_text(target_spec, schedule_json, folder=folder, cancel_mode=self.cancel_mode,
                           says=provider_says(self, target_spec, schedule_json))  # fmt: skip


def _default_api(config: Any) -> str:
    """The API the SDK's OpenAI provider speaks for a model name: the run config's
    provider's setting, else the SDK's default (``set_default_openai_api``)."""
    provider = getattr(config, "model_provider", None)
    openai = getattr(provider, "openai_provider", provider)
    use = getattr(openai, "_use_responses", None)
    if not isinstance(use, bool):
        from agents.models._openai_shared import get_use_responses_by_default

        use = get_use_responses_by_default()
    return "openai-responses" if use else "openai"


def render_items(items: Any, instructions: str | None) -> list[dict[str, object]]:
    """Responses input items as OpenAI Chat Completions messages, by the
    SDK's own converter (the instructions first, as a system message)."""
    from agents.models.chatcmpl_converter import Converter

    messages = [dict(m) for m in Converter.items_to_messages(items)]
    if instructions:
        messages.insert(0, {"role": "system", "content": instructions})
    return messages


def _other_agents(target: object, agent: Any) -> list[Any]:
    """The other ``Agent`` s of the user's module (a summarizer its filter runs)."""
    from agents import Agent

    from ..reach import user_module

    module = user_module(target)
    if module is None:
        return []
    found = {id(v): v for v in vars(module).values() if isinstance(v, Agent) and v is not agent}
    return list(found.values())


#: The loop whose turn runs in this context: the one a side double asks.
_CURRENT: ContextVar[_AgentsLoop | None] = ContextVar("prunecheck_openai_agents_loop", default=None)


def _answer_aside(agents: list[Any]) -> None:
    """Make each of ``agents`` (the user's other agents) run on a side double:
    its ``model`` becomes a ``Model`` that asks the harness of the loop whose
    turn is running (:data:`_CURRENT`) with a side request (no tools), as a
    summarizer's call (idempotent; no agent of this check reaches a provider).
    A call outside any loop's turn (prunecheck's probes) raises."""
    for other in agents:
        if not getattr(other.model, "prunecheck_aside", False):
            other.model = _side_double()


def _side_double() -> Any:
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseOutputMessage, ResponseOutputText

    class PrunecheckSideModel(Model):
        prunecheck_aside = True

        async def get_response(
            self, system_instructions: str | None, input: Any, *_: Any, **__: Any
        ) -> Any:
            loop = _CURRENT.get()
            if loop is None:
                raise RuntimeError("a summarizer's model call outside the loop under test")
            given = [{"role": "user", "content": input}] if isinstance(input, str) else input
            reply: Reply = await loop.harness.model(
                {"messages": render_items(given, system_instructions)}
            )
            text = reply.text or "summary of the conversation so far"
            message = ResponseOutputMessage(
                id="msg_aside", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
            )  # fmt: skip
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            raise NotImplementedError("a summarizer run streamed is not answered")
            yield  # pragma: no cover - an async generator

    return PrunecheckSideModel()


class _Double:
    """The model double: an ``agents.models.interface.Model``."""

    @staticmethod
    def make(loop: _AgentsLoop) -> Any:
        from agents.items import ModelResponse
        from agents.models.chatcmpl_converter import Converter
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import (
            Response,
            ResponseCompletedEvent,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )

        class PrunecheckModel(Model):
            async def _output(self, instructions: str | None, input: Any, tools: Any) -> list[Any]:
                specs = []
                for tool in tools:
                    try:
                        specs.append(dict(Converter.tool_to_openai(tool)))
                    except Exception:  # hosted tools have no Chat Completions form
                        continue
                request = {"messages": render_items(input, instructions), "tools": specs}
                reply: Reply = await loop.harness.model(request)
                loop.replies += 1
                out: list[Any] = []
                if reply.text or not reply.calls:
                    out.append(
                        ResponseOutputMessage(
                            id=f"msg_{loop.replies}",
                            type="message",
                            role="assistant",
                            status="completed",
                            content=[
                                ResponseOutputText(
                                    type="output_text", text=reply.text, annotations=[]
                                )
                            ],
                        )
                    )
                for call in reply.calls:
                    loop.issued[call.id] = call
                    out.append(
                        ResponseFunctionToolCall(
                            id=f"fc_{call.id}",
                            type="function_call",
                            call_id=call.id,
                            name=call.name,
                            arguments=call.arguments,
                            status="completed",
                        )
                    )
                return out

            async def get_response(
                self, system_instructions: str | None, input: Any, model_settings: Any,
                tools: Any, output_schema: Any, handoffs: Any, tracing: Any, **_: Any,
            ) -> Any:  # fmt: skip
                output = await self._output(system_instructions, input, tools)
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            async def stream_response(
                self, system_instructions: str | None, input: Any, model_settings: Any,
                tools: Any, output_schema: Any, handoffs: Any, tracing: Any, **_: Any,
            ) -> AsyncIterator[Any]:  # fmt: skip
                output = await self._output(system_instructions, input, tools)
                response = Response(
                    id=f"resp_{loop.replies}",
                    created_at=0,
                    model="prunecheck-double",
                    object="response",
                    output=output,
                    parallel_tool_calls=True,
                    tool_choice="auto",
                    tools=[],
                )
                yield ResponseCompletedEvent(
                    type="response.completed", response=response, sequence_number=0
                )

        return PrunecheckModel()


def _fake_tool(tool: Any, loop: _AgentsLoop, *, guarded: bool = True) -> Any:
    """A copy of ``tool`` whose body calls the harness (failure handling kept;
    its tool output guardrails too unless not ``guarded``: the plain agent's)."""
    from agents import tool as agents_tool

    async def body(ctx: Any, arguments: str) -> str:
        call_id = str(getattr(ctx, "tool_call_id", "") or "")
        call = loop.issued.get(call_id) or ToolCall(call_id, tool.name, arguments)
        return await loop.harness.tool(call)

    invoker_type = getattr(agents_tool, "_FailureHandlingFunctionToolInvoker", None)
    original = tool.on_invoke_tool
    invoke: Any = body
    if invoker_type is not None and isinstance(original, invoker_type):
        invoke = invoker_type(body, original._on_handled_error)
    elif invoker_type is None:  # older releases (0.8): the handler is in the closure
        handler = _closure_value(original, "failure_error_function")
        if handler is not None:
            invoke = _handled(body, handler)
    if not guarded and getattr(tool, "tool_output_guardrails", None):
        return dataclasses.replace(tool, on_invoke_tool=invoke, tool_output_guardrails=None)
    return dataclasses.replace(tool, on_invoke_tool=invoke)


def _closure_value(function: Any, name: str) -> Any:
    """The value of free variable ``name`` of ``function`` (None if it has none)."""
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    if code is None or name not in code.co_freevars:
        return None
    try:
        return cells[code.co_freevars.index(name)].cell_contents
    except (IndexError, ValueError):  # an empty cell
        return None


def _handled(body: Any, handler: Any) -> Any:
    """``body`` with ``function_tool``'s failure handling of older releases (0.8): an
    exception becomes ``failure_error_function(ctx, error)``, the text the model is sent."""
    import inspect

    async def invoke(ctx: Any, arguments: str) -> Any:
        try:
            return await body(ctx, arguments)
        except Exception as exc:
            result = handler(ctx, exc)
            return await result if inspect.isawaitable(result) else result

    return invoke


@contextmanager
def _connection(session: Any) -> Iterator[sqlite3.Connection]:
    """The session's own connection, under its lock (``_locked_connection`` since 0.14;
    before, ``_get_connection`` with the lock its methods take)."""
    locked = getattr(session, "_locked_connection", None)
    if locked is not None:
        with locked() as conn:
            yield conn
        return
    with session._lock:
        yield session._get_connection()


def _witnessing(user_filter: Any, harness: Harness) -> Any:
    """The user's ``call_model_input_filter`` as written, called after telling
    the harness what the run holds (the input the filter is given): a unit
    the filter drops whole from the request is one the loop still holds."""
    if user_filter is None:
        return None

    def witnessed(data: Any) -> Any:
        model_data = data.model_data
        harness.holds(render_items(list(model_data.input), model_data.instructions))
        return user_filter(data)

    return witnessed


class _AgentsLoop:
    """One live instance of the user's agent (see the module docstring)."""

    def __init__(
        self, agent: Any, config: Any, session: Any, harness: Harness, cancel_mode: str,
        *, guarded: bool = True,
    ) -> None:  # fmt: skip
        from agents import set_tracing_disabled

        set_tracing_disabled(True)
        self.harness = harness
        self.issued: dict[str, ToolCall] = {}
        self.replies = 0
        self._cancel_mode = cancel_mode
        self._path = Path(harness.store) / _FILE
        model = _Double.make(self)
        fakes = {id(t): _fake_tool(t, self, guarded=guarded) for t in _function_tools(agent)}
        self._agent = agent.clone(tools=[fakes.get(id(t), t) for t in agent.tools])
        self._config = dataclasses.replace(
            config,
            model=model,
            tracing_disabled=True,
            call_model_input_filter=_witnessing(config.call_model_input_filter, harness),
        )
        self._session = session_on_store(session, self._path)
        self._result: Any = None
        self._pending: dict[str, bool | None] = {}

    async def _drive(self, given: Any) -> None:
        from agents import Runner

        inline_executor()
        _CURRENT.set(self)  # the turn's own context: its summarizer's calls ask this loop
        result = Runner.run_streamed(
            self._agent, given, session=self._session, run_config=self._config
        )
        self._result = result
        async for _event in result.stream_events():
            pass
        for item in result.interruptions:
            call_id = str(getattr(item.raw_item, "call_id", "") or "")
            self._pending[call_id] = None
            self.harness.awaiting_approval(call_id)

    async def send(self, text: str) -> None:
        await self._drive(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        if self._result is not None and not self._result.is_complete:
            self._result.cancel(mode=self._cancel_mode)
        else:
            turn.cancel()

    async def resume(self) -> None:
        raise NotImplementedError(
            "the OpenAI Agents SDK resumes only a RunState kept from an interruption; "
            "after a crash, send a new message on the session"
        )

    async def approve(self, call_id: str, approved: bool) -> None:
        if call_id not in self._pending or self._result is None:
            raise KeyError(f"no approval of {call_id!r} is pending")
        self._pending[call_id] = approved
        if any(v is None for v in self._pending.values()):
            return
        state = self._result.to_state()
        for item in self._result.interruptions:
            call_id = str(getattr(item.raw_item, "call_id", "") or "")
            if self._pending.get(call_id):
                state.approve(item)
            else:
                state.reject(item)
        self._pending.clear()
        await self._drive(state)

    def history(self) -> list[dict[str, object]]:
        """The session's stored items (all of them, as written), rendered.

        A SQLite session is read through its own connection; another kind of
        session cannot be read without the loop: nothing (no witness).
        """
        from agents import SQLiteSession

        session = self._session
        if not isinstance(session, SQLiteSession):
            return []
        try:
            with _connection(session) as conn:
                rows = conn.execute(
                    f"SELECT message_data FROM {session.messages_table} "
                    "WHERE session_id = ? ORDER BY id",
                    (session.session_id,),
                ).fetchall()
        except (sqlite3.Error, RuntimeError):  # no table yet, or the session is closed
            return []
        return render_items([json.loads(r[0]) for r in rows], None)

    def abandon(self) -> None:
        """Drop the turn's result and close the session if it can be closed.

        The result goes first: it holds the turn's task, and the SDK's
        registry of running agents (``agent_tool_configuration``) holds this
        loop until the turn's ``finally`` clauses run.  Kept, the task lived
        until the interpreter's exit, which closed its coroutine outside its
        own context: the SDK's ``finally`` clauses then printed "Exception
        ignored ... was created in a different Context" tracebacks under the
        verdict.  Dropped, the run's debris is collected with the run, quietly.
        A session needs no ``close`` (``SessionABC`` has none: a user's list
        session raised ``AttributeError`` here, before the result was dropped);
        an async one cannot run off the loop and is not run.
        """
        self._result = None
        close = getattr(self._session, "close", None)
        if callable(close):
            closing = close()
            if asyncio.iscoroutine(closing):
                closing.close()
