"""A framework's agent loop as a :class:`~prunecheck.model.system.System`.

The drivers' alphabet is the model's events; a loop's is the environment's
steps (:mod:`.steps`).  :class:`LoopSystem` translates one into the other so
that :func:`prunecheck.model.system.replay` and ``incidents_of`` (and any
driver that only proposes events the loop can take) drive a real loop:

============================  ==========================================
model event                   loop step
============================  ==========================================
``UserMessage``               ``user`` (its text, or ``user message N``)
``IssueBatch``                ``reply`` with one call per ``CallSpec``
                              (ids ``c1``, ``c2`` … as the model numbers
                              them; a spec's tool, or the user's tools in
                              turn when it names none of them)
``AssistantChunk`` (last)     ``reply`` with text (the turn's answer)
``ResultChunk`` (last)        ``complete`` (an output of the chunk's size)
``ToolFailure``               ``fail``, or ``timeout`` for a timeout
``Invoke``, ``BudgetCheck``,  nothing: the framework decides when it
``Retry``, ``SystemPrompt``,  calls the model and when it trims
non-last chunks
``ExternalWrite``             nothing (the fake tools hold no files)
``NewSession``                refused (a loop keeps its thread)
============================  ==========================================

The state (:class:`LoopState`) holds the live :class:`.scheduler.LoopRun`
(its ledger is the ground truth the judge reads) and a shadow of the model
runtime fed the same events, which :meth:`LoopSystem.truth` returns: the
pending calls and turns a driver needs to choose the next event.  The
shadow never prunes (its budget is unbounded): what the loop trims is the
framework's own hook, judged against the ledger.  An event the loop cannot
take now (a batch while no model request waits, a result for a call whose
body has not started) is a :class:`~prunecheck.model.errors.TraceError`.

Limits, said plainly: :meth:`LoopSystem.copy` replays the state's events on a
fresh loop (a live framework loop cannot be forked), so the explorer's
breadth-first branching costs one replay per branch; and the model-event
drivers (``search``, ``explore``, the simulator) propose events from the
shadow's truth, which a loop may not be ready for — the loop's own search
(:mod:`.search`) chooses among the steps the loop has enabled, and is what
``prunecheck check loop:`` and ``search loop:`` run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import TraceError
from prunecheck.model.events import (
    AssistantChunk,
    Event,
    FailureReason,
    IssueBatch,
    NewSession,
    ResultChunk,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.provider import Provider
from prunecheck.model.state import RuntimeState, StepResult
from prunecheck.model.system import Facts, RequestBody

from .contract import ToolCall
from .scenarios import _arguments
from .scheduler import LoopRun, StepRefused
from .steps import Complete, Fail, ReplyStep, Step, Timeout, User, step_to_json
from .target import LoopTarget

__all__ = ["LoopState", "LoopSystem"]

_UNBOUNDED = 10**12


@dataclass(slots=True)
class LoopState:
    """A live loop, its shadow model state, and the events applied so far."""

    run: LoopRun
    shadow: RuntimeState
    config: RuntimeConfig
    record: bool
    events: list[tuple[Event, float | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LoopSystem:
    """The agent of ``target`` under its framework's loop, as a System.

    Parameters
    ----------
    target : LoopTarget
        The agent and its adapter (:func:`.target.load_target`).
    """

    target: LoopTarget
    facts: Facts = field(default=Facts(reads_times=False, own_gate=True, provider=Provider.OPENAI))

    @property
    def name(self) -> str:
        """The loop spec."""
        return self.target.spec

    def _shadow(self) -> ModelSystem:
        policy = builtin_policy("recency")
        assert policy is not None
        return ModelSystem(policy, name=self.name)

    def initial(self, config: RuntimeConfig, *, record: bool = False) -> LoopState:
        """A fresh loop (a new store) and an empty shadow."""
        unbounded = replace(config, budget=_UNBOUNDED, hard_ceiling=_UNBOUNDED)
        shadow = self._shadow().initial(unbounded, record=record)
        # a System's states are dropped, not closed, by the drivers: no frozen heap
        run = LoopRun(self.target.adapter, self.target.target, set_heap_aside=False)
        return LoopState(run, shadow, config, record)

    def _step(self, state: LoopState, event: Event, before: set[str]) -> Step | None:
        match event:
            case UserMessage(text=text):
                return User(text or f"user message {len(state.steps) + 1}")
            case IssueBatch(calls=specs):
                tools = self.target.adapter.tools(self.target.target)
                new = [c for c in state.shadow.calls if c not in before]
                calls: list[ToolCall] = []
                for cid, spec in zip(new, specs, strict=False):
                    n = int(cid[1:]) if cid[1:].isdigit() else len(calls)
                    tool = next((t for t in tools if t.name == spec.tool), tools[n % len(tools)])
                    calls.append(ToolCall(cid, tool.name, _arguments(tool, n)))
                return ReplyStep(event.text, tuple(calls))
            case AssistantChunk(last=True, text=text):
                return ReplyStep(text or "done")
            case ResultChunk(call=cid, last=True, tokens=tokens):
                return Complete(cid, f"result of {cid} " + "x" * max(0, 4 * tokens - 16))
            case ToolFailure(call=cid, reason=reason):
                return (
                    Timeout(cid) if reason is FailureReason.TIMEOUT else Fail(cid, f"{cid} failed")
                )
            case NewSession():
                raise TraceError("a new session", "a loop keeps its thread; it has no new session.")
        return None

    def apply(self, state: LoopState, event: Event, at: float | None = None) -> StepResult:
        """Apply the event to the shadow, then its step (if any) to the loop.

        Raises
        ------
        TraceError
            If the loop cannot take the event now.
        """
        before = set(state.shadow.calls)
        self._shadow().apply(state.shadow, event, at)
        step = self._step(state, event, before)
        state.events.append((event, at))
        if step is None:
            return StepResult()
        try:
            incidents = state.run.apply(step)
        except StepRefused as exc:
            raise TraceError(f"{event.kind} event", f"the loop cannot take it now ({exc}).",
                             "the framework decides when it calls the model and runs tools."
                             ) from None  # fmt: skip
        state.steps.append(step)
        return StepResult(tuple(incidents))

    def truth(self, state: LoopState) -> RuntimeState:
        """The shadow model state (pending calls, open streams, turns)."""
        return state.shadow

    def copy(self, state: LoopState) -> LoopState:
        """The same events replayed on a fresh loop (a live loop cannot be forked)."""
        fresh = self.initial(state.config, record=state.record)
        for event, at in state.events:
            self.apply(fresh, event, at)
        return fresh

    def key(self, state: LoopState) -> int:
        """64 bits of the steps the loop was given (its history is their function)."""
        text = "\n".join(repr(step_to_json(s)) for s in state.steps)
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")

    def request(self, state: LoopState) -> RequestBody:
        """The last request the loop sent the model (empty before the first)."""
        requests = state.run.ledger.requests
        body = requests[-1].body if requests else {"messages": []}
        return RequestBody(Provider.OPENAI, body)

    def close(self, state: LoopState) -> None:
        """Drop the loop's event loops and its store."""
        state.run.close()
