"""AutoGen AgentChat's ``AssistantAgent``, driven inside the loop harness.

The target is a factory taking the model client (``agent(model_client) ->
AssistantAgent``), or an ``AssistantAgent`` itself.  :meth:`AutoGenAdapter.open`
builds the agent with :class:`~.ag_doubles.HarnessClient` (so a
``TokenLimitedChatCompletionContext`` on the same client counts with it too),
replaces every tool by a fake of the same name and argument schema whose
body is ``harness.tool``, and keeps the agent's model context (its trimming:
``BufferedChatCompletionContext``, ``TokenLimitedChatCompletionContext``,
``HeadAndTailChatCompletionContext``, the guard's
``GuardedChatCompletionContext``, a class of the user's own: a fresh copy per
process …), system message, ``max_tool_iterations``,
``reflect_on_tool_use`` and tool-call summary as configured.  A model
reply with several calls is a parallel batch: AutoGen runs the calls with
``asyncio.gather`` and adds one ``FunctionExecutionResultMessage`` when all
are done.

A model context of the user's own that asks a model client itself (a
summarizer on the agent's own client, or on another: every
``ChatCompletionClient`` the context holds is replaced by the double) asks
the harness aside (:func:`~.ag_doubles.watch_context`): the request is not
judged as the agent's context, and a ``model_error`` step fails it as a
provider's error would (``model_faults``; in every class, since nothing
retries it after a backoff): what a failed summary does to the turn is
found, and the verdict names the summarizer's failure.

Persistence is what an AutoGen app writes itself: after every turn that
returns, ``await agent.save_state()`` is written to
``harness.store/autogen-state.json`` (written whole, then renamed); a new loop
(after a crash) starts with ``await agent.load_state(...)`` of that file
before its first step.  A turn that is cancelled, raises or crashes saves
nothing, as in an app that saves after ``run`` returns.

Scenario classes: a turn is ``agent.run(task=text, cancellation_token=t)``;
cancel is ``t.cancel()`` (AutoGen's own API: it cancels the linked model
call and the workbench's tool futures); resume after a crash is
``agent.run()`` without a task on the loaded state (AutoGen's way to
continue); a new message is ``run(task=text)`` on the loaded state.
``AssistantAgent`` has no tool-approval interrupt and no tool timeout.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
from pathlib import Path
from typing import Any, ClassVar

from prunecheck.sim.subjects.loops.contract import Capability, Harness, Loop, ToolSpec
from prunecheck.sim.subjects.loops.versions import Needs, Supported

__all__ = ["SUPPORTED", "AutoGenAdapter", "AutoGenLoop", "state_file"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("autogen-agentchat", "0.7.1", "0.8"), Needs("autogen-core", "0.7.1", "0.8")),
    tested=("0.7.1", "0.7.5"),
    oldest_pins=("autogen-agentchat==0.7.1", "autogen-core==0.7.1", "autogen-ext==0.7.1"),
)

_UNTRIMMED = "UnboundedChatCompletionContext"


def state_file(store: Path) -> Path:
    """Where the loop writes the agent's ``save_state()`` in ``store``."""
    return store / "autogen-state.json"


def _is_factory(target: object) -> bool:
    if not callable(target) or isinstance(target, type):
        return False
    try:
        return "model_client" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def _fresh_context(context: Any, client: Any) -> Any:
    from autogen_core.model_context import (
        BufferedChatCompletionContext,
        ChatCompletionContext,
        HeadAndTailChatCompletionContext,
        TokenLimitedChatCompletionContext,
        UnboundedChatCompletionContext,
    )

    if type(context) is TokenLimitedChatCompletionContext:
        return TokenLimitedChatCompletionContext(
            model_client=client,
            token_limit=context._token_limit,
            tool_schema=context._tool_schema,
            initial_messages=context._initial_messages,
        )
    kinds = (
        UnboundedChatCompletionContext,
        BufferedChatCompletionContext,
        HeadAndTailChatCompletionContext,
    )
    if type(context) in kinds:  # exactly: a subclass's own behaviour would be lost
        return ChatCompletionContext.load_component(context.dump_component())
    if isinstance(context, ChatCompletionContext):
        return _copy_of_users(context, client)
    from prunecheck.model.errors import PolicyError

    raise PolicyError(
        "autogen agent",
        f"its model context {type(context).__name__} is no ChatCompletionContext.",
        "point prunecheck at a factory, def agent(model_client): return AssistantAgent(...).",
    )


