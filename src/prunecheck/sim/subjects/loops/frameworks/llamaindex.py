"""LlamaIndex's workflow agents (``FunctionAgent``, ``AgentWorkflow``) driven
through their own workflow loop (issue 35).

The user's agent runs as configured — its system prompt, tools, streaming,
parallel tool calls, state, early stopping, and the memory the application
runs it with (:mod:`.llamaindex_memory`: ``ChatMemoryBuffer``,
``ChatSummaryMemoryBuffer``, ``Memory``, a subclass of the user's own; the
one a factory returns beside the agent, else the module's, else
LlamaIndex's default ``ChatMemoryBuffer``) — with two substitutions at
LlamaIndex's own boundaries (:mod:`.llamaindex_doubles`):

- the model is LlamaIndex's test model, ``MockFunctionCallingLLM``, whose
  ``achat``/``astream_chat`` render the messages the agent hands it (the
  system prompt, what the memory's ``get`` kept, the run's scratchpad: what
  the provider would receive) as an OpenAI Chat Completions body, ask
  :meth:`Harness.model` and answer with the scripted text and parallel
  ``ToolCallBlock`` blocks;
- every tool keeps its metadata (name, description, argument schema,
  ``return_direct``); only its body calls :meth:`Harness.tool`, and
  LlamaIndex's own ``_call_tool`` makes a raised error the call's error result.

Each :meth:`LlamaIndexAdapter.open` builds a new agent of the user's class
and fields (an ``AgentWorkflow``: a new workflow of new agents, its root and
prompts kept) and a new memory of the user's configuration.  A turn is
``agent.run(user_msg=text, memory=memory)``, awaited.  **Cancel** is
``handler.cancel_run()`` (the run's scratchpad, its tool calls and results,
is dropped with it: LlamaIndex writes a run's messages to the memory when the
run finishes).  **Persistence**: a ``Memory`` on a database file keeps its
messages in ``harness.store`` (written at each change, as the database
commits); a crash loses the run in flight, and a **new message** runs on
the restored memory.  No resume of a crashed run (the workflow's ``Context``
is saved only where the application serializes it), no tool-approval
interrupt and no tool timeout are driven.

A target is a workflow agent, or a factory returning one or ``(agent, memory)``.
Needs ``pip install 'prunecheck[loops]'`` (llama-index-core).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Loop, ToolSpec
from ..reach import Budget
from ..versions import Needs, Supported
from ._common import build_target, inline_executor

__all__ = ["SUPPORTED", "LlamaIndexAdapter", "LlamaIndexLoop"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("llama-index-core", "0.14.25", "0.15"),),
    tested=("0.14.25",),
)

#: The agent (and what came with it) a factory built, by factory: built once.
_BUILT: dict[int, tuple[object, Any]] = {}


def _is_agent(obj: Any) -> bool:
    from llama_index.core.agent.workflow import AgentWorkflow
    from llama_index.core.agent.workflow.base_agent import BaseWorkflowAgent

    return isinstance(obj, BaseWorkflowAgent | AgentWorkflow)


def _is_memory(obj: object) -> bool:
    from llama_index.core.memory.types import BaseMemory

    return isinstance(obj, BaseMemory)


def _parts(target: object) -> tuple[Any, tuple[Any, ...]] | None:
    """``(agent, what came with it)`` of ``target``, or None if it is not LlamaIndex's."""
    known = _BUILT.get(id(target))
    if known is not None and known[0] is target:
        built = known[1]
    else:
        built = build_target(target, "llama_index", _is_agent)
        if built is not None and built is not target:
            _BUILT[id(target)] = (target, built)
    if built is None:
        return None
    parts = tuple(built) if isinstance(built, tuple) else (built,)
    return parts[0], parts[1:]


