"""Framework repair layers on the strictness matrix's histories, judged per provider.

Some frameworks rewrite the history before each model request so that the
provider accepts it.  This module runs each framework's *own* repair code —
not a copy of it — on every history of
:data:`~prunecheck.sim.reports.strictness.HISTORIES` and judges, per history:
what the layer repaired (calls or results dropped, results synthesized),
whether the repair is honest (a dropped call or result leaves nothing in the
context to say so; a synthesized result is judged by the honest-placeholder
rule, :func:`~prunecheck.sim.subjects.loops.placeholder.ruling`, with the
call's tool having run, as in every history of the matrix), and which
providers reject the history before and after the repair.

The layers, as their source says (read at the pinned versions of the
``loops`` extra):

* **pydantic-ai** (``pydantic_ai.messages.repair_messages``, the pipeline
  ``_clean_message_history`` that runs before every model request since
  2.10): drops tool results whose call never appeared before them
  (``_drop_orphaned_tool_results``), answers every call without a result with
  a synthesized ``ToolReturnPart`` reading ``INTERRUPTED_TOOL_RETURN_CONTENT``
  (``_repair_dangling_tool_calls``), then merges consecutive same-role
  messages with tool results first.
* **OpenAI Agents SDK** (``agents.run_internal.items.drop_orphan_function_calls``,
  applied by ``prepare_model_input_items`` to the runner's generated items
  and by ``normalize_resumed_input`` to a resumed input): drops function calls
  that have no output (and a reasoning item just before such a call); outputs
  without their call are dropped only for stored session history
  (``output_pruning_indexes``), not by this pass.

Needs ``pip install 'prunecheck[loops]'``; the page says which versions ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata

from prunecheck.model.context import Message, Role
from prunecheck.model.provider import Provider, render, validate
from prunecheck.model.provider.from_body import messages_of_body

__all__ = ["LAYERS", "Layer", "Repaired", "available", "repair"]

_TOOL = "read_file"


@dataclass(frozen=True, slots=True)
class Layer:
    """A framework's repair layer: its name, distribution, the function it
    runs, and how to apply it to our messages."""

    name: str
    distribution: str
    function: str
    apply: Callable[[Sequence[Message]], list[Message]]

    def version(self) -> str | None:
        """The installed version of the framework, or None."""
        try:
            return metadata.version(self.distribution)
        except metadata.PackageNotFoundError:
            return None


@dataclass(frozen=True, slots=True)
class Repaired:
    """One history through one repair layer, judged.

    Attributes
    ----------
    dropped_calls, dropped_results : tuple of str
        Call ids whose call, or whose result, the layer removed.
    synthesized : tuple of (str, str, str)
        (call id, text, the placeholder rule's verdict) per result it wrote.
    honest : bool
        Nothing dropped, and every synthesized result an honest placeholder.
    reordered : bool
        Whether what it kept is in another order (results moved ahead of a
        user message, say).
    merged : bool
        Whether it joined consecutive messages of one role into one.
    before, after : dict
        Per provider, its first error's text, or None (accepts), on the
        history the layer was given and on the one it sends.
    """

    dropped_calls: tuple[str, ...]
    dropped_results: tuple[str, ...]
    synthesized: tuple[tuple[str, str, str], ...]
    honest: bool
    reordered: bool
    merged: bool
    before: dict[Provider, str | None]
    after: dict[Provider, str | None]

    @property
    def changed(self) -> bool:
        return bool(self.dropped_calls or self.dropped_results or self.synthesized or
                    self.reordered or self.merged)  # fmt: skip

    def what(self) -> str:
        """What the layer did, in words."""
        parts = []
        if self.dropped_calls:
            parts.append(f"dropped the call(s) {', '.join(self.dropped_calls)}")
        if self.dropped_results:
            parts.append(f"dropped the result(s) of {', '.join(self.dropped_results)}")
        if self.synthesized:
            cids = ", ".join(c for c, _, _ in self.synthesized)
            parts.append(f"synthesized a result for {cids}: `{self.synthesized[0][1]}`")
        if self.reordered:
            parts.append("moved the results ahead of the message between them and their calls")
        if self.merged:
            parts.append("joined consecutive messages of one role into one")
        return "; ".join(parts) or "nothing"


# ---------------------------------------------------------------- pydantic-ai
def _pydantic_ai(messages: Sequence[Message]) -> list[Message]:
    from pydantic_ai import messages as pm

    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import render_messages

    history: list[pm.ModelMessage] = []
    for m in messages:
        text = "[cleared]" if m.cleared else m.text
        if m.role is Role.SYSTEM:
            history.append(pm.ModelRequest(parts=[pm.SystemPromptPart(text)]))
        elif m.role is Role.USER or m.summary_of:
            history.append(pm.ModelRequest(parts=[pm.UserPromptPart(text)]))
        elif m.role is Role.TOOL:
            part = pm.ToolReturnPart(_TOOL, text, tool_call_id=m.call_id or "")
            history.append(pm.ModelRequest(parts=[part]))
        else:
            parts: list[pm.ModelResponsePart] = [pm.TextPart(text)] if text else []
            parts += [pm.ToolCallPart(_TOOL, {"path": f"{c}.txt"}, tool_call_id=c)
                      for c in m.tool_calls]  # fmt: skip
            # a response a model sent (named): pydantic-ai merges only its own synthetic ones
            history.append(pm.ModelResponse(parts=parts, model_name="a-model"))
    sent = pm.repair_messages(history)
    return messages_of_body({"messages": render_messages(sent, None)}, Provider.OPENAI)


# ----------------------------------------------------------- OpenAI Agents SDK
def _openai_agents(messages: Sequence[Message]) -> list[Message]:
    from agents.run_internal.items import drop_orphan_function_calls

    items: list[dict[str, object]] = []
    for m in messages:
        text = "[cleared]" if m.cleared else m.text
        if m.role is Role.TOOL:
            items.append({"type": "function_call_output", "call_id": m.call_id, "output": text})
        elif m.role is Role.ASSISTANT and not m.summary_of:
            if text:
                items.append({"role": "assistant", "content": text})
            for c in m.tool_calls:
                items.append({"type": "function_call", "call_id": c, "name": _TOOL,
                              "arguments": json.dumps({"path": f"{c}.txt"})})  # fmt: skip
        else:
            role = "system" if m.role is Role.SYSTEM else "user"
            items.append({"role": role, "content": text})
    kept = drop_orphan_function_calls(items)  # type: ignore[arg-type]
    chat: list[dict[str, object]] = []
    for item in kept:
        entry = dict(item)
        if entry.get("type") == "function_call":
            function = {"name": entry["name"], "arguments": entry["arguments"]}
            call = {"id": entry["call_id"], "type": "function", "function": function}
            last = chat[-1] if chat else None
            if (
                last is not None
                and last["role"] == "assistant"
                and last.get("tool_calls") is not None
            ):
                calls = last["tool_calls"]
                assert isinstance(calls, list)
                calls.append(call)
            else:  # consecutive function calls are one batch; a text item stays its own
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif entry.get("type") == "function_call_output":
            chat.append({"role": "tool", "tool_call_id": entry["call_id"],
                         "content": entry["output"]})  # fmt: skip
        else:
            chat.append({"role": entry["role"], "content": entry["content"]})
    return messages_of_body({"messages": chat}, Provider.OPENAI)


#: The framework repair layers the matrix page judges.
LAYERS: tuple[Layer, ...] = (
    Layer("pydantic-ai", "pydantic-ai-slim", "pydantic_ai.messages.repair_messages", _pydantic_ai),
    Layer(
        "OpenAI Agents SDK",
        "openai-agents",
        "agents.run_internal.items.drop_orphan_function_calls",
        _openai_agents,
    ),
)


def available() -> bool:
    """Whether every framework of :data:`LAYERS` is installed."""
    return all(layer.version() is not None for layer in LAYERS)


def _answers(
    messages: Sequence[Message], providers: Sequence[Provider]
) -> dict[Provider, str | None]:
    out: dict[Provider, str | None] = {}
    for p in providers:
        errors = validate(render(messages, p), p)
        out[p] = errors[0].text if errors else None
    return out


def _order(messages: Sequence[Message]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in messages:
        if m.role is Role.TOOL:
            out.append(("result", m.call_id or ""))
        else:  # an assistant's words come before its calls
            if m.text and m.role is not Role.SYSTEM:
                out.append(("text", m.text))
            out.extend(("call", c) for c in m.tool_calls)
    return out


def _turns(messages: Sequence[Message], kept_calls: set[str]) -> int:
    """User and assistant messages that hold something kept (words, or a call
    in ``kept_calls``)."""
    return sum(
        1
        for m in messages
        if m.role in (Role.USER, Role.ASSISTANT)
        and (m.text or m.summary_of or any(c in kept_calls for c in m.tool_calls))
    )


def _pairs(messages: Sequence[Message]) -> tuple[set[str], dict[str, str]]:
    calls = {c for m in messages for c in m.tool_calls}
    results = {m.call_id: ("[cleared]" if m.cleared else m.text) for m in messages
               if m.role is Role.TOOL and m.call_id}  # fmt: skip
    return calls, results


def repair(layer: Layer, messages: Sequence[Message], providers: Sequence[Provider]) -> Repaired:
    """``messages`` through ``layer``'s own repair code, judged per provider."""
    from prunecheck.sim.subjects.loops.placeholder import ruling

    sent = layer.apply(messages)
    calls, results = _pairs(messages)
    calls_after, results_after = _pairs(sent)
    dropped_calls = tuple(sorted(calls - calls_after))
    dropped_results = tuple(sorted(set(results) - set(results_after)))
    synthesized = []
    honest = not (dropped_calls or dropped_results)
    for cid, text in sorted(results_after.items()):
        if cid in results:
            continue
        verdict = ruling(text, ran="ok", call_words=(cid, _TOOL, f"{cid}.txt"))
        honest = honest and verdict.honest
        synthesized.append((cid, text, verdict.why))
    before, after = _order(messages), _order(sent)
    kept = [x for x in before if x in after]
    reordered = kept != [x for x in after if x in before]
    merged = _turns(messages, calls_after) > _turns(sent, calls_after)
    return Repaired(
        dropped_calls,
        dropped_results,
        tuple(synthesized),
        honest,
        reordered,
        merged,
        _answers(messages, providers),
        _answers(sent, providers),
    )