def _copy_of_users(context: Any, client: Any) -> Any:
    """The user's own context class (a subclass, or one of their own) as written: a
    shallow copy holding only its initial messages, and the harness's client where it
    kept a model client (to count tokens with)."""
    from autogen_core.models import ChatCompletionClient

    fresh = copy.copy(context)
    fresh._messages = list(context._initial_messages or [])
    for name, value in vars(context).items():
        if isinstance(value, ChatCompletionClient):
            setattr(fresh, name, client)
    return fresh


def _rebuild(agent: Any, client: Any) -> Any:
    """A new ``AssistantAgent`` of ``agent``'s configuration on ``client``."""
    from autogen_agentchat.agents import AssistantAgent

    system = agent._system_messages[0].content if agent._system_messages else None
    return AssistantAgent(
        agent.name,
        model_client=client,
        tools=list(agent._tools),
        model_context=_fresh_context(agent._model_context, client),
        description=agent.description,
        system_message=system,
        model_client_stream=agent._model_client_stream,
        reflect_on_tool_use=agent._reflect_on_tool_use,
        max_tool_iterations=agent._max_tool_iterations,
        tool_call_summary_format=agent._tool_call_summary_format,
        tool_call_summary_formatter=agent._tool_call_summary_formatter,
    )


def _build(target: object, client: Any) -> Any:
    if _is_factory(target):
        assert callable(target)
        return target(model_client=client)
    return _rebuild(target, client)


class AutoGenAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of AutoGen AgentChat.

    ``plain``: open the framework's plain agent, the user's agent with an
    ``UnboundedChatCompletionContext`` in place of a trimming model context
    (:meth:`without_trimming`, for whose failure a finding is).
    """

    framework = "autogen"
    supported: ClassVar[Supported] = SUPPORTED
    #: A model context that asks a model client of its own (a summarizer on the agent's
    #: client, which the double replaces) asks the harness aside: its request may fail
    #: (``model_error``), as a provider's error would fail it.
    model_faults: ClassVar[bool] = True

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def untimed_faults(self, target: object) -> bool:
        """A failed side request is not retried after a backoff: AutoGen's clients
        are replaced by the double, and a model context's own call (a summarizer's)
        is made once, so its ``model_error`` is offered in every class, the trimming
        class included."""
        return True

    def without_trimming(self) -> AutoGenAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return AutoGenAdapter(plain=True)

    def _probe(self, target: object) -> Any:
        from .ag_doubles import HarnessClient

        return _build(target, HarnessClient())

    def accepts(self, target: object) -> bool:
        """An ``AssistantAgent``, or a callable with a ``model_client`` parameter returning one."""
        try:
            from autogen_agentchat.agents import AssistantAgent
        except ImportError:
            return False
        if isinstance(target, AssistantAgent):
            return True
        if not _is_factory(target):
            return False
        try:
            return isinstance(self._probe(target), AssistantAgent)
        except Exception:
            return False

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel and both crash scenarios always (``save_state`` after each
        turn); the trim hook when the model context trims."""
        caps = {Capability.CANCEL, Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        if not self.plain and type(self._probe(target)._model_context).__name__ != _UNTRIMMED:
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    #: How :meth:`count_tokens` counts (the figures of a verdict say it).
    token_counter = "the model client's count_tokens (the double's: 4 characters a token)"

    def count_tokens(self, messages: list[Any]) -> int:
        """Tokens of OpenAI chat messages as the double client counts them."""
        from .budgets import autogen_tokens

        return autogen_tokens(messages)

    def budget(self, target: object) -> Any:
        """The budget of AutoGen's own model contexts (token limit, buffer, head and tail)."""
        from .budgets import autogen_budget

        return autogen_budget(self._probe(target)._model_context)

    def providers(self, target: object) -> frozenset[str]:
        """The provider the user's model client sends to (``OpenAIChatCompletionClient``:
        ``openai``; ``AnthropicChatCompletionClient``: ``anthropic``;
        :mod:`.model_providers`), whose rules judge the requests; empty for a
        factory (prunecheck hands it the client) or a client it does not know."""
        from .model_providers import client_provider

        if _is_factory(target):
            return frozenset()
        return client_provider(getattr(target, "_model_client", None))

    def tools(self, target: object) -> list[ToolSpec]:
        """The names and schemas of the agent's tools."""
        from .ag_doubles import tool_spec

        return [tool_spec(t) for t in self._probe(target)._tools]

    def open(self, target: object, harness: Harness) -> Loop:
        """A new agent on the double client with fake tools; state loaded
        from ``harness.store`` before its first step."""
        from autogen_core.tools import StaticStreamWorkbench

        from .ag_doubles import HarnessClient, fake_tool, watch_context

        agent = _build(target, HarnessClient(harness))
        if self.plain:
            from autogen_core.model_context import UnboundedChatCompletionContext

            agent._model_context = UnboundedChatCompletionContext()
        if any(type(w) is not StaticStreamWorkbench for w in agent._workbench):
            from prunecheck.model.errors import PolicyError

            raise PolicyError(
                f"autogen agent {agent.name}",
                "it uses a workbench (MCP …) whose tools prunecheck cannot replace.",
                "give the agent its tools with tools=[...] for the check.",
            )
        watch_context(agent._model_context)  # a summarizer's own model call: an aside
        fakes = [fake_tool(t, harness) for t in agent._tools]
        agent._tools = fakes
        agent._workbench = [StaticStreamWorkbench(fakes)]
        return AutoGenLoop(agent, harness)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A short standalone script replaying the schedule with AutoGen alone
        (:func:`~.autogen_repro.script_text`), the user's file found from ``folder``;
        a module-level ``AssistantAgent`` (no factory) built as :meth:`open` builds it."""
        from ..target import load_target
        from ._common import provider_says
        from .autogen_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        return script_text(target_spec, schedule_json, folder=folder,
                           says=provider_says(self, target_spec, schedule_json),
                           instance=not _is_factory(target))  # fmt: skip


class AutoGenLoop:
    """One live ``AssistantAgent``; its state file in ``harness.store``."""

    def __init__(self, agent: Any, harness: Harness) -> None:
        self._agent = agent
        self._file = state_file(harness.store)
        self._loaded = False
        self._token: Any = None

    async def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            if self._file.exists():
                await self._agent.load_state(json.loads(self._file.read_text()))

    async def _save(self) -> None:
        state = await self._agent.save_state()
        tmp = self._file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, sort_keys=True))
        os.replace(tmp, self._file)

    async def _run(self, task: str | None) -> None:
        from autogen_core import CancellationToken

        await self._load()
        self._token = CancellationToken()
        if task is None:
            await self._agent.run(cancellation_token=self._token)
        else:
            await self._agent.run(task=task, cancellation_token=self._token)
        await self._save()

    async def send(self, text: str) -> None:
        """One user turn: ``agent.run(task=text)``, then ``save_state`` to the store."""
        await self._run(text)

    async def cancel(self, turn: Any) -> None:
        """AutoGen's cancel: ``CancellationToken.cancel()`` of the running turn."""
        if self._token is not None:
            self._token.cancel()

    async def resume(self) -> None:
        """After a crash: ``agent.run()`` without a task on the saved state."""
        await self._run(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        """``AssistantAgent`` has no approval interrupt (no INTERRUPT capability)."""
        raise NotImplementedError("AutoGen's AssistantAgent has no tool-approval interrupt")

    def history(self) -> list[dict[str, object]]:
        """Everything the model context holds (before its trimming view); before
        the first step of a new process, what the saved state holds."""
        from .ag_doubles import render_messages

        if not self._loaded and self._file.exists():
            from autogen_core.models import LLMMessage
            from pydantic import TypeAdapter

            state = json.loads(self._file.read_text())
            saved = (state.get("llm_context") or {}).get("messages") or []
            return render_messages([TypeAdapter(LLMMessage).validate_python(m) for m in saved])
        return render_messages(list(self._agent._model_context._messages))

    def abandon(self) -> None:
        """A crash: nothing to release (the state file is written whole or not at all)."""
        self._token = None
