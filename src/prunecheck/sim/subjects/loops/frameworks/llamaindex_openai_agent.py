"""LlamaIndex 0.11's ``OpenAIAgent`` (``llama-index-agent-openai``) driven
through its own agent runner (the known-bug corpus's
``llama-index-13715``, issue 32).

Before its workflow agents (0.12), LlamaIndex's function-calling agent was
an ``AgentRunner`` over an ``OpenAIAgentWorker``: the agent keeps its
``memory`` (a ``ChatMemoryBuffer`` by default), each ``achat`` collects the
run's messages in a task memory of its own and writes them to the agent's
memory when the run finishes; every request is the prefix messages, what
``memory.get()`` kept and the run's messages.  The user's agent runs as
configured — its memory (class and ``token_limit``), prefix messages
(system prompt), ``max_function_calls`` and tool-call parser — with two
substitutions at LlamaIndex's boundaries:

- the model: 0.11 ships no function-calling test model and ``OpenAIAgent``
  takes only an ``OpenAI`` model, so the double is a subclass of the
  user's model's class whose ``achat``/``astream_chat`` render the request
  (:func:`~.llamaindex_doubles.render_messages`), ask
  :meth:`Harness.model` and answer with OpenAI's own tool-call objects in
  ``additional_kwargs["tool_calls"]``, as ``OpenAI.achat`` returns them;
- every tool keeps its metadata; its body calls :meth:`Harness.tool` (the
  agent runs a batch's calls one after another, and a raised error leaves
  the run, as ``OpenAIAgent`` does).

A turn is ``await agent.achat(text)``; **cancel** is the turn's
``task.cancel()`` (the runner has no cancel API; an app cancels the task, as
on a client's disconnect).  No persistence, resume, approval or timeout.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from pathlib import Path
from typing import Any, ClassVar

from ..contract import Capability, Harness, Loop, Reply, ToolSpec
from ..reach import Budget
from ..versions import Needs, Supported
from ._common import build_target, inline_executor

__all__ = ["SUPPORTED", "LlamaIndexOpenAIAgentAdapter"]

#: The releases this adapter drives: the known-bug corpus's pins of issue 13715 (run on
#: llama-index-core 0.11.13 and 0.11.14 with llama-index-agent-openai 0.3.4).  The agent's
#: own distribution comes first: where it is not installed, detection skips this adapter.
SUPPORTED = Supported(
    (Needs("llama-index-agent-openai", "0.3.4", "0.4"),
     Needs("llama-index-core", "0.11.13", "0.12")),
    tested=("0.3.4",),
    oldest_pins=("httpx==0.29.0", "llama-index-agent-openai==0.3.4", "llama-index-core==0.11.13",
                 "llama-index-llms-openai==0.2.16", "openai==1.109.1"),
)  # fmt: skip

_AGENT_MODULE = "llama_index.agent.openai"


def _is_agent(obj: Any) -> bool:
    """An ``OpenAIAgent`` (known by its class's module: nothing is imported)."""
    return any(c.__module__.startswith(_AGENT_MODULE) and c.__name__ == "OpenAIAgent"
               for c in type(obj).__mro__)  # fmt: skip


def _need(target: object) -> Any:
    agent = build_target(target, "llama_index", _is_agent)
    agent = agent[0] if isinstance(agent, tuple) else agent
    if agent is None:
        raise TypeError(f"{target!r} is not a LlamaIndex OpenAIAgent (nor a factory of one).")
    return agent


def _tools(agent: Any) -> list[Any]:
    return list(agent.agent_worker.get_tools(""))


def _scripted(user_llm: Any, harness: Harness) -> Any:
    """A subclass of the user's ``OpenAI`` model answering with the harness's replies."""
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse
    from openai.types.chat.chat_completion_message_tool_call import (
        ChatCompletionMessageToolCall,
        Function,
    )

    from .llamaindex_doubles import render_messages

    def message(reply: Reply) -> Any:
        calls = [
            ChatCompletionMessageToolCall(
                id=c.id, type="function", function=Function(name=c.name, arguments=c.arguments)
            )
            for c in reply.calls
        ]
        extra = {"tool_calls": calls} if calls else {}
        return ChatMessage(role="assistant", content=reply.text or None, additional_kwargs=extra)

    class Scripted(type(user_llm)):  # type: ignore[misc]
        async def achat(self, messages: Any, **kwargs: Any) -> Any:
            request = {"messages": render_messages(messages), "tools": kwargs.get("tools") or []}
            reply = await harness.model(request)
            return ChatResponse(message=message(reply), delta=reply.text)

        async def astream_chat(self, messages: Any, **kwargs: Any) -> Any:
            response = await self.achat(messages, **kwargs)

            async def stream() -> Any:
                yield response

            return stream()

    double = copy.copy(user_llm)  # the user's model's configuration (its name: function calling)
    double.__class__ = Scripted
    return double


def _fresh_memory(memory: Any, plain: bool, harness: Harness) -> Any:
    from llama_index.core.memory import ChatMemoryBuffer
    from llama_index.core.storage.chat_store import SimpleChatStore

    from .llamaindex_memory import witnessing

    if plain:
        return ChatMemoryBuffer.from_defaults(token_limit=10**9)
    fresh = copy.copy(memory)
    fresh.chat_store = SimpleChatStore()
    return witnessing(fresh, harness)


class LlamaIndexOpenAIAgentAdapter:
    """The adapter of LlamaIndex 0.11's ``OpenAIAgent`` (see the module's docs)."""

    framework = "llamaindex-openai-agent"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> LlamaIndexOpenAIAgentAdapter:
        return LlamaIndexOpenAIAgentAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        if _is_agent(target):
            return True
        if getattr(target, "__module__", "").startswith("llama_index"):
            return False  # LlamaIndex's own classes are not factories of the user's
        return build_target(target, "llama_index", _is_agent) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        from .llamaindex_doubles import tool_spec

        return [tool_spec(t) for t in _tools(_need(target))]

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel (the turn's task); the trim hook unless plain (the memory's token limit)."""
        return frozenset({Capability.CANCEL} | (set() if self.plain else {Capability.TRIM_HOOK}))

    def budget(self, target: object) -> Budget | None:
        limit = getattr(_need(target).memory, "token_limit", None)
        if self.plain or not isinstance(limit, int):
            return None
        return Budget(
            limit, "tokens", f"{type(_need(target).memory).__name__}(token_limit={limit})"
        )

    def open(self, target: object, harness: Harness) -> Loop:
        from .llamaindex_doubles import fake_tools

        user = _need(target)
        worker = user.agent_worker
        agent = type(user).from_tools(
            tools=fake_tools(_tools(user), harness.tool),
            llm=_scripted(worker._llm, harness),
            memory=_fresh_memory(user.memory, self.plain, harness),
            prefix_messages=list(worker.prefix_messages),
            max_function_calls=worker._max_function_calls,
            tool_call_parser=worker.tool_call_parser,
        )
        return LlamaIndexOpenAIAgentLoop(agent)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """No standalone script is written for this legacy agent (the corpus's
        ground truth is its reproduction); the schedule is given as JSON."""
        return (
            '"""No standalone script for LlamaIndex 0.11 OpenAIAgent; the schedule:"""\n'
            f"SCHEDULE = {json.dumps(json.loads(schedule_json))!r}\n"
        )


class LlamaIndexOpenAIAgentLoop:
    """One live ``OpenAIAgent``."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    async def send(self, text: str) -> None:
        """One user turn: ``await agent.achat(text)``."""
        inline_executor()
        log = logging.getLogger("llama_index")
        level, log.level = log.level, logging.CRITICAL
        try:
            await self._agent.achat(text)
        finally:
            log.setLevel(level)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """The turn's ``task.cancel()`` (the runner has no cancel API)."""
        turn.cancel()

    async def resume(self) -> None:
        raise NotImplementedError("prunecheck drives no resume of a LlamaIndex 0.11 agent")

    async def approve(self, call_id: str, approved: bool) -> None:
        raise NotImplementedError("prunecheck drives no LlamaIndex 0.11 approval")

    def history(self) -> list[dict[str, object]]:
        """The agent's memory as OpenAI chat messages."""
        from .llamaindex_doubles import render_messages

        return render_messages(self._agent.memory.get_all())

    def abandon(self) -> None:
        self._agent = None