def _need(target: object) -> tuple[Any, tuple[Any, ...]]:
    found = _parts(target)
    if found is None:
        raise TypeError(
            f"{target!r}: the llamaindex adapter drives a LlamaIndex FunctionAgent or "
            "AgentWorkflow; this is not one, nor a function of no argument returning one "
            "(or (agent, memory)). Hint: point at the agent (file.py:agent) or at a factory."
        )
    return found


def _agents(agent: Any) -> list[Any]:
    """The workflow agents of ``agent`` (itself, or an ``AgentWorkflow``'s)."""
    found = getattr(agent, "agents", None)
    return list(found.values()) if isinstance(found, dict) else [agent]


def _memory(target: object) -> Any:
    from .llamaindex_memory import memory_of

    return memory_of(target, _need(target)[1])


def _fresh_agent(user: Any, llm_of: Any, tools_of: Any) -> Any:
    """A new agent of ``user``'s class and fields, its model and tools replaced."""
    fields = {name: getattr(user, name) for name in type(user).model_fields}
    fields.update(llm=llm_of(user), tools=tools_of(user), tool_retriever=None)
    return type(user)(**fields)


def _fresh(user: Any, llm_of: Any, tools_of: Any) -> Any:
    from llama_index.core.agent.workflow import AgentWorkflow

    if not isinstance(user, AgentWorkflow):
        return _fresh_agent(user, llm_of, tools_of)
    return AgentWorkflow(
        agents=[_fresh_agent(a, llm_of, tools_of) for a in user.agents.values()],
        initial_state=user.initial_state,
        root_agent=user.root_agent,
        handoff_prompt=user.handoff_prompt,
        handoff_output_prompt=user.handoff_output_prompt,
        state_prompt=user.state_prompt,
        output_cls=getattr(user, "output_cls", None),
        structured_output_fn=getattr(user, "structured_output_fn", None),
        early_stopping_method=getattr(user, "early_stopping_method", "force"),
    )


def _context_window(llm: Any) -> int | None:
    """The model's context window (what LlamaIndex's default memory is sized by), or None."""
    try:
        window = llm.metadata.context_window
    except Exception:  # a model whose metadata cannot be read offline
        return None
    return window if isinstance(window, int) and window > 0 else None


class LlamaIndexAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of LlamaIndex.

    ``plain``: open the framework's plain agent, the user's agent with a
    memory that never trims (:meth:`without_trimming`, for whose failure a
    finding is).
    """

    framework = "llamaindex"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> LlamaIndexAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return LlamaIndexAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        return _parts(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        from .llamaindex_doubles import tool_spec

        seen: dict[str, ToolSpec] = {}
        for agent in _agents(_need(target)[0]):
            for tool in agent.tools or []:
                spec = tool_spec(tool)
                seen.setdefault(spec.name, spec)
        return list(seen.values())

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; the trim hook when the app runs the agent with a memory
        of its own (unless plain; LlamaIndex's default memory, three quarters of
        the model's window, is the default loop's); a new message after a crash
        with a durable ``Memory``."""
        from .llamaindex_memory import is_durable

        caps = {Capability.CANCEL}
        memory = _memory(target)
        if not self.plain and memory is not None:
            caps.add(Capability.TRIM_HOOK)
        if is_durable(memory):
            caps.add(Capability.CRASH_NEW_MESSAGE)
        return frozenset(caps)

    def budget(self, target: object) -> Budget | None:
        """The ``token_limit`` of the memory the app configures (a ``Memory``'s
        chat-history share of it); None without one (LlamaIndex's default memory,
        three quarters of the model's window, is no budget the app states).  A
        memory class of the app's own whose ``aget`` or ``get`` reads a module
        constant (``MAX_USER_TURNS = 200``) keys on that, not on the limit it
        inherits (:func:`~..reach.code_budget`)."""
        from ..reach import code_budget
        from .llamaindex_memory import token_limit

        memory = _memory(target)
        if self.plain or memory is None:
            return None
        for name in ("aget", "get"):
            own = getattr(type(memory), name, None)
            if own is not None and not str(getattr(own, "__module__", "")).startswith(
                "llama_index"
            ):
                read = code_budget(own, f"memory's own {name}")
                if read is not None:
                    return read
        found = token_limit(memory)
        return None if found is None else Budget(found[0], "tokens", found[1])

    def providers(self, target: object) -> frozenset[str]:
        """The provider the agents' LLMs send to (LlamaIndex's ``Anthropic``:
        ``anthropic``; ``OpenAI``: ``openai``; :mod:`.model_providers`), whose
        rules judge the requests; empty when unknown."""
        from .model_providers import clients_provider

        return clients_provider([getattr(a, "llm", None) for a in _agents(_need(target)[0])])

    def open(self, target: object, harness: Harness) -> Loop:
        """A new agent of the user's configuration on the model double and fake
        tools, with a new memory of the user's configuration."""
        from .llamaindex_doubles import fake_tools, scripted_llm
        from .llamaindex_memory import fresh_memory, witnessing

        user, _ = _need(target)

        def llm_of(agent: Any) -> Any:
            return scripted_llm(harness, _context_window(agent.llm))

        def tools_of(agent: Any) -> list[Any]:
            return fake_tools(agent.tools or [], harness.tool)

        agent = _fresh(user, llm_of, tools_of)
        first = _agents(user)[0]
        store = Path(harness.store)
        memory = fresh_memory(_memory(target), first.llm, store, plain=self.plain)
        return LlamaIndexLoop(agent, witnessing(memory, harness))

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A short standalone script replaying the schedule with LlamaIndex alone
        (:func:`~.llamaindex_repro.script_text`), the user's file found from ``folder``."""
        from ..target import load_target
        from ._common import provider_says
        from .llamaindex_memory import is_durable, module_memory
        from .llamaindex_repro import script_text

        target = load_target(f"loop:{self.framework}:{target_spec}").target
        agent, parts = _need(target)
        paired = any(_is_memory(p) for p in parts)
        named = None if paired else module_memory(target)
        return script_text(
            target_spec,
            schedule_json,
            folder=folder,
            factory=agent is not target,
            paired=paired,
            memory_name=None if named is None else named[0],
            durable=is_durable(_memory(target)),
            says=provider_says(self, target_spec, schedule_json),
        )


class LlamaIndexLoop:
    """One live LlamaIndex agent and its memory (see the module's docs)."""

    def __init__(self, agent: Any, memory: Any) -> None:
        self._agent = agent
        self._memory = memory
        self._handler: Any = None

    async def send(self, text: str) -> None:
        """One user turn: ``agent.run(user_msg=text, memory=memory)``, awaited."""
        inline_executor()
        log = logging.getLogger("llama_index")  # its errors are the run's to judge
        level, log.level = log.level, logging.CRITICAL
        try:
            self._handler = self._agent.run(user_msg=text, memory=self._memory)
            await self._handler
        finally:
            self._handler = None
            log.setLevel(level)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """LlamaIndex's cancel: ``handler.cancel_run()`` (the run raises
        ``WorkflowCancelledByUser``; its scratchpad is not written to the memory)."""
        if self._handler is not None:
            await self._handler.cancel_run()

    async def resume(self) -> None:
        """No resume of a crashed run is driven (no CRASH_RESUME capability)."""
        raise NotImplementedError("prunecheck drives no LlamaIndex resume of a crashed run")

    async def approve(self, call_id: str, approved: bool) -> None:
        """No tool-approval interrupt is driven (no INTERRUPT capability)."""
        raise NotImplementedError("prunecheck drives no LlamaIndex tool-approval interrupt")

    def history(self) -> list[dict[str, object]]:
        """The memory's messages as OpenAI chat messages."""
        from .llamaindex_doubles import render_messages
        from .llamaindex_memory import all_messages

        return render_messages(all_messages(self._memory))

    def abandon(self) -> None:
        """A crash: nothing to release (a durable memory's file is written whole)."""
        self._agent = self._memory = self._handler = None
