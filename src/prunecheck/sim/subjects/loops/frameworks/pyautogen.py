"""AutoGen 0.2's ``ConversableAgent`` (the ``pyautogen`` package), driven inside the loop harness.

The target is the user's assistant: a ``ConversableAgent`` with an
``llm_config`` (``loop:agent.py:assistant``).  AutoGen 0.2 runs a
conversation between two agents; here the assistant is the user's and its
counterpart, the user proxy that sends the user's messages and executes the
assistant's tool calls, is the harness's: a ``ConversableAgent`` with
``llm_config=False`` and ``human_input_mode="NEVER"``, as AutoGen's recipes
write it, whose function map holds a fake of each of the assistant's tools
(the name and schema of its ``llm_config["tools"]``) calling
``harness.tool``.  The proxy ends the conversation at the assistant's first
reply without tool calls (the turn's answer).

:meth:`PyAutoGenAdapter.open` builds a fresh ``ConversableAgent`` of the
assistant's configuration (name, system message, ``llm_config`` with its
tools, termination rule, auto-reply limit) whose model is the harness's:
a custom model client (AutoGen's own ``model_client_cls`` and
``register_model_client``) whose ``create`` hands the request AutoGen built
(after the hooks, tool responses unrolled: what OpenAI would receive) to
``harness.model``; AutoGen's disk cache is off (``cache_seed: None``).  The
assistant's hooks are kept as the user registered them: the
``TransformMessages`` capability (``MessageHistoryLimiter``,
``MessageTokenLimiter`` …) runs at ``process_all_messages_before_reply``
before every reply.  A model reply with several calls is a parallel batch:
AutoGen 0.2 runs them with ``asyncio.gather`` and answers with one tool
message holding every response.

A turn is ``proxy.a_initiate_chat(assistant, message=text,
clear_history=False)``.  AutoGen 0.2 has no cancel API, no persistence of
its own and no tool timeout: the scenario classes are plain parallel
batches, tool timeouts (the tool's own) and the trim hook.  The plain agent
(:meth:`PyAutoGenAdapter.without_trimming`) is the same assistant without
its ``process_all_messages_before_reply`` hooks.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from prunecheck.sim.subjects.loops.contract import Capability, Harness, Loop, ToolCall, ToolSpec
from prunecheck.sim.subjects.loops.versions import Needs, Supported

__all__ = ["SUPPORTED", "PyAutoGenAdapter", "PyAutoGenLoop", "render_messages"]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`).
SUPPORTED = Supported(
    (Needs("pyautogen", "0.2.33", "0.3"),),
    tested=("0.2.33", "0.2.34"),
    oldest_pins=("pyautogen==0.2.33", "openai==1.37.0", "httpx==0.27.2"),
)

_HOOK = "process_all_messages_before_reply"
_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")

#: The id and arguments of the tool call a fake tool's body runs for.
_CALL: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "prunecheck_pyautogen_call", default=("", "{}")
)


def _unrolled(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """AutoGen's messages with each ``tool_responses`` unrolled, as
    ``generate_oai_reply`` sends them."""
    out: list[Mapping[str, Any]] = []
    for message in messages:
        responses = message.get("tool_responses") or []
        if responses:
            out.extend(responses)
            if message.get("role") != "tool":
                out.append({k: v for k, v in message.items() if k != "tool_responses"})
        else:
            out.append(message)
    return out


def render_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, object]]:
    """AutoGen 0.2's (OpenAI) messages as Chat Completions messages."""
    rendered: list[dict[str, object]] = []
    for message in _unrolled(messages):
        entry: dict[str, object] = {k: message[k] for k in _KEYS if message.get(k) is not None}
        if "content" not in entry:
            entry["content"] = None if message.get("tool_calls") else ""
        if entry.get("tool_calls"):
            entry["role"] = "assistant"
            entry["tool_calls"] = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": c["function"]["arguments"],
                    },
                }
                for c in message["tool_calls"]
            ]
        rendered.append(entry)
    return rendered


