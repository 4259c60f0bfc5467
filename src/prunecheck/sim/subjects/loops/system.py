"""A framework's agent loop as a :class:`~prunecheck.model.system.System`.

**Its own actions** (:class:`~prunecheck.model.system.Actions`, what the
drivers drive it by).  A loop's alphabet is the environment's steps
(:mod:`.steps`), and what is enabled comes from the live
:class:`.scheduler.LoopRun`, not from a model of it: a reply while the
framework awaits the model, a completion, failure or timeout per tool call
outstanding, a user message between turns, a cancel while a turn runs, a
crash, a resume or a new message after one, an approval while an interrupt
waits, the clock while a timer is set (:func:`.scenarios.enabled_kinds`,
within the scenario class's step kinds).  :meth:`LoopSystem.start` draws a
run's own bounds (:class:`.scenarios.Bounds`: swarm testing) and opens a
fresh loop; :meth:`LoopSystem.action` materialises a step of a chosen kind
(:func:`.scenarios.make_step`); :meth:`LoopSystem.targets` says which waiting
calls a completion, failure or timeout can concern, so that the simulator
(:mod:`prunecheck.sim.drivers.action_simulator`) gives each call its own
latency.  The generic action search
(:mod:`prunecheck.sim.drivers.action_search`: Hypothesis and the one
shrinker) drives it; the verdict per scenario class
(:mod:`prunecheck.sim.api.loop_verdict`) and the bundle
(:mod:`prunecheck.sim.evidence.loop_bundle`) are the generic
packages'.  This package keeps the subject only.

**Model events** (the :class:`~prunecheck.model.system.System` half).  The
model's drivers speak the model's events; :class:`LoopSystem` translates one
into the other so that :func:`prunecheck.model.system.replay` and
``incidents_of`` replay a model trace on a real loop:

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
drivers propose events from the shadow's truth, which a loop may not be
ready for: ``prunecheck check loop:`` and ``search loop:`` drive the loop
by its own actions.
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
from prunecheck.model.system import Draw, Facts, RequestBody

from .contract import Adapter, ToolCall, ToolSpec
from .reach import count_tokens, largest_output
from .scenarios import SCENARIOS, Bounds, Scenario, ScenarioClass, _arguments, enabled_kinds
from .scenarios import make_step as _make_step
from .scheduler import LoopRun, StepRefused, adapter_import_error
from .steps import Complete, Fail, ReplyStep, Step, Timeout, User, step_to_json
from .target import LoopTarget

__all__ = ["LoopSession", "LoopState", "LoopSystem"]

#: Every step kind: a replay's bounds (it performs given steps only).
_ALL_KINDS = frozenset(
    {"user", "reply", "complete", "fail", "timeout", "advance", "cancel", "crash", "resume",
     "new_message", "approve", "model_error"}
)  # fmt: skip

_UNBOUNDED = 10**12

#: The step kinds that concern one waiting call (:meth:`LoopSystem.targets`).
_CALL_KINDS = frozenset({"complete", "fail", "timeout"})


@dataclass(slots=True)
class LoopState:
    """A live loop, its shadow model state, and the events applied so far."""

    run: LoopRun
    shadow: RuntimeState
    config: RuntimeConfig
    record: bool
    events: list[tuple[Event, float | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


@dataclass(slots=True)
class LoopSession:
    """One run driven by its own actions: the live loop and the run's bounds.

    Attributes
    ----------
    run : LoopRun
        The loop, its ledger and incidents.
    bounds : Bounds
        The run's own bounds (steps, batch width, step kinds).
    tools : list[ToolSpec]
        The agent's tools.
    counter : list[int]
        Numbers used so far: user messages and steps, call ids.
    taken : int
        Steps performed.
    """

    run: LoopRun
    bounds: Bounds
    tools: list[ToolSpec]
    counter: list[int] = field(default_factory=lambda: [0, 0])
    taken: int = 0


@dataclass(frozen=True, slots=True)
class LoopSystem:
    """The agent of ``target`` under its framework's loop, as a System.

    Parameters
    ----------
    target : LoopTarget
        The agent and its adapter (:func:`.target.load_target`).
    scenario : Scenario
        What the environment may do (its actions' kinds and shape); the
        plain parallel class by default.
    max_steps : int
        Steps of one run at most.
    """

    target: LoopTarget
    scenario: Scenario = field(default=SCENARIOS[ScenarioClass.PARALLEL])
    max_steps: int = 16
    facts: Facts = field(default=Facts(reads_times=False, own_gate=True, provider=Provider.OPENAI))

    @classmethod
    def of(
        cls, adapter: Adapter, agent: object, scenario: Scenario | None = None, max_steps: int = 16
    ) -> LoopSystem:
        """The loop of an agent object under ``adapter`` (no spec: ``loop:FRAMEWORK:<object>``)."""
        target = LoopTarget(f"loop:{adapter.framework}:<object>", "<object>", agent, adapter)
        return cls(target, scenario or SCENARIOS[ScenarioClass.PARALLEL], max_steps)

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

    def _tools(self) -> list[ToolSpec]:
        """The agent's tools; an ``ImportError`` inside the adapter is one paragraph."""
        try:
            return list(self.target.adapter.tools(self.target.target))
        except ImportError as exc:
            raise adapter_import_error(
                self.target.adapter, exc, "reading its tools raised"
            ) from None

    def _step(self, state: LoopState, event: Event, before: set[str]) -> Step | None:
        match event:
            case UserMessage(text=text):
                return User(text or f"user message {len(state.steps) + 1}")
            case IssueBatch(calls=specs):
                tools = self._tools()
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

    def close(self, state: LoopState | LoopSession) -> None:
        """Drop the loop's event loops and its store."""
        state.run.close()

    # ------------------------------------------------ its own actions (Actions)
    def start(self, draw: Draw | None = None) -> LoopSession:
        """A fresh loop (a new store); ``draw`` draws the run's bounds, None: a replay's.

        The run sets the process's heap aside until :meth:`close` (drivers
        always close what they start).
        """
        if draw is None:
            bounds = Bounds(self.max_steps, self.scenario.shape.width, _ALL_KINDS)
        else:
            bounds = Bounds.draw(self.scenario, draw, max_steps=self.max_steps)
        tools = self._tools()
        return LoopSession(LoopRun(self.target.adapter, self.target.target), bounds, tools)

    def enabled(self, state: LoopSession) -> list[str]:
        """The step kinds the live loop can take now (none past the run's bounds)."""
        if state.taken >= state.bounds.steps:
            return []
        return enabled_kinds(state.run, self.scenario, state.bounds.kinds)

    def action(self, state: LoopSession, kind: str, draw: Draw) -> Step:
        """A step of ``kind`` with every value drawn."""
        return _make_step(kind, state.run, self.scenario, state.bounds, state.tools, draw,
                          state.counter)  # fmt: skip

    def targets(self, state: LoopSession, kind: str) -> list[str]:
        """The calls a step of ``kind`` can concern now: the waiting calls for a
        completion, a failure or a timeout; none for any other kind."""
        return list(state.run.waiting_calls()) if kind in _CALL_KINDS else []

    def aimed(self, state: LoopSession, kind: str, target: str, draw: Draw) -> Step:
        """A step of ``kind`` about the waiting call ``target``, its other values drawn."""
        return _make_step(kind, state.run, self.scenario, state.bounds, state.tools, draw,
                          state.counter, on_call=target)  # fmt: skip

    def perform(self, state: LoopSession, action: Step) -> StepResult:
        """Apply the step and run the loop until quiescent; its incidents.

        Raises
        ------
        TraceError
            If the loop cannot take the step now.
        """
        try:
            incidents = state.run.apply(action)
        except StepRefused as exc:
            raise TraceError(f"{action.kind} step", f"the loop cannot take it now ({exc}).",
                             "the framework decides when it calls the model and runs tools."
                             ) from None  # fmt: skip
        state.taken += 1
        return StepResult(tuple(incidents))

    def kind(self, action: Step) -> str:
        """The step's kind."""
        return action.kind

    def sent(self, state: LoopSession) -> int:
        """Requests the model received."""
        return len(state.run.ledger.requests)

    def measure(self, state: LoopSession) -> dict[str, int]:
        """The run's figures of reach (:class:`.reach.Watch`): requests in which
        the user's code changed the history, the widest batch, the largest
        history (messages, characters, tokens by the framework's counter), the
        longest tool output."""
        watch = state.run.watch
        tokens, _ = count_tokens(self.target.adapter, watch.largest)
        figures = watch.figures(state.run.ledger, tokens)
        figures["output"] = largest_output(state.run.ledger)
        return figures
