"""Driving a :class:`~.stimuli.RuntimeUnderTest` with the drivers' events.

Every driver (``search``, ``explore``, the simulator, ``replay``) works on a
:class:`~prunecheck.model.state.RuntimeState` through ``initial_state`` and
``apply``.  This module provides both under the same names: for a policy
that names a runtime under test (:class:`RuntimePolicy`, spec
``runtime:FILE.py:CLASS`` or ``runtime:guard:POLICY``) the state is an
:class:`UnderTest` — the *shadow* (the model runtime fed the same events,
nothing pruned: the ground truth of calls, results, streams and ids, and
what the drivers read to choose the next event) plus the runtime under test
and its :class:`~.judge.Judge`.  Each event becomes a stimulus; the judge's
incidents are the step's incidents, so traces, bundles and narratives are
the same as for the model.  For any other policy both functions are the
model's own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.config import Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    Effect,
    Event,
    ExternalWrite,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.events import NewSession as ModelNewSession
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.notes import Note, NoteKind
from prunecheck.model.policies import ContextView, Policy
from prunecheck.model.runtime import apply as model_apply
from prunecheck.model.state import CallStatus, RuntimeState, StepResult
from prunecheck.model.state import initial_state as model_initial_state
from prunecheck.model.trace import Trace, TraceStep
from prunecheck.sim.runtimes import stimuli as s
from prunecheck.sim.runtimes.judge import Judge, request_digest
from prunecheck.sim.runtimes.stimuli import RuntimeUnderTest

__all__ = [
    "RuntimeFactory",
    "RuntimePolicy",
    "UnderTest",
    "apply",
    "incidents_of",
    "initial_state",
    "observed_key",
    "replay",
    "runtime_of",
]

RuntimeFactory = Callable[[RuntimeConfig], RuntimeUnderTest]

_MASK64 = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class RuntimePolicy:
    """A runtime under test, in the place of a policy.  As a policy it frees
    nothing (it is what the shadow runs); ``make(config)`` builds the runtime."""

    name: str
    make: RuntimeFactory

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        return ()


def runtime_of(policy: object) -> RuntimePolicy | None:
    """The runtime a (possibly time-limited) policy names, or None."""
    inner = getattr(policy, "inner", policy)
    return inner if isinstance(inner, RuntimePolicy) else None


def factory_from(obj: object, spec: str) -> RuntimeFactory:
    """A factory from a class or callable taking ``budget=``, ``hard_ceiling=``."""
    if not callable(obj):
        raise PolicyError(
            f"runtime spec {spec!r}",
            f"names a {type(obj).__name__}, not a class or factory.",
            "point it at your RuntimeUnderTest class.",
        )
    try:
        names = set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        names = set()

    def make(config: RuntimeConfig) -> RuntimeUnderTest:
        kwargs = {
            k: v
            for k, v in (("budget", config.budget), ("hard_ceiling", config.hard_ceiling))
            if k in names
        }
        try:
            runtime = obj(**kwargs)
        except Exception as exc:
            raise PolicyError(
                f"runtime {spec!r}", f"building it raised {type(exc).__name__}: {exc}."
            ) from None
        for method in ("feed", "request", "executions"):
            if not callable(getattr(runtime, method, None)):
                raise PolicyError(
                    f"runtime {spec!r}",
                    f"has no {method}() method.",
                    "implement prunecheck.sim.runtimes.stimuli.RuntimeUnderTest.",
                )
        return runtime  # type: ignore[no-any-return]

    return make


def _shadow_config(config: RuntimeConfig) -> RuntimeConfig:
    return replace(
        config,
        gate=Gate.NONE,
        retry=RetryMode.IDEMPOTENT,
        repair=Repair.NONE,
        on_stream_loss=StreamLoss.REAPPEND,
    )


@dataclass(slots=True)
class UnderTest(RuntimeState):
    """The shadow (inherited fields) plus the runtime under test and its judge."""

    under: RuntimePolicy | None = None
    real: RuntimeConfig | None = None
    runtime: Any = None
    judge: Judge | None = None
    history: list[Event] = field(default_factory=list)

    @classmethod
    def start(
        cls, config: RuntimeConfig, policy: RuntimePolicy, *, record: bool = False
    ) -> UnderTest:
        state = cls(
            config=_shadow_config(config), policy=policy, record=record, under=policy, real=config
        )
        state.runtime = policy.make(config)
        state.judge = Judge(config.hard_ceiling)
        return state

    def copy(self) -> UnderTest:
        """An independent copy: the runtime's own ``copy()`` if it has one,
        else a fresh runtime fed the same events (O(events so far))."""
        assert self.under is not None and self.real is not None
        fast = getattr(self.runtime, "copy", None)
        if callable(fast):
            twin = RuntimeState.copy(self)
            assert isinstance(twin, UnderTest)
            twin.runtime, twin.judge = fast(), self.judge.copy() if self.judge else None
            twin.history = list(self.history)
            return twin
        twin = UnderTest.start(self.real, self.under, record=self.record)
        for event in self.history:
            twin.step(event)
        return twin

    def step(self, event: Event, at: float | None = None) -> StepResult:
        judge, runtime = self.judge, self.runtime
        assert judge is not None
        stimulus, completed, failed = self._stimulus(event)
        appended = self._appended(event)
        blocked = isinstance(event, Invoke) and bool(self.pending or self.assistant_stream)
        self.orphans, self.unanswered = set(), set()
        self.rejected_units = judge.rejected if isinstance(event, Retry) else None
        model_apply(self, event, at)  # the shadow: ground truth; raises on impossible events
        self.history.append(event)
        if isinstance(event, ExternalWrite):
            judge.external_write(event.path)
        if isinstance(event, ModelNewSession):
            judge.new_session()
        try:  # a runtime's failure names the step it failed at
            if stimulus is not None:
                tick = getattr(runtime, "advance", None)
                if at is not None and callable(tick):
                    tick(at)
                runtime.feed(stimulus)
            if isinstance(event, Retry):
                judge.rejected = None
            costs = runtime.costs() if callable(getattr(runtime, "costs", None)) else None
            incidents = judge.judge(
                self.step_index - 1,
                self,
                list(runtime.request()),
                list(runtime.executions()),
                completed=completed,
                failed=failed,
                invoked=isinstance(event, Invoke) and not blocked,
                costs=costs,
                appended=appended,
            )
            if judge.rejected is not None and isinstance(event, Invoke):
                first = next(i for i in incidents if i.kind is IncidentKind.PROVIDER_REJECTION)
                runtime.feed(s.Rejected(400, first.text, first.ids))
        except PolicyError as exc:
            raise (exc if exc.step is not None else exc.at_step(self.step_index)) from None
        self.rejected_units = judge.rejected
        # What the drivers read to know the history is broken, in shadow ids.
        known = self.calls
        self.orphans = {
            t for c in judge.broken[0] if c in known for t in (known[c].target,) if t is not None
        }
        self.unanswered = {c for c in judge.broken[1] if c in known}
        for i in incidents:
            self.counters[i.kind.value] = self.counters.get(i.kind.value, 0) + 1
        notes: list[Note] = []
        if self.record:  # what the narrative shows of the runtime's request
            if judge.left:
                notes.append(
                    Note(
                        NoteKind.EVICT,
                        "the runtime's request no longer holds " + ", ".join(judge.left),
                        tuple(judge.left),
                    )
                )
            if isinstance(event, Invoke) and not blocked:
                notes.append(
                    Note(
                        NoteKind.INVOKE,
                        f"request sent: {len(judge.prev.order)} messages, {judge.tokens} tokens",
                    )
                )
        return StepResult(tuple(incidents), tuple(notes))

    def _stimulus(
        self, event: Event
    ) -> tuple[s.Stimulus | None, tuple[str, str] | None, str | None]:
        """The stimulus for ``event`` (in the shadow's ids, before it applies),
        the stream it completes and the call it fails."""
        mid = f"m{self.next_message}"
        if isinstance(event, SystemPrompt):
            return s.System(mid, _text(f"⟦{mid}⟧", event.tokens, event.text)), None, None
        if isinstance(event, UserMessage):
            return s.User(mid, _text(f"⟦{mid}⟧", event.tokens, event.text)), None, None
        if isinstance(event, AssistantChunk):
            stream = self.assistant_stream
            sid, k = (mid, 0) if stream is None else (stream.batch, stream.chunks)
            done = ("msg", sid) if event.last else None
            return s.AssistantText(sid, _text(f"⟦{sid}.{k}⟧", event.tokens), event.last), done, None
        if isinstance(event, IssueBatch):
            calls = tuple(
                s.Call(
                    f"c{self.next_call + k}",
                    c.tool,
                    {"path": c.path},
                    "write" if c.effect is Effect.WRITE else "read",
                )
                for k, c in enumerate(event.calls)
            )
            return s.ToolCalls(mid, _text(f"⟦{mid}⟧", event.tokens), calls), None, None
        if isinstance(event, ResultChunk):
            record = self.calls.get(event.call)
            if record is None or record.status is not CallStatus.PENDING:
                return None, None, None  # the shadow ignores it (or raises)
            text = _text(f"⟦{event.call}.{record.chunks}⟧", event.tokens)
            return (
                s.ResultChunk(event.call, text, event.last),
                (("call", event.call) if event.last else None),
                None,
            )
        if isinstance(event, ToolFailure):
            record = self.calls.get(event.call)
            if record is None or record.status is not CallStatus.PENDING:
                return None, None, None
            text = _text(f"⟦{event.call}.x⟧ error: tool {event.reason}", event.tokens)
            return s.ToolFailed(event.call, text), None, event.call
        if isinstance(event, BudgetCheck):
            return s.BudgetCheck(), None, None
        if isinstance(event, Invoke):
            return s.Invoke(), None, None
        if isinstance(event, Retry):
            return (
                (s.Retry() if self.judge is not None and self.judge.rejected is not None else None),
                None,
                None,
            )
        if isinstance(event, ExternalWrite):
            return s.FileChanged(event.path), None, None
        if isinstance(event, ModelNewSession):
            return s.NewSession(), None, None
        return None, None, None

    def _appended(self, event: Event) -> tuple[str, str, int] | None:
        """The message (kind, shadow id, chunk) ``event`` appends."""
        mid = f"m{self.next_message}"
        if isinstance(event, SystemPrompt | UserMessage):
            return ("msg", mid, -1)
        if isinstance(event, AssistantChunk):
            stream = self.assistant_stream
            return ("msg", mid, 0) if stream is None else ("msg", stream.batch, stream.chunks)
        if isinstance(event, IssueBatch):
            return ("call", mid, -1)
        if isinstance(event, ResultChunk | ToolFailure):
            record = self.calls.get(event.call)
            if record is not None and record.status is CallStatus.PENDING:
                return (
                    "result",
                    event.call,
                    record.chunks if isinstance(event, ResultChunk) else -1,
                )
        return None

    def request(self) -> list[Mapping[str, Any]]:
        return list(self.runtime.request())


def _text(mark: str, tokens: int, words: str = "") -> str:
    """``tokens`` words: the marker, then the event's own words, then filler."""
    body = [mark, *words.split()][: max(1, tokens)]
    return " ".join(body) + " ~" * max(0, tokens - len(body))


# ------------------------------------------------------------ the drivers' API
def initial_state(config: RuntimeConfig, policy: Policy, *, record: bool = True) -> RuntimeState:
    """The model's ``initial_state``, or an :class:`UnderTest` for a runtime."""
    under = runtime_of(policy)
    if under is not None:
        return UnderTest.start(config, under, record=record)
    return model_initial_state(config, policy, record=record)


def apply(state: RuntimeState, event: Event, at: float | None = None) -> StepResult:
    """The model's ``apply``, or one judged step of a runtime under test."""
    if isinstance(state, UnderTest):
        return state.step(event, at)
    return model_apply(state, event, at)


def observed_key(state: RuntimeState) -> int:
    """What a runtime under test adds to a state's identity for the
    explorer, as 64 bits to mix into its fingerprint (0 for the model): its
    request, executions and judge."""
    if not isinstance(state, UnderTest) or state.judge is None:
        return 0
    extra = getattr(state.runtime, "state_key", None)
    key = (
        request_digest(state.runtime.request()),
        tuple((e.call, e.tool, e.path, e.effect, e.retry_of) for e in state.runtime.executions()),
        state.judge.key(),
        extra() if callable(extra) else None,
    )
    return hash(key) & _MASK64


def replay(
    trace: Trace, policy: Policy, *, record: bool = True
) -> Iterator[tuple[TraceStep, RuntimeState]]:
    """:func:`prunecheck.model.trace.replay` for models and runtimes alike."""
    state = initial_state(trace.config, policy, record=record)
    for i, event in enumerate(trace.events):
        at = trace.times[i] if trace.times is not None else float(i)
        try:
            result = apply(state, event, at)
        except TraceError as exc:
            raise TraceError(f"events[{i}] ({event.kind})", exc.rule, exc.hint) from None
        yield TraceStep(i, event, at, result), state


def incidents_of(trace: Trace, policy: Policy) -> list[Incident]:
    """Every incident of a replay, in order."""
    return [i for step, _ in replay(trace, policy, record=False) for i in step.result.incidents]


def model_runtime(policy: Policy) -> RuntimePolicy:
    """The model runtime with ``policy``, driven through the protocol."""
    from prunecheck.sim.runtimes.model_runtime import ModelRuntime

    return RuntimePolicy(
        f"runtime:model:{getattr(policy, 'name', 'policy')}",
        lambda config: ModelRuntime(config, policy),
    )
