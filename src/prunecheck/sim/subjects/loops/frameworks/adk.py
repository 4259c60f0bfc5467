"""Google ADK's ``Runner`` driven through its own agent loop (issue 35).

The target is what an ADK user writes: an ``LlmAgent`` (``Agent``), an
``App`` around one (its ``events_compaction_config``, its plugins such as
``ContextFilterPlugin``, its ``resumability_config``), or a ``Runner`` of an
``App`` or agent (its session service), or a function of no argument
returning one of them.  Each :meth:`AdkAdapter.open` builds a new ``Runner``
of that configuration with two substitutions made at ADK's own boundaries
(:mod:`.adk_doubles`):

- the root agent's model is a scripted ``BaseLlm`` (ADK has no public test
  model): it renders the ``LlmRequest`` it is handed (after ADK's contents
  processors, its compaction and every ``before_model_callback``: what the
  provider would receive) and reports a prompt token count, so a
  token-threshold compaction runs as configured; a compaction summarizer that
  is ADK's ``LlmEventSummarizer`` (the default) summarizes on a double that
  answers a short summary;
- every tool keeps its name and declaration, its body is the harness's.

The agent is ``agent.clone(update=...)`` of the user's (its instruction,
callbacks, generate-content config kept); its sub-agents are not driven.  A
plugin of prunecheck's, first in the App's plugins, tells the harness what
the session holds before each model call (``Harness.holds``), so a whole,
closed unit a compaction or a filter drops is a trim, not a loss.

**Persistence** is ADK's session service: a ``Runner`` whose service is a
``DatabaseSessionService`` (or any other but ``InMemorySessionService``) gets a
``DatabaseSessionService`` on SQLite (``sqlite+aiosqlite``) in
``harness.store``; an ``SqliteSessionService`` gets one on the same store.  ADK
appends every event as it is produced; a new process reads the session back.
**Cancel** is the run's ``abort_signal`` (ADK seals the calls the invocation
left unanswered with an ``INVOCATION_ABORTED`` error response).  **Resume**
after a crash is ``run_async(invocation_id=...)`` without a message, for an
App whose ``ResumabilityConfig(is_resumable=True)``; a **new message** is
``run_async(new_message=...)`` on the restored session.  No tool-confirmation
interrupt and no tool timeout are driven.

Needs ``pip install 'prunecheck[loops]'`` (google-adk).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Loop, ToolSpec
from ..reach import Budget
from ..versions import Needs, Supported
from ._common import build_target, inline_executor

__all__ = ["SUPPORTED", "AdkAdapter", "AdkLoop"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("google-adk", "2.13.0", "3"),),
    tested=("2.13.0",),
)

#: The session the harness drives (one user, one session).
USER, SESSION = "user", "prunecheck"

#: The SQLite file of a durable session service in ``harness.store``.
DB_FILE = "adk-sessions.db"


@dataclass(frozen=True, slots=True)
class AdkConfig:
    """What the user's target configures.

    Attributes
    ----------
    agent : LlmAgent
        The root agent.
    app : App or None
        Its ``App`` (compaction, plugins, resumability), if any.
    service : str
        ``"memory"``, ``"database"`` or ``"sqlite"``: the session service's kind.
    name : str
        The app's name.
    """

    agent: Any
    app: Any
    service: str
    name: str


_BUILT: dict[int, tuple[object, AdkConfig]] = {}


def _service_kind(service: Any) -> str:
    from google.adk.sessions import InMemorySessionService

    if service is None or isinstance(service, InMemorySessionService):
        return "memory"
    names = {c.__name__ for c in type(service).__mro__}
    return "sqlite" if "SqliteSessionService" in names else "database"


def _config_of(obj: Any) -> AdkConfig | None:
    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.runners import Runner

    if isinstance(obj, Runner):
        app = getattr(obj, "app", None)
        agent = getattr(obj, "agent", None)
        if not isinstance(agent, LlmAgent):
            return None
        return AdkConfig(agent, app, _service_kind(obj.session_service), obj.app_name)
    if isinstance(obj, App):
        agent = obj.root_agent
        return AdkConfig(agent, obj, "memory", obj.name) if isinstance(agent, LlmAgent) else None
    if isinstance(obj, LlmAgent):
        return AdkConfig(obj, None, "memory", obj.name)
    return None


def _config(target: object) -> AdkConfig | None:
    """The configuration of ``target`` (a factory is called once), or None."""
    known = _BUILT.get(id(target))
    if known is not None and known[0] is target:
        return known[1]
    built = build_target(target, "google", lambda obj: _config_of(obj) is not None)
    if built is None:
        return None
    config = _config_of(built[0] if isinstance(built, tuple) else built)
    if config is not None:
        _BUILT[id(target)] = (target, config)
    return config


def _need(target: object) -> AdkConfig:
    config = _config(target)
    if config is None:
        raise TypeError(
            f"{target!r}: the adk adapter drives a Google ADK LlmAgent, an App of one or a "
            "Runner of one; this is none of them, nor a function of no argument returning "
            "one. Hint: point at the agent, App or Runner (file.py:app) or at a factory."
        )
    return config


def _talks_gemini(agent: Any) -> bool:
    """Whether ``agent``'s model sends to Gemini: a ``Gemini`` instance, a model
    string ADK's ``LLMRegistry`` resolves to one, or no model (ADK's default,
    a Gemini model); not ``LiteLlm`` or another provider's class."""
    from google.adk.models.google_llm import Gemini
    from google.adk.models.registry import LLMRegistry

    model = getattr(agent, "model", None)
    if isinstance(model, Gemini) or model in (None, ""):
        return True
    if not isinstance(model, str):
        return False
    try:
        return issubclass(LLMRegistry.resolve(model), Gemini)
    except ValueError:
        return False


