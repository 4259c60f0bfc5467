"""pydantic-ai's ``Agent`` driven through its own loop (issue 21).

The user's agent runs as configured — its capabilities (``ProcessHistory``
history processors, ``Hooks``, capabilities of the user's own: each of them at
a hook that can rewrite a model request's messages is a trim hook,
:func:`request_hooks`), tool timeouts, ``requires_approval`` tools and output
types — with two substitutions made at pydantic-ai's own boundaries:

- the model is a ``FunctionModel`` whose function renders the messages it is
  handed (after the history processors and pydantic-ai's own history repair:
  what a provider would receive) as an OpenAI Chat Completions body, asks
  :meth:`Harness.model` and answers with the scripted text and parallel calls;
- every tool keeps its ``ToolDefinition`` (name, JSON schema, timeout,
  approval kind): a ``WrapperToolset`` around each of the agent's toolsets
  swaps the tool's ``call_func`` for a fake calling :meth:`Harness.tool`, so
  pydantic-ai's own argument validation and ``anyio.fail_after`` tool timeout
  still wrap the body;
- every other ``Agent`` of the user's module (a summarizer on its own provider
  string, run by a history processor) runs on a model double too: its call is a
  side request (no tools offered) the schedule answers with a text, or fails
  with a ``model_error`` step (the summarizer raises, as a provider's error).

**Durable persistence.** pydantic-ai keeps a conversation as the
``all_messages()`` the application stores and passes back as
``message_history``.  The loop plays a careful application: it writes the
history (``ModelMessagesTypeAdapter`` JSON, ``<store>/pydantic-ai-messages.json``)
after every node of ``agent.iter`` (:attr:`Persist.NODE`, the pattern of
pydantic-ai's durable-execution docs) or once per run (:attr:`Persist.RUN`),
and on ``RunCancelled`` the history that exception carries.  "Durably written"
is that file: a crash keeps what it held at the last write.

**Cancel** is ``AgentRun.cancel()`` (first-party: the run's task is cancelled,
tool tasks drained, and ``RunCancelled`` carries the completed work).
**Resume** after a crash is ``agent.iter(None, message_history=saved)`` (the
run executes the saved history's unanswered calls); a **new message** is
``agent.iter(text, message_history=saved)``.  **Approval**: a run ending in
``DeferredToolRequests`` waits; when every pending call is answered the run
continues with ``deferred_tool_results``.

Needs ``pip install 'prunecheck[loops]'`` (pydantic-ai-slim only).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Reply, ToolCall, ToolSpec
from ..offline import offline
from ..versions import Needs, Supported
from ._common import build_target, inline_executor
from .model_providers import ModelProvider, model_provider

__all__ = ["SUPPORTED", "Persist", "PydanticAIAdapter", "render_messages"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("pydantic-ai-slim", "2.9.1", "3"),),
    tested=("2.9.1", "2.68.0"),
    oldest_pins=("pydantic-ai-slim==2.9.1",),
)

_FILE = "pydantic-ai-messages.json"


class Persist(StrEnum):
    """When the application writes ``all_messages()`` to its store."""

    NODE = "node"
    """After every node of ``agent.iter`` (and at the end of the run)."""
    RUN = "run"
    """Once the run returns, or is cancelled."""


def _pa() -> Any:
    import pydantic_ai

    return pydantic_ai


def _agent(target: object) -> Any:
    """The ``Agent`` of ``target`` (an agent, or a factory called once), or None."""
    return build_target(target, "pydantic_ai", lambda obj: isinstance(obj, _pa().Agent))


class _NeverRaised(Exception):
    """Caught where a release has no ``RunCancelled`` (before 2.37.0): never raised."""


def _run_cancelled() -> type[BaseException] | None:
    """pydantic-ai's ``RunCancelled`` (2.37.0+, with ``AgentRun.cancel()``), or None."""
    from pydantic_ai import exceptions

    found = getattr(exceptions, "RunCancelled", None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _cancellable() -> bool:
    """Whether this release cancels a run (``AgentRun.cancel()``); before 2.37.0 it does
    not, and the cancellation class does not apply."""
    from pydantic_ai.agent import AgentRun

    return _run_cancelled() is not None and hasattr(AgentRun, "cancel")


def _function_toolsets(agent: Any) -> list[Any]:
    from pydantic_ai.toolsets import FunctionToolset

    return [ts for ts in agent.toolsets if isinstance(ts, FunctionToolset)]


def _capabilities_of(agent: Any) -> list[Any]:
    found: list[Any] = []
    agent.root_capability.apply(found.append)
    return found


#: A capability's hooks that can rewrite the messages a model request sends
#: (pydantic-ai's docs: ``before_model_request`` runs the history processors,
#: ``prepare_model_request`` is "the hook for ... compaction, context-window
#: fitting", ``wrap_model_request`` can hand on another request).
REQUEST_HOOKS = ("before_model_request", "prepare_model_request", "wrap_model_request")


def _framework_base(kind: type) -> type:
    """The nearest class of ``kind``'s bases (``kind`` itself included) that
    pydantic-ai defines."""
    return next(c for c in kind.__mro__ if c.__module__.split(".")[0] == "pydantic_ai")


def request_hooks(cap: Any) -> list[str]:
    """The hooks at which ``cap`` runs the user's code on a model request's
    messages (:data:`REQUEST_HOOKS`): a ``ProcessHistory`` (its processor), a
    ``Hooks`` with a function registered at one of them, a capability of the
    user's own class overriding one.  pydantic-ai's own capabilities (its
    tool search, its pending-message drain) are none."""
    from pydantic_ai.capabilities import ProcessHistory

    if isinstance(cap, ProcessHistory):
        return ["before_model_request"]
    registry = getattr(cap, "_registry", None)  # a Hooks (2.4x+): its registered functions
    hooks = {h for h in REQUEST_HOOKS if isinstance(registry, dict) and registry.get(h)}
    base = _framework_base(type(cap))
    if base is not type(cap):  # the user's subclass: the hooks it overrides
        hooks |= {
            h for h in REQUEST_HOOKS if getattr(type(cap), h, None) is not getattr(base, h, None)
        }
    return [h for h in REQUEST_HOOKS if h in hooks]


def trims(agent: Any) -> bool:
    """Whether the user's code rewrites the agent's model requests (:func:`request_hooks`)."""
    return any(request_hooks(c) for c in _capabilities_of(agent))


@dataclass(slots=True)
class PydanticAIAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of pydantic-ai.

    Attributes
    ----------
    persist : Persist
        When the application saves the history (see the module docstring).
    repair_on_new_message : bool
        Whether the application follows pydantic-ai's advice for a history
        with unanswered calls and a new prompt (``repair_messages()`` first);
        without it, pydantic-ai refuses the new prompt with a ``UserError``.
    plain : bool
        Open the framework's plain agent: the user's agent with its
        ``ProcessHistory`` processors passing the history through unchanged
        (:meth:`without_trimming`, for whose failure a finding is).
    """

    persist: Persist = Persist.NODE
    repair_on_new_message: bool = False
    plain: bool = False
    framework: str = field(default="pydantic-ai", init=False)
    supported: ClassVar[Supported] = SUPPORTED
    #: Another agent of the user's module (a summarizer) asks the harness: its request
    #: may fail (``model_error``).
    model_faults: ClassVar[bool] = True

    def without_trimming(self) -> PydanticAIAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return replace(self, plain=True)

    def accepts(self, target: object) -> bool:
        return _agent(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        agent = _need(target)
        out: list[ToolSpec] = []
        for ts in _function_toolsets(agent):
            for tool in ts.tools.values():
                d = tool.tool_def
                out.append(ToolSpec(d.name, d.description or "", dict(d.parameters_json_schema)))
        return out

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Crash (resume, new message) always; cancel from 2.37.0; an interrupt for a
        tool requiring approval; the trim hook when the user's code runs at a hook
        rewriting a model request (:func:`trims`); a tool timeout when one is set."""
        agent = _need(target)
        caps = {Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        if _cancellable():  # AgentRun.cancel() and RunCancelled: 2.37.0+
            caps.add(Capability.CANCEL)
        tools = [t for ts in _function_toolsets(agent) for t in ts.tools.values()]
        if any(t.requires_approval for t in tools):
            caps.add(Capability.INTERRUPT)
        if not self.plain and trims(agent):
            caps.add(Capability.TRIM_HOOK)
        timeouts = [agent._tool_timeout, *(ts.timeout for ts in _function_toolsets(agent))]
        if any(t is not None for t in [*timeouts, *(t.timeout for t in tools)]):
            caps.add(Capability.TOOL_TIMEOUT)
        return frozenset(caps)

    def provider(self, target: object) -> ModelProvider:
        """The provider the agent's model talks to (:func:`.model_providers.model_provider`):
        the model's class (``OpenAIResponsesModel``, ``OpenAIChatModel``,
        ``AnthropicModel``…); for a model string the agent keeps
        (``defer_model_check=True``), the class pydantic-ai builds for it
        (:func:`string_provider`)."""
        model = getattr(_need(target), "model", None)
        return string_provider(model) if isinstance(model, str) else model_provider(model)

    def providers(self, target: object) -> frozenset[str]:
        """The providers whose rules judge the requests (:meth:`provider`)."""
        return self.provider(target).names

    def open(self, target: object, harness: Harness) -> _PydanticAILoop:
        return _PydanticAILoop(_need(target), harness, self, _other_agents(target))

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A standalone script of ~50 lines on pydantic-ai alone (:mod:`.pydantic_ai_repro`)."""
        from ..target import load_target
        from .pydantic_ai_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        return script_text(self, target, target_spec, schedule_json, folder=folder,
                           persist_every_node=self.persist is Persist.NODE,
                           repair_on_new_message=self.repair_on_new_message)  # fmt: skip


def _other_agents(target: object) -> list[Any]:
    """The other pydantic-ai ``Agent`` s of the user's module (a summarizer
    ``Agent("openai:gpt-4o-mini")`` a history processor runs): each runs on a
    model double that asks the harness, as a side request (no tools offered),
    never on its provider."""
    from pydantic_ai import Agent

    from ..reach import user_module

    agent = _agent(target)
    module = user_module(target)
    if module is None:
        return []
    found = {id(v): v for v in vars(module).values() if isinstance(v, Agent) and v is not agent}
    return list(found.values())


@functools.lru_cache(maxsize=64)
def string_provider(name: str) -> ModelProvider:
    """The provider of a pydantic-ai model string: the class pydantic-ai's
    ``infer_model`` builds for it (``openai:`` is the Responses API from
    pydantic-ai 1.x on, ``openai-chat:`` Chat Completions), built offline on
    placeholder keys (:func:`..offline.offline`); the string's prefix when it
    cannot be built (a package or a region missing)."""
    from pydantic_ai.models import infer_model

    try:
        with offline():
            built = infer_model(name)
    except Exception:  # the provider's package or setting is missing: read the prefix
        return model_provider(name)
    found = model_provider(built)
    return ModelProvider(found.names, f"model string {name!r}, which pydantic-ai builds as "
                         f"{found.source}")  # fmt: skip


def _need(target: object) -> Any:
    agent = _agent(target)
    if agent is None:
        raise TypeError(
            f"{target!r}: the pydantic-ai adapter drives an Agent; this is not one, nor a "
            "function of no argument returning one. Hint: point at the Agent object "
            "(file.py:agent) or at a factory building it."
        )
    return agent


#: The loop whose run is in this context: told each rewrite of pydantic-ai's
#: history repair (:func:`_observe_repairs`).
_OBSERVER: ContextVar[Callable[[str, list[Any], list[Any]], None] | None] = ContextVar(
    "prunecheck_pydantic_ai_repairs", default=None
)

#: pydantic-ai's history repair, as its graph calls it (``pydantic_ai._agent_graph``'s
#: module globals): the cleaning pipeline before every model request and at a
#: run's start (since 2.10 it drops tool results whose call is gone and answers
#: a call left without a result), and the repair of an interrupted tail.
_REPAIRS = ("_clean_message_history", "_repair_dangling_tool_calls")
_LAYER = "pydantic-ai's history repair"


def _observe_repairs() -> None:
    """Wrap pydantic-ai's repair functions where its graph calls them, once per
    process, so that the loop running in the current context (:data:`_OBSERVER`)
    sees each history before and after: the framework's own code still does the
    repair; outside a loop's run the wrapper only passes the call through."""
    try:
        from pydantic_ai import _agent_graph as graph
    except ImportError:  # pragma: no cover - every supported release has it
        return
    for name in _REPAIRS:
        original = getattr(graph, name, None)
        if original is None or getattr(original, "__prunecheck_observed__", False):
            continue

        def observed(messages: Any, *args: Any, __original: Any = original, **kw: Any) -> Any:
            before = list(messages)
            after = __original(messages, *args, **kw)
            tell = _OBSERVER.get()
            if tell is not None:
                tell(_LAYER, before, list(after))
            return after

        observed.__prunecheck_observed__ = True  # type: ignore[attr-defined]
        observed.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(graph, name, observed)


def render_messages(messages: list[Any], instructions: str | None) -> list[dict[str, object]]:
    """pydantic-ai messages as OpenAI Chat Completions messages.

    Parameters
    ----------
    messages : list[ModelMessage]
        What the model is handed (``ModelRequest`` / ``ModelResponse``).
    instructions : str or None
        The agent's instructions, sent first as a system message.

    Returns
    -------
    list[dict[str, object]]
        ``system`` / ``user`` / ``assistant`` (``tool_calls``) / ``tool``
        messages, parts in their order; a retry prompt for a tool call is that
        call's ``tool`` message.
    """
    from pydantic_ai import messages as pm

    out: list[dict[str, object]] = []
    if instructions:
        out.append({"role": "system", "content": instructions})
    for message in messages:
        if isinstance(message, pm.ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, pm.TextPart))
            calls = [
                {
                    "id": p.tool_call_id,
                    "type": "function",
                    "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
                }
                for p in message.parts
                if isinstance(p, pm.ToolCallPart)
            ]
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        for part in message.parts:
            if isinstance(part, pm.SystemPromptPart):
                out.append({"role": "system", "content": part.content})
            elif isinstance(part, pm.UserPromptPart):
                content = part.content
                text = content if isinstance(content, str) else " ".join(map(str, content))
                out.append({"role": "user", "content": text})
            elif isinstance(part, pm.ToolReturnPart):
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": part.tool_call_id,
                        "content": part.model_response_str(),
                    }
                )
            elif isinstance(part, pm.RetryPromptPart):
                if part.tool_name is not None:
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": part.tool_call_id,
                            "content": part.model_response(),
                        }
                    )
                else:
                    out.append({"role": "user", "content": part.model_response()})
    return out


