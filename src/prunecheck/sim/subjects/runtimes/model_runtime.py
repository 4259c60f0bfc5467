"""The model runtime as a :class:`~.stimuli.RuntimeUnderTest`: the self-check.

``ModelRuntime(config, policy)`` runs :func:`prunecheck.model.runtime.apply`
on the events the stimuli render and renders its context as the OpenAI message list it would
send, with the harness's markers, ids and sizes.  Driven through the
protocol and judged from outside, it must get the verdicts the model gives
itself (``tests/test_judged.py`` checks this on the regression corpus).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from prunecheck.model.config import RetryMode, RuntimeConfig
from prunecheck.model.context import Message, Role
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import CounterName, initial_state
from prunecheck.sim.subjects.runtimes.stimuli import Execution, Rejected, Stimulus, count_tokens

__all__ = ["ModelRuntime"]


class ModelRuntime:
    """The model runtime behind the protocol (see module docs)."""

    def __init__(self, config: RuntimeConfig, policy: Policy) -> None:
        self.state = initial_state(config, policy, record=False)
        self._mid: dict[str, str] = {}  # model message id -> harness message id
        self._cid: dict[str, str] = {}  # model call id -> harness call id
        self._back: dict[str, str] = {}  # harness call id -> model call id
        self._stream: str | None = None  # harness id of the assistant stream
        self._execs: list[Execution] = []
        self._cache: dict[int, tuple[Message, dict[str, Any]]] = {}
        self._at: float | None = None

    def advance(self, at: float) -> None:
        """The time of the next stimulus (the model's policies read it)."""
        self._at = at

    # ------------------------------------------------------------------ feed
    def feed(self, stimulus: Stimulus | Rejected) -> None:
        if isinstance(stimulus, Rejected):
            return  # the model judged the invocation itself
        st = self.state
        first_message, first_call = st.next_message, st.next_call
        given = stimulus.event
        apply(st, self._event(stimulus), self._at)
        if isinstance(given, SystemPrompt | UserMessage):
            self._mid[f"m{first_message}"] = stimulus.id
        elif isinstance(given, AssistantChunk):
            self._stream = None if given.last else stimulus.id
            for n in range(first_message, st.next_message):
                m = st.context.get(f"m{n}")
                if m is not None and m.role is Role.ASSISTANT and not m.tool_calls:
                    self._mid[m.id] = stimulus.id
        elif isinstance(given, IssueBatch):
            for k, call in enumerate(stimulus.calls):
                self._cid[f"c{first_call + k}"] = call.id
                self._back[call.id] = f"c{first_call + k}"
                self._execs.append(
                    Execution(call.id, call.tool, call.arguments.get("path", ""), call.effect)
                )
            self._mid[st.calls[f"c{first_call}"].batch] = stimulus.id
        elif isinstance(given, Retry):
            # The harness's shadow retries the same batches (the judge saw the same
            # rejection), so the calls a retry issues get the same numbers there.
            for n in range(first_call, st.next_call):
                record = st.calls[f"c{n}"]
                self._cid[record.id] = record.id
                self._mid.setdefault(record.batch, "r" + record.batch)
                if st.config.retry is RetryMode.RERUN_BATCH and record.retry_of is not None:
                    spec = record.spec
                    self._execs.append(
                        Execution(
                            record.id,
                            spec.tool,
                            spec.path,
                            spec.effect.value,
                            retry_of=self._cid.get(record.retry_of, record.retry_of),
                        )
                    )

    def _event(self, stimulus: Stimulus) -> Event:
        """The event this runtime applies: sized and worded as the stimulus's
        text (what its policy reads), its calls named as this runtime named them."""
        event, tokens = stimulus.event, count_tokens(stimulus.text)
        if isinstance(event, SystemPrompt):
            return SystemPrompt(tokens)
        if isinstance(event, UserMessage):
            return UserMessage(tokens, stimulus.text)
        if isinstance(event, AssistantChunk):
            return AssistantChunk(tokens, event.last)
        if isinstance(event, IssueBatch):
            return IssueBatch(
                tuple(
                    CallSpec(c.tool, c.arguments.get("path", ""), Effect(c.effect))
                    for c in stimulus.calls
                ),
                tokens,
            )
        if isinstance(event, ResultChunk):
            return ResultChunk(self._back[stimulus.id], tokens, event.last)
        if isinstance(event, ToolFailure):
            reason = FailureReason.TIMEOUT if "timeout" in stimulus.text else FailureReason.ERROR
            return ToolFailure(self._back[stimulus.id], reason, tokens)
        if isinstance(event, BudgetCheck | Invoke | Retry | NewSession):
            return event
        assert isinstance(event, ExternalWrite)
        return ExternalWrite(stimulus.id)

    # ----------------------------------------------------------------- reads
    def request(self) -> Sequence[Mapping[str, Any]]:
        out = []
        cache = self._cache
        for m in self.state.context:
            hit = cache.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, self._render(m))
                cache[id(m)] = hit
            out.append(hit[1])
        if len(cache) > 4 * len(out) + 64:
            present = {id(m) for m in self.state.context}
            self._cache = {k: v for k, v in cache.items() if k in present}
        return out

    def executions(self) -> Sequence[Execution]:
        return self._execs

    def costs(self) -> Mapping[str, int]:
        st = self.state
        return {
            IncidentKind.DEFERRAL.value: st.count(CounterName.DEFERRED_CHECKS),
            IncidentKind.SPILL.value: st.count(CounterName.SPILLS),
            IncidentKind.REINJECTION.value: st.count(CounterName.REINJECTIONS),
        }

    def _render(self, m: Message) -> dict[str, Any]:
        if m.role is Role.TOOL:
            cid = self._cid.get(m.call_id or "", m.call_id or "")
            if m.cleared:
                marks = ["[cleared]"]
            elif m.synthetic:
                marks = ["[tool", "result", "unavailable]"]
            elif m.text.startswith("error:"):
                marks = [f"⟦{cid}.x⟧"]
            else:
                marks = [f"⟦{cid}.{k}⟧" for k in range(m.first_chunk, m.first_chunk + m.chunks)]
            return {"role": "tool", "tool_call_id": cid, "content": _fill(marks, m.tokens)}
        if m.is_summary or m.cleared:
            return {
                "role": m.role.value,
                "content": _fill(["[summary]" if m.is_summary else "[cleared]"], m.tokens),
            }
        name = self._mid.get(m.id, m.id)
        if m.role is Role.ASSISTANT and m.tool_calls:
            calls = []
            for c in m.tool_calls:
                spec = self.state.calls[c].spec
                calls.append(
                    {
                        "id": self._cid.get(c, c),
                        "type": "function",
                        "function": {
                            "name": spec.tool,
                            "arguments": json.dumps({"path": spec.path}),
                        },
                    }
                )
            marks = [f"⟦{name}⟧"] if not name.startswith("r") else ["retry"]
            return {"role": "assistant", "content": _fill(marks, m.tokens), "tool_calls": calls}
        if m.role is Role.ASSISTANT:
            marks = [f"⟦{name}.{k}⟧" for k in range(m.first_chunk, m.first_chunk + m.chunks)]
            return {"role": "assistant", "content": _fill(marks, m.tokens)}
        return {"role": m.role.value, "content": _fill([f"⟦{name}⟧"], m.tokens)}


def _fill(marks: list[str], tokens: int) -> str:
    return " ".join(marks) + " ~" * max(0, tokens - len(marks))
