"""Microsoft Agent Framework's ``Agent`` driven through its own run loop (issue 35).

The user's agent runs as configured — its instructions, options, context
providers (``InMemoryHistoryProvider``, ``FileHistoryProvider``, a
``CompactionProvider`` with its ``before_strategy``/``after_strategy``, a
provider of the user's own), the agent's and the client's in-run
``compaction_strategy`` and ``tokenizer`` (``SlidingWindowStrategy``,
``TruncationStrategy``, ``ToolResultCompactionStrategy``,
``SelectiveToolCallCompactionStrategy``, ``SummarizationStrategy``,
``TokenBudgetComposedStrategy``, ``ContextWindowCompactionStrategy``, a
strategy of the user's own), a history provider of the user's own class (a
subclass of the framework's ``InMemoryHistoryProvider`` or ``HistoryProvider``
overriding ``get_messages``: what it loads is the context, a cut on load is
a trim hook, :func:`own_history`), its agent middleware, its chat middleware (the
agent's and its client's: the user's code that can rewrite ``context.messages``
before each model call, a trim hook like a compaction strategy), its client's
function middleware and function-invocation configuration, and
``require_per_service_call_history_persistence`` — with two substitutions
made at the framework's own boundaries (:mod:`.maf_doubles`):

- the chat client is a scripted client of the framework's own layers
  (function invocation and chat middleware over ``BaseChatClient``); it
  renders the messages it is handed (after the history providers and every
  compaction: what the provider would receive) as an OpenAI Chat
  Completions body, asks :meth:`Harness.model` and answers the scripted
  text and parallel ``function_call`` contents.  The framework's function
  loop runs the calls of a batch concurrently, as configured;
- every ``FunctionTool`` keeps its name, schema and approval mode (the
  framework's argument validation and error results are kept), only its
  function calls :meth:`Harness.tool`.

Each :meth:`MAFAdapter.open` builds a new ``Agent`` of the user's
configuration (the agent object, or what its factory — a function of no
argument, called once — built) and one ``AgentSession`` that every turn of
the process runs on (``agent.run(text, session=session)``, as the
framework's multi-turn samples do).  A ``SummarizationStrategy`` asks its own
client, not the agent's: that client answers a fixed summary
(:data:`~.maf_doubles.SUMMARY`), a side call the harness does not schedule.
Every compaction strategy is wrapped so
that it first tells the harness what the agent holds (a whole, closed unit
it then drops is a trim of what the loop held, not a loss).

**Persistence** is the framework's ``FileHistoryProvider``: an agent
configured with one gets one of the same options in ``harness.store``
(one JSON Lines file per session; the framework appends the turn's messages
when the run ends, or after each model call under
``require_per_service_call_history_persistence``); a new process opens a
session of the same id and the provider loads what the file holds.  A
history kept in ``session.state`` only (``InMemoryHistoryProvider``, the
default) does not outlive the process: no crash scenario is driven for it.
**Cancel** is the task's ``cancel()`` (the framework has no cancel API of its
own: the run is an ``asyncio`` task).  There is no resume of an interrupted
run (a **new message** on the restored session is the crash scenario), and no
tool timeout is driven.  A tool of ``approval_mode="always_require"`` pauses the
run with a ``function_approval_request`` (**interrupt**); once every pending
request of the run is decided, the app's answer is one user message of their
``to_function_approval_response(approved)`` contents on the same session.

Needs ``pip install 'prunecheck[loops]'`` (agent-framework-core).
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Loop, ToolCall, ToolSpec
from ..reach import Budget
from ..versions import Needs, Supported
from ._common import build_target, inline_executor
from .model_providers import ModelProvider, model_provider

__all__ = [
    "SESSION_ID", "SUPPORTED", "MAFAdapter", "MAFLoop", "chat_middleware", "client_providers",
    "own_history",
]  # fmt: skip

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("agent-framework-core", "1.9.0", "2"),),
    tested=("1.9.0", "1.23.0"),
    oldest_pins=("agent-framework-core==1.9.0", "agent-framework-openai==1.8.2"),
)

#: The id of the session every process of a schedule runs on (a file of the
#: ``FileHistoryProvider`` is named after it).
SESSION_ID = "prunecheck"

#: The agent a factory built, by factory (a factory is called once).
_BUILT: dict[int, tuple[object, Any]] = {}


def _agent(target: object) -> Any:
    """The ``Agent`` of ``target`` (an agent, or a factory called once), or None."""

    def is_agent(obj: Any) -> bool:
        from agent_framework import RawAgent

        return isinstance(obj, RawAgent)

    known = _BUILT.get(id(target))
    if known is not None and known[0] is target:
        return known[1]
    agent = build_target(target, "agent_framework", is_agent)
    if agent is not None and agent is not target:
        _BUILT[id(target)] = (target, agent)
    return agent


def _need(target: object) -> Any:
    agent = _agent(target)
    if agent is None:
        raise TypeError(
            f"{target!r}: the maf adapter drives an agent_framework Agent; this is not one, nor a "
            "function of no argument returning one. Hint: point at the Agent object "
            "(file.py:agent) or at a factory building it."
        )
    return agent


def _strategies(agent: Any) -> list[Any]:
    """Every compaction strategy the agent runs: in-run (the agent's, else its
    client's) and its compaction providers' before and after strategies."""
    from agent_framework import CompactionProvider

    found = [agent.compaction_strategy or getattr(agent.client, "compaction_strategy", None)]
    for provider in agent.context_providers:
        if isinstance(provider, CompactionProvider):
            found += [provider.before_strategy, provider.after_strategy]
    return [s for s in found if s is not None]


def _framework_base(cls: type) -> type | None:
    """The nearest class of ``cls``'s bases that is the framework's own (its module
    in ``agent_framework``), or None if ``cls`` is the framework's own."""
    if cls.__module__.split(".")[0] == "agent_framework":
        return None
    return next((c for c in cls.__mro__ if c.__module__.split(".")[0] == "agent_framework"), None)


def own_history(agent: Any) -> list[Any]:
    """The agent's history providers of the user's own class: subclasses of a
    framework history provider with a ``get_messages`` of its own
    (``InMemoryHistoryProvider``; not the abstract ``HistoryProvider``, whose
    subclass is a store of the user's) whose ``get_messages`` (what the agent
    loads into the context before each run) is the user's.  A cut there is the user's
    trimming, as a compaction strategy is; the plain agent loads with the
    framework's class it extends."""
    from agent_framework import HistoryProvider

    own = []
    for provider in agent.context_providers:
        base = _framework_base(type(provider))
        if base is None or not isinstance(provider, HistoryProvider):
            continue
        theirs = getattr(base, "get_messages", None)
        if getattr(theirs, "__isabstractmethod__", False):  # the user's store: nothing to undo
            continue
        if type(provider).get_messages is not theirs:
            own.append(provider)
    return own


def _witnessed_history(provider: Any, harness: Harness) -> Any:
    """A copy of the user's history provider whose ``get_messages`` first tells the
    harness what the framework's class it extends would load (all the store holds:
    a whole, closed unit the user's cut then drops is a trim of what it held)."""
    from .maf_doubles import render_messages

    fresh = copy.copy(provider)
    base: Any = _framework_base(type(provider))
    own = fresh.get_messages

    async def get_messages(session_id: Any, *args: Any, **kwargs: Any) -> Any:
        if base is not None:
            held = await base.get_messages(fresh, session_id, *args, **kwargs)
            harness.holds(render_messages(list(held), None))
        return await own(session_id, *args, **kwargs)

    fresh.get_messages = get_messages
    return fresh


def _as_framework(provider: Any) -> Any:
    """A copy of the user's history provider as the framework's class it extends
    (its options kept, the user's ``get_messages`` not): the plain agent's."""
    fresh = copy.copy(provider)
    base = _framework_base(type(provider))
    if base is not None:
        fresh.__class__ = base
    return fresh


def chat_middleware(agent: Any) -> list[Any]:
    """The user's chat middleware: the agent's (sorted by the framework's own
    ``categorize_middleware``) and its client's ``chat_middleware``.  Each runs
    before every model call with the messages to send (``context.messages``),
    which it may rewrite: a trim hook."""
    own = list(agent.middleware or [])
    try:
        from agent_framework._middleware import categorize_middleware

        chat = list(categorize_middleware(own)["chat"])
    except Exception:  # a release without it, or middleware it cannot sort: by their marks
        from agent_framework import ChatMiddleware

        chat = [m for m in own if isinstance(m, ChatMiddleware)
                or str(getattr(m, "_middleware_type", "")).endswith("chat")]  # fmt: skip
    return chat + list(getattr(agent.client, "chat_middleware", None) or ())


def _without(middleware: list[Any], left_out: list[Any]) -> list[Any]:
    return [m for m in middleware if all(m is not x for x in left_out)]


def _witness_middleware(harness: Harness) -> Any:
    """A chat middleware, first of the agent's, telling the harness what the
    request holds before the user's chat middleware edit it."""
    from agent_framework import chat_middleware as chat

    from .maf_doubles import render_messages

    @chat
    async def prunecheck_witness(context: Any, call_next: Any) -> None:
        harness.holds(render_messages(list(context.messages), None))
        await call_next()

    return prunecheck_witness


def _file_history(agent: Any) -> Any:
    from agent_framework import FileHistoryProvider

    return next((p for p in agent.context_providers if isinstance(p, FileHistoryProvider)), None)


def _fresh(strategy: Any) -> Any:
    """``strategy`` of a new process: a ``SummarizationStrategy`` (also inside a
    ``TokenBudgetComposedStrategy``) copied with its client answering a fixed
    summary (:func:`~.maf_doubles.SummaryClient`) and its failure count reset."""
    from agent_framework import SummarizationStrategy, TokenBudgetComposedStrategy

    from .maf_doubles import SummaryClient

    if isinstance(strategy, SummarizationStrategy):
        summarizing = copy.copy(strategy)
        summarizing.client = SummaryClient()
        summarizing._consecutive_summary_failures = 0
        return summarizing
    if isinstance(strategy, TokenBudgetComposedStrategy):
        composed = copy.copy(strategy)
        composed.strategies = [_fresh(s) for s in strategy.strategies]
        return composed
    return strategy


class _Witnessed:
    """A compaction strategy that first tells the harness what the agent holds."""

    def __init__(self, inner: Any, harness: Harness) -> None:
        self._inner = _fresh(inner)
        self._harness = harness

    def __getattr__(self, name: str) -> Any:  # its tokenizer, its name
        return getattr(self._inner, name)

    async def __call__(self, messages: list[Any]) -> bool:
        from agent_framework import included_messages

        from .maf_doubles import render_messages

        self._harness.holds(render_messages(included_messages(messages), None))
        return bool(await self._inner(messages))


def _providers(user: Any, harness: Harness, plain: bool) -> list[Any]:
    """The user's context providers of a new process: a ``FileHistoryProvider``
    of the same options in ``harness.store``; compaction providers with their
    strategies witnessed (left out of the plain agent); a history provider of
    the user's own class (:func:`own_history`) witnessed (the plain agent's: the
    framework's class it extends); the others copied."""
    from agent_framework import CompactionProvider, FileHistoryProvider

    out: list[Any] = []
    own = own_history(user)
    for provider in user.context_providers:
        if any(provider is p for p in own) and not isinstance(provider, FileHistoryProvider):
            out.append(_as_framework(provider) if plain else _witnessed_history(provider, harness))
        elif isinstance(provider, FileHistoryProvider):
            form = getattr(provider, "serialization_format", None)  # 1.23: json or msgpack
            out.append(FileHistoryProvider(
                Path(harness.store) / "history", source_id=provider.source_id,
                load_messages=provider.load_messages, store_inputs=provider.store_inputs,
                store_context_messages=provider.store_context_messages,
                store_context_from=provider.store_context_from,
                store_outputs=provider.store_outputs, skip_excluded=provider.skip_excluded,
                **({"serialization_format": form} if form else {}),
            ))  # fmt: skip
        elif isinstance(provider, CompactionProvider):
            if plain:
                continue
            fresh = copy.copy(provider)
            for name in ("before_strategy", "after_strategy"):
                strategy = getattr(fresh, name)
                if strategy is not None:
                    setattr(fresh, name, _Witnessed(strategy, harness))
            out.append(fresh)
        else:
            out.append(copy.copy(provider))
    return out


def client_providers(client: object) -> frozenset[str]:
    """The providers ``client`` sends to, read from the class of the client or a
    base (:func:`.model_providers.model_provider`): ``openai-responses`` for the
    framework's ``OpenAIChatClient`` (the Responses API; the Azure and Foundry
    clients built on it too), ``openai`` for ``OpenAIChatCompletionClient``,
    ``anthropic`` for the Anthropic client; empty when unknown."""
    return model_provider(client).names


def _budget_of(strategy: Any) -> Budget | None:
    """The budget a built-in strategy states (None: it states no size)."""
    kind = type(strategy).__name__
    if kind == "TruncationStrategy":
        unit = "tokens" if strategy.tokenizer is not None else "messages"
        return Budget(strategy.max_n, unit, f"TruncationStrategy(max_n={strategy.max_n})")
    if kind == "SlidingWindowStrategy":
        n = strategy.keep_last_groups
        return Budget(n, "messages", f"SlidingWindowStrategy(keep_last_groups={n})")
    if kind == "TokenBudgetComposedStrategy":
        n = strategy.token_budget
        return Budget(n, "tokens", f"TokenBudgetComposedStrategy(token_budget={n})")
    if kind == "SummarizationStrategy":
        n = strategy.target_count + strategy.threshold
        where = (f"SummarizationStrategy(target_count={strategy.target_count}, "
                 f"threshold={strategy.threshold})")  # fmt: skip
        return Budget(n, "messages", where)
    if kind == "ContextWindowCompactionStrategy":
        n = getattr(strategy, "_tool_eviction_tokens", strategy.input_budget_tokens)
        where = (f"ContextWindowCompactionStrategy(max_context_window_tokens="
                 f"{strategy.max_context_window_tokens}): its tool-eviction threshold")  # fmt: skip
        return Budget(n, "tokens", where)
    return None


class MAFAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of Microsoft Agent Framework.

    ``plain``: open the framework's plain agent, the user's agent without any
    compaction (no in-run strategy, no ``CompactionProvider``, no chat middleware
    of the user's; a history provider of the user's own class loading with the
    framework's class it extends):
    :meth:`without_trimming`, for whose failure a finding is.
    """

    framework = "maf"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> MAFAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return MAFAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        return _agent(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        from agent_framework import FunctionTool

        from .maf_doubles import tool_spec

        tools = _need(target).default_options.get("tools") or []
        return [tool_spec(t) for t in tools if isinstance(t, FunctionTool)]

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; a new message after a crash with a ``FileHistoryProvider``;
        the trim hook when a compaction strategy, a chat middleware of the
        user's (:func:`chat_middleware`) or a history provider of the user's own
        class (:func:`own_history`) is configured; an interrupt when a tool
        requires approval."""
        agent = _need(target)
        caps = {Capability.CANCEL}
        tools = agent.default_options.get("tools") or []
        if any(getattr(t, "approval_mode", None) == "always_require" for t in tools):
            caps.add(Capability.INTERRUPT)
        if _file_history(agent) is not None:
            caps.add(Capability.CRASH_NEW_MESSAGE)
        if not self.plain and (_strategies(agent) or chat_middleware(agent) or own_history(agent)):
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def budget(self, target: object) -> Budget | None:
        """The smallest budget a configured built-in strategy states; None: unknown."""
        if self.plain:
            return None
        found = [b for b in map(_budget_of, _strategies(_need(target))) if b is not None]
        return min(found, key=lambda b: (b.unit != "messages", b.amount)) if found else None

    def provider(self, target: object) -> ModelProvider:
        """The provider the user's chat client talks to (:func:`client_providers`)."""
        return model_provider(getattr(_need(target), "client", None))

    def providers(self, target: object) -> frozenset[str]:
        """The providers whose rules judge the requests (:meth:`provider`)."""
        return self.provider(target).names

    def open(self, target: object, harness: Harness) -> Loop:
        """A new ``Agent`` of the user's configuration on the scripted client and
        fake tools, its history file (if any) in ``harness.store``."""
        from agent_framework import Agent

        from .maf_doubles import ScriptedChatClient, fake_tools

        user = _need(target)
        issued: dict[str, ToolCall] = {}
        client_kwargs: dict[str, Any] = {
            "function_invocation_configuration": dict(
                getattr(user.client, "function_invocation_configuration", None) or {}
            ),
        }
        in_client = getattr(user.client, "compaction_strategy", None)
        if in_client is not None and not self.plain:
            client_kwargs["compaction_strategy"] = _Witnessed(in_client, harness)
        if getattr(user.client, "tokenizer", None) is not None:
            client_kwargs["tokenizer"] = user.client.tokenizer
        chat = chat_middleware(user)  # the plain agent runs without them
        middleware = [*getattr(user.client, "chat_middleware", ()),
                      *getattr(user.client, "function_middleware", ())]  # fmt: skip
        middleware = _without(middleware, chat) if self.plain else middleware
        if middleware:  # the user's client's own chat and function middleware, kept
            client_kwargs["middleware"] = middleware
        client = ScriptedChatClient(harness, issued, **client_kwargs)
        options = dict(user.default_options)
        options.pop("tools", None), options.pop("instructions", None)
        in_run = user.compaction_strategy
        in_run = None if self.plain or in_run is None else _Witnessed(in_run, harness)
        agent = Agent(
            client,
            user.default_options.get("instructions"),
            id=user.id,
            name=user.name,
            description=user.description,
            tools=fake_tools(user.default_options.get("tools") or [], harness.tool, issued),
            default_options=options,
            context_providers=_providers(user, harness, self.plain),
            middleware=_agent_middleware(user, chat, harness, self.plain),
            require_per_service_call_history_persistence=(
                user.require_per_service_call_history_persistence
            ),
            compaction_strategy=in_run,
            tokenizer=user.tokenizer,
        )
        return MAFLoop(agent, agent.create_session(session_id=SESSION_ID), harness)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A short standalone script replaying the schedule with the framework
        alone (:func:`~.maf_repro.script_text`), the user's file found from ``folder``."""
        from agent_framework import SummarizationStrategy

        from ..target import load_target
        from ._common import provider_says
        from .maf_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        agent = _need(target)
        nested = [s for s in _strategies(agent) for s in [s, *getattr(s, "strategies", ())]]
        summarizer = any(isinstance(s, SummarizationStrategy) for s in nested)
        return script_text(target_spec, schedule_json, folder=folder, factory=agent is not target,
                           summarizer=summarizer,
                           says=provider_says(self, target_spec, schedule_json))  # fmt: skip


def _agent_middleware(user: Any, chat: list[Any], harness: Harness, plain: bool) -> Any:
    """The agent's middleware of a new process: the user's, a witness first when
    the user has chat middleware; the plain agent's without the chat middleware."""
    own = list(user.middleware or [])
    if plain:
        own = _without(own, chat)
    elif chat:
        own = [_witness_middleware(harness), *own]
    return own or None


class MAFLoop:
    """One live Agent Framework ``Agent`` and its session (see the module's docs)."""

    def __init__(self, agent: Any, session: Any, harness: Harness) -> None:
        self._agent = agent
        self._session = session
        self._harness = harness
        self._requests: dict[str, Any] = {}  # call id -> its function_approval_request
        self._decided: dict[str, bool] = {}

    async def _run(self, message: Any) -> None:
        inline_executor()
        log = logging.getLogger("agent_framework")  # its errors are the run's to judge
        level, log.level = log.level, logging.CRITICAL
        try:
            result = await self._agent.run(message, session=self._session)
        finally:
            log.setLevel(level)
        for request in result.user_input_requests:
            if request.type == "function_approval_request":
                call_id = str(request.function_call.call_id)
                self._requests[call_id] = request
                self._harness.awaiting_approval(call_id)

    async def send(self, text: str) -> None:
        """One user turn: ``agent.run(text, session=session)``."""
        await self._run(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """The framework's cancel: the run's task is cancelled."""
        turn.cancel()

    async def resume(self) -> None:
        """No resume of an interrupted run is driven (no CRASH_RESUME capability)."""
        raise NotImplementedError("prunecheck drives no resume of an Agent Framework run")

    async def approve(self, call_id: str, approved: bool) -> None:
        """Decide ``call_id``'s approval request; once every pending one is
        decided, run the user message of their approval responses."""
        from agent_framework import Message

        if call_id not in self._requests:
            raise KeyError(f"no approval of {call_id!r} is pending")
        self._decided[call_id] = approved
        if set(self._decided) != set(self._requests):
            return
        contents = [r.to_function_approval_response(self._decided[c])
                    for c, r in self._requests.items()]  # fmt: skip
        self._requests, self._decided = {}, {}
        await self._run(Message(role="user", contents=contents))

    def history(self) -> list[dict[str, object]]:
        """What the session's history providers hold, as OpenAI chat messages."""
        from .maf_doubles import render_messages

        return render_messages(_held(self._agent, self._session), None)

    def abandon(self) -> None:
        """A crash: nothing to release (the history file is appended whole)."""
        self._agent = self._session = None


def _held(agent: Any, session: Any) -> list[Any]:
    """The messages the agent's first loading history provider holds for ``session``:
    ``session.state`` for an in-memory one, the JSON Lines file for a file one
    (a file of MessagePack records, 1.23's other format, is not read: nothing)."""
    from agent_framework import FileHistoryProvider, HistoryProvider, Message

    for provider in agent.context_providers:
        if not isinstance(provider, HistoryProvider) or not provider.load_messages:
            continue
        if isinstance(provider, FileHistoryProvider):
            path = Path(provider._session_file_path(session.session_id))  # its own file name
            if not path.exists() or path.suffix != ".jsonl":  # MessagePack records: not read
                return []
            lines = path.read_text(encoding="utf-8").splitlines()
            return [Message.from_dict(json.loads(line)) for line in lines if line.strip()]
        state = session.state.get(provider.source_id)
        messages = state.get("messages") if isinstance(state, Mapping) else None
        return list(messages or [])
    return []