def _tool_json(d: Any) -> dict[str, object]:
    return {
        "type": "function",
        "function": {
            "name": d.name,
            "description": d.description or "",
            "parameters": d.parameters_json_schema,
        },
    }


class _PydanticAILoop:
    """One live instance of the user's agent (see the module docstring)."""

    def __init__(
        self, agent: Any, harness: Harness, adapter: PydanticAIAdapter, others: list[Any]
    ) -> None:
        from pydantic_ai.models.function import FunctionModel

        self._agent = agent
        self._others = others
        self._side_model = FunctionModel(self._respond_aside, model_name="prunecheck-double")
        self._harness = harness
        self._adapter = adapter
        self._path = Path(harness.store) / _FILE
        self._issued: dict[str, ToolCall] = {}
        self._run: Any = None
        self._pending: dict[str, bool | None] = {}  # approval call id -> decision
        self._model = FunctionModel(self._respond, model_name="prunecheck-double")
        self._toolsets = [_fake_toolset(ts, self) for ts in agent.toolsets]
        self._set_aside: list[Callable[[], None]] = []
        _observe_repairs()
        if adapter.plain:  # the plain agent: the user's request hooks pass it through
            for cap in _capabilities_of(agent):
                self._set_aside += _pass_through(cap)

    # -- persistence -------------------------------------------------------------------

    def _load(self) -> list[Any]:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        if not self._path.exists():
            return []
        return list(ModelMessagesTypeAdapter.validate_json(self._path.read_bytes()))

    def _save(self, messages: list[Any]) -> None:
        from pydantic_ai.messages import ModelMessagesTypeAdapter

        tmp = self._path.with_suffix(".tmp")
        tmp.write_bytes(ModelMessagesTypeAdapter.dump_json(messages))
        tmp.replace(self._path)  # atomic: a crash leaves the old file or the new one

    # -- the model double and the fake tools ------------------------------------------

    async def _respond(self, messages: list[Any], info: Any) -> Any:
        from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

        tools = [*info.function_tools, *info.output_tools]
        request = {
            "messages": render_messages(messages, info.instructions),
            "tools": [_tool_json(d) for d in tools],
        }
        reply: Reply = await self._harness.model(request)
        parts: list[Any] = [TextPart(reply.text)] if reply.text or not reply.calls else []
        for call in reply.calls:
            self._issued[call.id] = call
            parts.append(ToolCallPart(call.name, call.arguments, tool_call_id=call.id))
        return ModelResponse(parts=parts, model_name="prunecheck-double")

    async def _respond_aside(self, messages: list[Any], info: Any) -> Any:
        """Another agent's model call (a summarizer's): a side request, its text the reply's."""
        from pydantic_ai.messages import ModelResponse, TextPart

        request = {"messages": render_messages(messages, info.instructions)}
        reply: Reply = await self._harness.model(request)
        text = reply.text or "summary of the conversation so far"
        return ModelResponse(parts=[TextPart(text)], model_name="prunecheck-double")

    def _repaired(self, layer: str, before: list[Any], after: list[Any]) -> None:
        """pydantic-ai's repair rewrote ``before`` into ``after``: the harness judges it."""
        tell = getattr(self._harness, "repaired", None)
        if tell is not None:
            tell(layer, render_messages(before, None), render_messages(after, None))

    async def _body(self, name: str, args: Mapping[str, Any], ctx: Any) -> str:
        call_id = str(ctx.tool_call_id or "")
        call = self._issued.get(call_id) or ToolCall(call_id, name, json.dumps(dict(args)))
        return await self._harness.tool(call)

    # -- the turn ----------------------------------------------------------------------

    async def _drive(self, prompt: str | None, deferred: Any = None) -> None:
        from pydantic_ai import DeferredToolRequests

        cancelled: Any = _run_cancelled() or _NeverRaised
        inline_executor()
        history = self._load()
        if prompt is not None and self._adapter.repair_on_new_message:
            from pydantic_ai.messages import repair_messages  # 2.68 has it, 2.37 not

            repaired = repair_messages(history)
            self._repaired("the app's repair_messages()", history, repaired)
            history = repaired
        agent = self._agent
        watching = _OBSERVER.set(self._repaired)
        with contextlib.ExitStack() as aside, agent.override(tools=[], toolsets=self._toolsets):
            for other in self._others:
                aside.enter_context(other.override(model=self._side_model))
            try:
                async with agent.iter(
                    prompt,
                    message_history=history or None,
                    model=self._model,
                    deferred_tool_results=deferred,
                ) as run:
                    self._run = run
                    async for _node in run:
                        if self._adapter.persist is Persist.NODE:
                            self._save(run.all_messages())
                    self._save(run.all_messages())
                    result = run.result
            except cancelled as exc:
                self._save(list(exc.all_messages()))
                raise
            finally:
                self._run = None
                _OBSERVER.reset(watching)
        output = result.output if result is not None else None
        if isinstance(output, DeferredToolRequests):
            for part in output.approvals:
                self._pending[part.tool_call_id] = None
                self._harness.awaiting_approval(part.tool_call_id)

    async def send(self, text: str) -> None:
        await self._drive(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        if self._run is not None:
            self._run.cancel()
        else:  # not inside agent.iter yet: nothing but the task to cancel
            turn.cancel()

    async def resume(self) -> None:
        await self._drive(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        from pydantic_ai import DeferredToolResults, ToolDenied

        if call_id not in self._pending:
            raise KeyError(f"no approval of {call_id!r} is pending")
        self._pending[call_id] = approved
        if any(v is None for v in self._pending.values()):
            return  # pydantic-ai resumes with every pending call answered at once
        decisions: dict[str, Any] = {
            k: (True if v else ToolDenied()) for k, v in self._pending.items()
        }
        self._pending.clear()
        await self._drive(None, DeferredToolResults(approvals=decisions))

    def history(self) -> list[dict[str, object]]:
        run = self._run
        messages = run.all_messages() if run is not None else self._load()
        return render_messages(messages, None)

    def abandon(self) -> None:
        """Nothing to release: every write is a closed, atomically replaced file
        (the plain agent's processors are given back to the user's agent)."""
        self._run = None
        for put_back in self._set_aside:
            put_back()
        self._set_aside = []


def _unchanged(messages: list[Any]) -> list[Any]:
    """A history processor that changes nothing (the plain agent's)."""
    return messages


def _pass_through(cap: Any) -> list[Callable[[], None]]:
    """Make ``cap``'s request hooks (:func:`request_hooks`) change nothing, for
    the plain agent: a ``ProcessHistory``'s processor, a ``Hooks``'s registered
    functions at those hooks, a user's class's overrides (pydantic-ai's base
    method bound on the instance).  Returns what puts each back."""
    import types

    from pydantic_ai.capabilities import ProcessHistory

    undo: list[Callable[[], None]] = []
    hooks = request_hooks(cap)
    if isinstance(cap, ProcessHistory):
        processor, cap.processor = cap.processor, _unchanged
        undo.append(lambda: setattr(cap, "processor", processor))
        return undo
    registry = getattr(cap, "_registry", None)
    base = _framework_base(type(cap))
    for hook in hooks:
        if isinstance(registry, dict) and registry.get(hook):
            undo.append(functools.partial(registry.__setitem__, hook, registry[hook]))
            registry[hook] = []
        if getattr(type(cap), hook, None) is not getattr(base, hook, None):
            try:
                setattr(cap, hook, types.MethodType(getattr(base, hook), cap))
            except AttributeError:  # slots: left as it is
                continue
            undo.append(functools.partial(delattr, cap, hook))
    return undo


def _fake_toolset(toolset: Any, loop: _PydanticAILoop) -> Any:
    """``toolset`` with each function tool's body replaced by ``loop._body``."""
    from pydantic_ai.toolsets import WrapperToolset
    from pydantic_ai.toolsets.function import FunctionToolsetTool

    class _Fakes(WrapperToolset[Any]):
        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
            async def body(args: dict[str, Any], run_ctx: Any) -> str:
                return await loop._body(name, args, run_ctx)

            if isinstance(tool, FunctionToolsetTool):
                tool = replace(tool, call_func=body, is_async=True)
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
            return await body(tool_args, ctx)

    return _Fakes(toolset)
