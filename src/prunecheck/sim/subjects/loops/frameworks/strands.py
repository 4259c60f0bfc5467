"""Strands Agents' ``Agent`` driven through its own event loop (issue 35).

The user's agent runs as configured — its conversation manager
(``SlidingWindowConversationManager``, ``SummarizingConversationManager``,
``NullConversationManager``, a class of the user's own), system prompt, tool
executor, agent id and session — with two substitutions made at Strands' own
boundaries (:mod:`.strands_doubles`):

- the model is a scripted ``strands.models.Model``: its ``stream`` renders the
  messages it is handed (after the conversation manager: what the provider
  would receive) as an OpenAI Chat Completions body, asks :meth:`Harness.model`
  and streams the scripted text and parallel ``toolUse`` blocks as Strands'
  stream events.  It declares the user's model's ``context_window_limit``, so
  a conversation manager's proactive compression (``proactive_compression``:
  ``reduce_context`` before a model call over its threshold) runs as
  configured; the reactive path (a provider's context-overflow error) is not
  played;
- every tool keeps its name and spec; a ``@tool`` function keeps Strands'
  ``DecoratedFunctionTool`` (input validation, error results), only its body
  calls :meth:`Harness.tool`.

Each :meth:`StrandsAdapter.open` builds a new ``Agent`` of the user's
configuration: the agent object, or what its factory (a function of no
argument, called once) built, is rebuilt from its tools, system prompt, a
fresh copy of its conversation manager, its tool executor, agent id and
name, initial messages (none with a session manager: what the session held
is the store's).  The user's own hook callbacks on the events that see the
messages before or after a model call (``BeforeInvocationEvent``,
``BeforeModelCallEvent``, ``MessageAddedEvent``, ``AfterInvocationEvent``:
a ``HookProvider`` of the user's module editing ``event.agent.messages``, a
trim hook like a conversation manager, :func:`user_hooks`) are carried over,
each on a copy of its provider and telling the harness first what the agent
holds; the plain agent runs without them.  Other hooks and plugins are not
carried over.  The requests are judged under
the provider the user's model sends to as well (:meth:`StrandsAdapter.providers`:
Bedrock Converse for Strands' default ``BedrockModel``, which refuses a
conversation that does not start with the user's message).

**Persistence** is Strands' session manager: an agent configured with one
(``FileSessionManager``, ``S3SessionManager``, any ``RepositorySessionManager``)
gets a ``FileSessionManager`` of the same session id in ``harness.store``
(Strands appends every message as it is added and saves the agent's and the
conversation manager's state after each invocation); a new process restores
the session when the agent is built.  **Cancel** is ``agent.cancel()``
(cooperative: Strands stops at its next checkpoint; a model request in
flight streams its next chunk, the first checkpoint; a running tool is no
checkpoint: the turn returns when the tool does).  **Resume** after a
crash is ``agent.invoke_async()`` without a prompt (Strands runs the tools of
a latest ``toolUse`` message, else calls the model); a **new message** is
``invoke_async(text)`` on the restored session.  No tool-approval interrupt
and no tool timeout are driven.

Needs ``pip install 'prunecheck[loops]'`` (strands-agents).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Loop, ToolCall, ToolSpec
from ..reach import Budget
from ..versions import Needs, Supported
from ._common import build_target, inline_executor

__all__ = ["MESSAGE_EVENTS", "SUPPORTED", "StrandsAdapter", "StrandsLoop", "user_hooks"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("strands-agents", "1.34.0", "2"),),
    tested=("1.34.0", "1.62.0"),
    oldest_pins=("strands-agents==1.34.0",),
)

#: A conversation manager's state attributes and their values in a new process.
_FRESH_STATE = (
    ("removed_message_count", 0),
    ("_model_call_count", 0),
    ("_pin_first_applied", False),
    ("_summary_message", None),
)


#: The agent a factory built, by factory: the adapter reads the user's
#: configuration from it and builds every loop's agent anew (:meth:`StrandsAdapter.open`),
#: so a factory is called once (building a ``BedrockModel`` client takes ~0.5 s).
_BUILT: dict[int, tuple[object, Any]] = {}


def _agent(target: object) -> Any:
    """The ``Agent`` of ``target`` (an agent, or a factory called once), or None."""

    def is_agent(obj: Any) -> bool:
        from strands import Agent

        return isinstance(obj, Agent)

    known = _BUILT.get(id(target))
    if known is not None and known[0] is target:
        return known[1]
    agent = build_target(target, "strands", is_agent)
    if agent is not None and agent is not target:
        _BUILT[id(target)] = (target, agent)
    return agent


def _need(target: object) -> Any:
    agent = _agent(target)
    if agent is None:
        raise TypeError(
            f"{target!r}: the strands adapter drives a strands Agent; this is not one, nor a "
            "function of no argument returning one. Hint: point at the Agent object "
            "(file.py:agent) or at a factory building it."
        )
    return agent


def _fresh_manager(manager: Any, plain: bool) -> Any:
    """The conversation manager of a new process: a copy of the configured one
    with its state reset (the plain agent's: a ``NullConversationManager``)."""
    from strands.agent.conversation_manager import NullConversationManager

    if plain:
        return NullConversationManager()
    fresh = copy.copy(manager)
    for name, value in _FRESH_STATE:
        if hasattr(fresh, name):
            setattr(fresh, name, value)
    return fresh


def _witnessing(manager: Any, harness: Harness) -> Any:
    """``manager`` telling the harness what the agent holds before it trims
    (``apply_management`` at the end of every invocation, a cancelled one
    too; ``reduce_context`` on an overflow): a whole, closed unit the window
    then drops is a trim of what the loop held, not a loss.  Wrapped on the
    instance before the ``Agent`` registers it, so its hooks call the wrapper."""
    from .strands_doubles import render_messages

    for name in ("apply_management", "reduce_context"):
        original = getattr(manager, name, None)
        if not callable(original):
            continue

        def wrapped(agent: Any, *args: Any, __original: Any = original, **kwargs: Any) -> Any:
            harness.holds(render_messages(agent.messages, None))
            return __original(agent, *args, **kwargs)

        setattr(manager, name, wrapped)
    return manager


#: The events whose callbacks see ``event.agent.messages`` around a model call: a
#: callback of the user's own on one of them may edit the history (a trim hook).
MESSAGE_EVENTS = (
    "BeforeInvocationEvent", "BeforeModelCallEvent", "MessageAddedEvent", "AfterInvocationEvent",
)  # fmt: skip

#: Packages whose hook callbacks are no user's (Strands' own managers, prunecheck's).
_NOT_USERS = ("strands", "prunecheck")


def _callbacks(entries: Any) -> list[Any]:
    """The callbacks of a registry's entries (``_CallbackEntry`` in newer Strands
    releases, the bare callbacks in older ones)."""
    return [getattr(e, "callback", e) for e in entries or ()]


def user_hooks(agent: Any) -> list[tuple[type, Any]]:
    """The user's own hook callbacks, by event type, on the events that see the
    messages around a model call (:data:`MESSAGE_EVENTS`): callbacks whose
    function is defined outside Strands (a ``HookProvider`` of the user's module,
    or a plain function passed in ``hooks=``).  Each may rewrite
    ``agent.messages`` before the model is called: a trim hook."""
    registered = getattr(getattr(agent, "hooks", None), "_registered_callbacks", None) or {}
    found: list[tuple[type, Any]] = []
    for event, entries in registered.items():
        if getattr(event, "__name__", "") not in MESSAGE_EVENTS:
            continue
        for callback in _callbacks(entries):
            fn = getattr(callback, "__func__", callback)
            module = str(getattr(fn, "__module__", "") or "")
            if module and module.split(".")[0] not in _NOT_USERS:
                found.append((event, callback))
    return found


def _carried(hooks: list[tuple[type, Any]], harness: Harness) -> list[tuple[type, Any]]:
    """The user's hook callbacks of a new process: a bound method on a copy of its
    provider (the provider's state is the process's), each first telling the
    harness what the agent holds (a whole, closed unit it then drops is a trim)."""
    import inspect

    from .strands_doubles import render_messages

    copies: dict[int, Any] = {}
    out: list[tuple[type, Any]] = []
    for event, callback in hooks:
        owner = getattr(callback, "__self__", None)
        if owner is not None and not inspect.isclass(owner):
            fresh = copies.setdefault(id(owner), copy.copy(owner))
            callback = getattr(fresh, callback.__func__.__name__, callback)

        def witness(event_: Any) -> None:
            agent = getattr(event_, "agent", None)
            if agent is not None:
                harness.holds(render_messages(agent.messages, None))

        if inspect.iscoroutinefunction(callback):

            async def run_async(event_: Any, __cb: Any = callback) -> None:
                witness(event_)
                await __cb(event_)

            out.append((event, run_async))
        else:

            def run(event_: Any, __cb: Any = callback) -> None:
                witness(event_)
                __cb(event_)

            out.append((event, run))
    return out


def _window_limit(model: Any) -> int | None:
    try:
        limit = getattr(model, "context_window_limit", None)
    except Exception:  # a model whose config cannot be read offline
        return None
    return limit if isinstance(limit, int) and limit > 0 else None


def _is_bedrock(model: Any) -> bool:
    return any(c.__name__ == "BedrockModel" for c in type(model).__mro__)


class StrandsAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of Strands Agents.

    ``plain``: open the framework's plain agent, the user's agent with a
    ``NullConversationManager`` in place of its conversation manager
    (:meth:`without_trimming`, for whose failure a finding is).
    """

    framework = "strands"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> StrandsAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return StrandsAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        return _agent(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        from .strands_doubles import tool_spec

        return [tool_spec(t.tool_spec) for t in _need(target).tool_registry.registry.values()]

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; both crash scenarios with a session manager; the trim
        hook unless the conversation manager is a ``NullConversationManager``
        and the user has no hook callback of their own on the messages
        (:func:`user_hooks`)."""
        from strands.agent.conversation_manager import NullConversationManager

        agent = _need(target)
        caps = {Capability.CANCEL}
        if getattr(agent, "_session_manager", None) is not None:
            caps |= {Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        managed = not isinstance(agent.conversation_manager, NullConversationManager)
        if not self.plain and (managed or user_hooks(agent)):
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def budget(self, target: object) -> Budget | None:
        """The budget the conversation manager states: a sliding window's
        ``window_size`` in messages; else the model's ``context_window_limit``
        in tokens (where the summarizing manager, or any manager's overflow
        recovery, acts); None: unknown.  With a hook callback of the user's own
        on the messages (:func:`user_hooks`), the budget the user's module
        states (:func:`~..reach.module_budget`, the hook's) comes first: the
        hook, not the window, is the user's trimming."""
        agent = _need(target)
        if not self.plain and user_hooks(agent):
            from ..reach import module_budget

            stated = module_budget(target)
            if stated is not None:
                return stated
        manager = agent.conversation_manager
        window = getattr(manager, "window_size", None)
        if not self.plain and isinstance(window, int) and not isinstance(window, bool):
            return Budget(window, "messages", f"{type(manager).__name__}(window_size={window})")
        limit = _window_limit(agent.model)
        if limit is not None:
            return Budget(limit, "tokens", f"the model's context_window_limit={limit}")
        return None

    def providers(self, target: object) -> frozenset[str]:
        """The providers beyond OpenAI and Anthropic whose rules judge the requests:
        ``bedrock`` when the user's model is a ``BedrockModel`` (Strands' default)."""
        return frozenset({"bedrock"}) if _is_bedrock(_need(target).model) else frozenset()

    def open(self, target: object, harness: Harness) -> Loop:
        """A new ``Agent`` of the user's configuration on the model double and fake
        tools, its session (if any) in ``harness.store``."""
        from strands import Agent

        from .strands_doubles import ScriptedModel, fake_tools

        user = _need(target)
        issued: dict[str, ToolCall] = {}
        limit = _window_limit(user.model)
        model = ScriptedModel(harness, issued, {"context_window_limit": limit} if limit else None)
        tools = fake_tools(user.tool_registry.registry.values(), harness.tool, issued)
        kwargs: dict[str, Any] = {}
        session = getattr(user, "_session_manager", None)
        if session is not None:
            from strands.session.file_session_manager import FileSessionManager

            sid = getattr(session, "session_id", None) or "prunecheck"
            store = str(harness.store)
            kwargs["session_manager"] = FileSessionManager(session_id=sid, storage_dir=store)
        agent = Agent(
            model=model,
            messages=[] if session is not None else copy.deepcopy(list(user.messages)),
            tools=tools,
            system_prompt=user.system_prompt,
            conversation_manager=_witnessing(
                _fresh_manager(user.conversation_manager, self.plain), harness
            ),
            callback_handler=None,
            agent_id=user.agent_id,
            name=user.name,
            tool_executor=user.tool_executor,
            **kwargs,
        )
        if not self.plain:  # the user's own hook callbacks on the messages
            for event, callback in _carried(user_hooks(user), harness):
                agent.hooks.add_callback(event, callback)
        return StrandsLoop(agent, model)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A short standalone script replaying the schedule with Strands alone
        (:func:`~.strands_repro.script_text`), the user's file found from ``folder``."""
        from ..target import load_target
        from ._common import provider_says
        from .strands_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        agent = _need(target)
        manager = type(agent.conversation_manager).__name__
        return script_text(target_spec, schedule_json, folder=folder,
                           bedrock="bedrock" in self.providers(target),
                           factory=agent is not target,
                           session=getattr(agent, "_session_manager", None) is not None,
                           summarizing="Summariz" in manager,
                           hooks=MESSAGE_EVENTS if user_hooks(agent) else (),
                           says=provider_says(self, target_spec, schedule_json))  # fmt: skip


class StrandsLoop:
    """One live Strands ``Agent`` (see the module's docs)."""

    def __init__(self, agent: Any, model: Any) -> None:
        self._agent = agent
        self._model = model

    async def _invoke(self, text: str | None) -> None:
        inline_executor()
        self._model.new_turn()
        log = logging.getLogger("strands")  # its errors are the run's to judge, not to print
        level, log.level = log.level, logging.CRITICAL
        try:
            if text is None:
                await self._agent.invoke_async()
            else:
                await self._agent.invoke_async(text)
        finally:
            log.setLevel(level)

    async def send(self, text: str) -> None:
        """One user turn: ``agent.invoke_async(text)``."""
        await self._invoke(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """Strands' cancel: ``agent.cancel()`` (the turn stops at its next checkpoint:
        a model request in flight streams its next chunk, a running tool ends)."""
        self._agent.cancel()
        self._model.cancel_now()

    async def resume(self) -> None:
        """After a crash: ``agent.invoke_async()`` without a prompt on the restored session."""
        await self._invoke(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        """No tool-approval interrupt is driven (no INTERRUPT capability)."""
        raise NotImplementedError("prunecheck drives no Strands tool-approval interrupt")

    def history(self) -> list[dict[str, object]]:
        """``agent.messages`` as OpenAI chat messages."""
        from .strands_doubles import render_messages

        return render_messages(self._agent.messages, None)

    def abandon(self) -> None:
        """A crash: nothing to release (the session's files are written whole)."""
        self._agent = self._model = None