def _trims(config: AdkConfig) -> bool:
    """Whether the configuration trims: a compaction, a ``before_model_callback``
    (the agent's, or a plugin's: ``ContextFilterPlugin``), or a hook that may
    replace a tool's response (:func:`_tool_hooks`)."""
    from google.adk.plugins.base_plugin import BasePlugin

    app = config.app
    plugins = list(getattr(app, "plugins", None) or [])
    hooked = any(
        type(p).before_model_callback is not BasePlugin.before_model_callback for p in plugins
    )
    compacts = app is not None and app.events_compaction_config is not None
    return (compacts or hooked or bool(config.agent.before_model_callback)
            or bool(_tool_hooks(config)))  # fmt: skip


def _tool_hooks(config: AdkConfig) -> list[Any]:
    """The user's hooks whose returned dict replaces a tool's response in the
    ``function_response`` the model sees (and the session keeps): the agent's
    ``after_tool_callback`` (one, or a list; sync or async) and every plugin's
    own ``after_tool_callback``."""
    from google.adk.plugins.base_plugin import BasePlugin

    given = config.agent.after_tool_callback
    hooks: list[Any] = list(given) if isinstance(given, list) else [given] if given else []
    for plugin in getattr(config.app, "plugins", None) or []:
        if type(plugin).after_tool_callback is not BasePlugin.after_tool_callback:
            hooks.append(plugin.after_tool_callback)
    return hooks


def _compaction(config: Any) -> Any:
    """A copy of ``config`` whose default summarizer summarizes on the double."""
    from google.adk.apps.llm_event_summarizer import LlmEventSummarizer

    from .adk_doubles import ScriptedLlm

    if config is None:
        return None
    summarizer = config.summarizer
    if summarizer is not None and not isinstance(summarizer, LlmEventSummarizer):
        return config.model_copy()  # the user's own summarizer, as configured
    template = getattr(summarizer, "_prompt_template", None)
    fresh = LlmEventSummarizer(llm=ScriptedLlm(None, {}), prompt_template=template)
    return config.model_copy(update={"summarizer": fresh})


def _witness(harness: Harness, seen: list[Any]) -> Any:
    """A plugin telling the harness what the session holds before each model
    call, and keeping the live session (for :meth:`AdkLoop.history`)."""
    from google.adk.plugins.base_plugin import BasePlugin

    from .adk_doubles import render_events

    class _Witness(BasePlugin):
        async def before_run_callback(self, *, invocation_context: Any) -> Any:
            seen[:] = [invocation_context.session]
            return None

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            harness.holds(render_events(callback_context.session.events, None))
            return None

    return _Witness("prunecheck_witness")


def _service(kind: str, store: Path) -> Any:
    from google.adk.sessions import DatabaseSessionService, InMemorySessionService

    if kind == "memory":
        return InMemorySessionService()
    store.mkdir(parents=True, exist_ok=True)
    from .adk_store import inline_aiosqlite

    inline_aiosqlite()
    if kind == "sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService

        return SqliteSessionService(db_path=str(store / DB_FILE))
    return DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{store / DB_FILE}")


class AdkAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of Google ADK.

    ``plain``: open the framework's plain agent, the user's agent without its
    compaction, its plugins, its ``before_model_callback`` and its
    ``after_tool_callback`` (:meth:`without_trimming`, for whose failure a
    finding is).
    """

    framework = "adk"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> AdkAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return AdkAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        return _config(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        from .adk_doubles import declarations, tool_spec

        return [tool_spec(d) for _, d in declarations(_need(target).agent.tools)]

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; a new message after a crash with a durable session
        service, a resume too when the App is resumable; the trim hook when the
        configuration compacts or filters the request, or may replace a tool's
        response (an ``after_tool_callback``)."""
        config = _need(target)
        caps = {Capability.CANCEL}
        if config.service != "memory":
            caps.add(Capability.CRASH_NEW_MESSAGE)
            resumability = getattr(config.app, "resumability_config", None)
            if resumability is not None and resumability.is_resumable:
                caps.add(Capability.CRASH_RESUME)
        if not self.plain and _trims(config):
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def budget(self, target: object) -> Budget | None:
        """The token threshold of an ``EventsCompactionConfig``, else the
        threshold on one tool output a hook replacing tool responses reads
        as a module constant (:func:`~..reach.hook_budget`); None: unknown."""
        from ..reach import hook_budget

        config = _need(target)
        if self.plain:
            return None
        compaction = getattr(config.app, "events_compaction_config", None)
        threshold = getattr(compaction, "token_threshold", None)
        if isinstance(threshold, int):
            where = f"EventsCompactionConfig(token_threshold={threshold})"
            return Budget(threshold, "tokens", where)
        found = (hook_budget(h, "after_tool_callback") for h in _tool_hooks(config))
        return next((b for b in found if b is not None), None)

    def providers(self, target: object) -> frozenset[str]:
        """The providers beyond OpenAI and Anthropic whose rules judge the requests:
        ``gemini`` when the root agent's model is a Gemini model (ADK's default:
        a model string its registry resolves to ``Gemini``, or a ``Gemini``)."""
        return frozenset({"gemini"}) if _talks_gemini(_need(target).agent) else frozenset()

    def open(self, target: object, harness: Harness) -> Loop:
        """A new ``Runner`` of the user's configuration on the model double and
        fake tools, its session service (if durable) in ``harness.store``."""
        from google.adk.apps import App
        from google.adk.runners import Runner

        from .adk_doubles import ScriptedLlm, fake_tools

        user = _need(target)
        issued: dict[str, Any] = {}
        update: dict[str, Any] = {
            "model": ScriptedLlm(harness, issued),
            "tools": fake_tools(user.agent.tools, harness.tool, issued),
        }
        if self.plain:  # nothing of the user's on the history's path, nor on a tool's response
            update["before_model_callback"] = None
            update["after_tool_callback"] = None
        agent = user.agent.clone(update=update)
        seen: list[Any] = []
        app = user.app
        plugins = [] if self.plain or app is None else [copy.copy(p) for p in app.plugins]
        built = App(
            name=user.name,
            root_agent=agent,
            plugins=[_witness(harness, seen), *plugins],
            events_compaction_config=None
            if self.plain or app is None
            else _compaction(app.events_compaction_config),
            resumability_config=getattr(app, "resumability_config", None),
        )
        runner = Runner(app=built, session_service=_service(user.service, harness.store),
                        auto_create_session=True)  # fmt: skip
        return AdkLoop(runner, seen)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A short standalone script replaying the schedule with ADK alone
        (:func:`~.adk_repro.script_text`), the user's file found from ``folder``."""
        from ..target import load_target
        from ._common import provider_says
        from .adk_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        config = _need(target)
        return script_text(target_spec, schedule_json, folder=folder,
                           factory=_config_of(target) is None,
                           durable=config.service != "memory",
                           gemini=_talks_gemini(config.agent),
                           says=provider_says(self, target_spec, schedule_json))  # fmt: skip


class AdkLoop:
    """One live ADK ``Runner`` on one session (see the module's docs)."""

    def __init__(self, runner: Any, seen: list[Any]) -> None:
        self._runner = runner
        self._seen = seen
        self._abort: asyncio.Event | None = None

    async def _run(self, text: str | None, invocation_id: str | None = None) -> None:
        from google.genai import types

        inline_executor()
        self._abort = abort = asyncio.Event()
        parts = [types.Part(text=text)]
        message = None if text is None else types.Content(role="user", parts=parts)
        log = logging.getLogger("google_adk")  # its errors are the run's to judge, not to print
        level, log.level = log.level, logging.CRITICAL
        try:
            events = self._runner.run_async(user_id=USER, session_id=SESSION,
                                            new_message=message, invocation_id=invocation_id,
                                            abort_signal=abort)  # fmt: skip
            async for _ in events:
                pass
        finally:
            log.setLevel(level)

    async def send(self, text: str) -> None:
        """One user turn: ``runner.run_async(new_message=...)``."""
        await self._run(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """ADK's cancel: the run's ``abort_signal`` is set."""
        if self._abort is not None:
            self._abort.set()

    async def resume(self) -> None:
        """After a crash: ``run_async(invocation_id=...)`` of the session's last
        invocation, without a message (a resumable App)."""
        service = self._runner.session_service
        session = await service.get_session(app_name=self._runner.app_name, user_id=USER,
                                            session_id=SESSION)  # fmt: skip
        last = next((e.invocation_id for e in reversed(session.events) if e.invocation_id),
                    None) if session is not None else None  # fmt: skip
        if last is None:
            raise RuntimeError("no invocation to resume: the session holds none")
        await self._run(None, last)

    async def approve(self, call_id: str, approved: bool) -> None:
        """No tool-confirmation interrupt is driven (no INTERRUPT capability)."""
        raise NotImplementedError("prunecheck drives no ADK tool confirmation")

    def history(self) -> list[dict[str, object]]:
        """The session's events (compaction summaries left out) as OpenAI chat messages."""
        from .adk_doubles import render_events

        return render_events(self._seen[0].events, None) if self._seen else []

    def abandon(self) -> None:
        """A crash: nothing flushed (ADK writes each event as it is appended)."""
        self._runner = None
        self._seen.clear()