def _tool_specs(assistant: Any) -> list[ToolSpec]:
    specs = []
    for tool in (assistant.llm_config or {}).get("tools") or []:
        fn = tool.get("function") or {}
        specs.append(
            ToolSpec(
                str(fn.get("name")),
                str(fn.get("description") or ""),
                dict(fn.get("parameters") or {}),
            )
        )
    return specs


def _user_hooks(assistant: Any) -> list[Any]:
    return list(getattr(assistant, "hook_lists", {}).get(_HOOK) or [])


class _Silent:
    """AutoGen's IOStream, printing nothing (a check prints its own output)."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        del objects, sep, end, flush

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        del prompt, password
        return ""


def _model_client(harness: Harness | None) -> type:
    """A model client class (AutoGen 0.2's ``ModelClient`` protocol) on ``harness``."""
    from types import SimpleNamespace

    from openai.types.chat import ChatCompletionMessage

    from prunecheck.sim.subjects.loops.handoff import run_on_loop

    class HarnessModelClient:
        """AutoGen's model, asking the harness what to answer."""

        def __init__(self, config: Mapping[str, Any], **kwargs: Any) -> None:
            self.model = config.get("model", "harness")

        def create(self, params: Mapping[str, Any]) -> Any:
            assert harness is not None, "the probe's client is never asked"
            request = {
                "messages": render_messages(params.get("messages") or []),
                "tools": list(params.get("tools") or []),
            }
            reply = run_on_loop(harness.model(request))
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in reply.calls
            ]
            message = ChatCompletionMessage.model_validate(
                {"role": "assistant", "content": reply.text or None, "tool_calls": calls or None}
            )
            choice = SimpleNamespace(message=message, finish_reason="stop", index=0)
            return SimpleNamespace(choices=[choice], model=self.model, usage=None, id="harness")

        def message_retrieval(self, response: Any) -> list[Any]:
            return [choice.message for choice in response.choices]

        def cost(self, response: Any) -> float:
            return 0.0

        @staticmethod
        def get_usage(response: Any) -> dict[str, Any]:
            return {}

    return HarnessModelClient


def _assistant(target: Any, harness: Harness | None, *, plain: bool) -> Any:
    """A fresh ``ConversableAgent`` of the user's assistant's configuration, on the harness."""
    import copy

    from autogen import ConversableAgent

    client_cls = _model_client(harness)
    llm = copy.deepcopy({k: v for k, v in target.llm_config.items() if k != "config_list"})
    first = dict((target.llm_config.get("config_list") or [{}])[0])
    llm["config_list"] = [
        {"model": first.get("model", "gpt-4o"), "model_client_cls": client_cls.__name__}
    ]
    llm["cache_seed"] = None  # AutoGen's disk cache would answer a request it has seen
    fresh = ConversableAgent(
        name=target.name,
        system_message=target.system_message,
        llm_config=llm,
        is_termination_msg=target._is_termination_msg,
        max_consecutive_auto_reply=target.max_consecutive_auto_reply(),
        human_input_mode="NEVER",
        description=target.description,
    )
    fresh.register_model_client(model_client_cls=client_cls)
    hooks = {name: list(found) for name, found in target.hook_lists.items()}
    if plain:
        hooks[_HOOK] = []
    fresh.hook_lists = hooks
    return fresh


class PyAutoGenAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of AutoGen 0.2.

    ``plain``: open the framework's plain agent, the assistant without its
    ``process_all_messages_before_reply`` hooks (:meth:`without_trimming`).
    """

    framework = "pyautogen"
    supported: ClassVar[Supported] = SUPPORTED

    def __init__(self, *, plain: bool = False) -> None:
        self.plain = plain

    def without_trimming(self) -> PyAutoGenAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return PyAutoGenAdapter(plain=True)

    def accepts(self, target: object) -> bool:
        """A ``ConversableAgent`` with a model (an ``llm_config``) and one model configuration."""
        try:
            from autogen import ConversableAgent
        except ImportError:
            return False
        if not isinstance(target, ConversableAgent) or not target.llm_config:
            return False
        return len(target.llm_config.get("config_list") or [{}]) >= 1

    def capabilities(self, target: object) -> frozenset[Capability]:
        """The trim hook when the assistant has ``process_all_messages_before_reply`` hooks."""
        if not self.plain and _user_hooks(target):
            return frozenset({Capability.TRIM_HOOK})
        return frozenset()

    def tools(self, target: object) -> list[ToolSpec]:
        """The names and schemas of the assistant's ``llm_config["tools"]``."""
        return _tool_specs(target)

    def open(self, target: object, harness: Harness) -> Loop:
        """A fresh assistant on the harness's model, and the harness's user proxy."""
        from autogen import ConversableAgent

        with contextlib.redirect_stdout(io.StringIO()):  # its client's warnings
            assistant = _assistant(target, harness, plain=self.plain)
        holds: Any = lambda messages: _holds(harness, messages)  # noqa: E731
        assistant.hook_lists[_HOOK] = [holds, *assistant.hook_lists[_HOOK]]

        class HarnessProxy(ConversableAgent):  # type: ignore[misc]
            """The user proxy: sends the user's messages, runs the fake tools."""

            async def _a_execute_tool_call(self, tool_call: Any) -> Any:
                _CALL.set((str(tool_call.get("id", "")), str(tool_call["function"]["arguments"])))
                return await super()._a_execute_tool_call(tool_call)

        proxy = HarnessProxy(
            name="user",
            llm_config=False,
            human_input_mode="NEVER",
            is_termination_msg=lambda m: not m.get("tool_calls"),
            code_execution_config=False,
            function_map={s.name: _fake(s.name, harness) for s in _tool_specs(target)},
        )
        return PyAutoGenLoop(assistant, proxy)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A standalone script replaying the schedule with AutoGen 0.2 alone
        (:func:`~.pyautogen_repro.script_text`)."""
        from .pyautogen_repro import script_text

        return script_text(target_spec, schedule_json, folder=folder)


def _holds(harness: Harness, messages: list[Any]) -> list[Any]:
    """The first ``process_all_messages_before_reply`` hook: what the loop holds, untouched."""
    harness.holds(render_messages(messages))
    return messages


def _fake(name: str, harness: Harness) -> Any:
    async def body(**_kwargs: Any) -> str:
        call_id, arguments = _CALL.get()
        return await harness.tool(ToolCall(id=call_id, name=name, arguments=arguments))

    body.__name__ = name
    return body


class PyAutoGenLoop:
    """One live conversation between the user's assistant and the harness's proxy."""

    def __init__(self, assistant: Any, proxy: Any) -> None:
        self._assistant = assistant
        self._proxy = proxy

    async def send(self, text: str) -> None:
        """One user turn: ``proxy.a_initiate_chat(assistant, message=text)``, history kept."""
        from autogen.io.base import IOStream

        # AutoGen prints (its transforms' logs, its client's warnings): a check prints its own
        with IOStream.set_default(_Silent()), contextlib.redirect_stdout(io.StringIO()):
            await self._proxy.a_initiate_chat(
                self._assistant, message=text, clear_history=False, silent=True
            )

    async def cancel(self, turn: Any) -> None:
        """AutoGen 0.2 has no cancel API (no CANCEL capability)."""
        raise NotImplementedError("AutoGen 0.2 has no cancel API")

    async def resume(self) -> None:
        """AutoGen 0.2 has no persistence of its own (no CRASH_RESUME capability)."""
        raise NotImplementedError("AutoGen 0.2 has no persistence of its own")

    async def approve(self, call_id: str, approved: bool) -> None:
        """No approval interrupt (no INTERRUPT capability)."""
        raise NotImplementedError("AutoGen 0.2's ConversableAgent has no approval interrupt")

    def history(self) -> list[dict[str, object]]:
        """The assistant's system message and conversation with the proxy (before its hooks)."""
        held = self._assistant.chat_messages.get(self._proxy, [])
        return [*render_messages(self._assistant._oai_system_message), *render_messages(held)]

    def abandon(self) -> None:
        """Nothing to release: AutoGen 0.2 keeps the conversation in memory only."""
