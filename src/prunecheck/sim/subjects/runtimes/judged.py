"""A runtime under test as a :class:`~prunecheck.model.system.System`.

A push-based runtime (a :class:`~.stimuli.RuntimeUnderTest`: a user's
runtime, the guard's reference runtime, the model runtime behind the same
protocol) is driven with the drivers' own events.  Its state,
:class:`Judged`, is the *shadow* — the model runtime fed the same events
with nothing pruned: the ground truth of calls, results, streams and ids,
and what the drivers read to choose the next event — plus the runtime and
its :class:`~.judge.Judge`.  Each event is rendered as a stimulus
(:mod:`.rendering`) and fed; the judge's incidents are the step's
incidents, so traces, bundles and narratives are those of the model.

What the shadow reports of a broken history (orphans, unanswered calls, a
rejection to retry) is overwritten with what the judge saw in the
runtime's request, in shadow ids: a driver choosing the next event sees the
runtime's history, not the shadow's.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import cast

from prunecheck.model.actions import Action
from prunecheck.model.config import Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import Event, ExternalWrite, Invoke, NewSession, Retry
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.notes import Note, NoteKind
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import Provider
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState, StepResult, initial_state
from prunecheck.model.system import Facts, RequestBody
from prunecheck.sim.subjects.runtimes.judge import Judge, request_digest
from prunecheck.sim.subjects.runtimes.rendering import render
from prunecheck.sim.subjects.runtimes.stimuli import (
    Advancing,
    Copyable,
    Costed,
    Keyed,
    Rejected,
    RuntimeUnderTest,
)

__all__ = ["Judged", "JudgedSystem", "RuntimeFactory", "factory_from"]

#: Builds the runtime under test for a configuration.
RuntimeFactory = Callable[[RuntimeConfig], RuntimeUnderTest]

_MASK64 = (1 << 64) - 1
_FACTS = Facts(reads_times=True, own_gate=True, provider=Provider.OPENAI)

#: Whether a class satisfies an optional protocol (an ABC subclass check, as
#: isinstance makes it first), by (class, protocol).
_BY_CLASS: dict[tuple[type, type], bool] = {}


def _has(runtime: object, protocol: type) -> bool:
    """``isinstance(runtime, protocol)`` for a protocol of one optional
    method (:mod:`.stimuli`), the class's answer remembered: isinstance
    answers True when the class is a subclass, and only when it is not
    looks at the instance; so does this.  (Python 3.11 walks the protocol's
    members at each check: about 5% of a guarded runtime's step.)"""
    key = (runtime.__class__, protocol)
    by_class = _BY_CLASS.get(key)
    if by_class is None:
        by_class = _BY_CLASS[key] = issubclass(runtime.__class__, protocol)
    return by_class or isinstance(runtime, protocol)


def factory_from(obj: object, spec: str) -> RuntimeFactory:
    """A factory from a class or callable taking ``budget=``, ``hard_ceiling=``.

    Raises
    ------
    PolicyError
        if ``obj`` is not callable; the factory raises it if building the
        runtime raises, or the runtime lacks a method of the protocol.
    """
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
                    "implement prunecheck.runtime.RuntimeUnderTest.",
                )
        assert isinstance(runtime, RuntimeUnderTest)
        return runtime

    return make


@dataclass(frozen=True, slots=True)
class _Keep:
    """The shadow's policy: it frees nothing (the shadow keeps every message)."""

    name: str

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        return ()


def _shadow_config(config: RuntimeConfig) -> RuntimeConfig:
    return replace(
        config,
        gate=Gate.NONE,
        retry=RetryMode.IDEMPOTENT,
        repair=Repair.NONE,
        on_stream_loss=StreamLoss.REAPPEND,
    )


@dataclass(slots=True)
class Judged:
    """The state of a judged runtime.

    Attributes
    ----------
    shadow : RuntimeState
        The ground truth (see the module's docs).
    runtime : RuntimeUnderTest
        The runtime under test.
    judge : Judge
        What it has been judged so far.
    config : RuntimeConfig
        The configuration the runtime was built for.
    history : list of Event
        Every event so far (a runtime without ``copy()`` is copied by replaying them).
    """

    shadow: RuntimeState
    runtime: RuntimeUnderTest
    judge: Judge
    config: RuntimeConfig
    history: list[Event] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class JudgedSystem:
    """A runtime under test, judged against the shadow.

    Parameters
    ----------
    name : str
        The spec traces record (``runtime:FILE.py:CLASS``, ``runtime:guard:POLICY`` …).
    make : RuntimeFactory
        Builds the runtime for a configuration.
    """

    name: str
    make: RuntimeFactory
    facts: Facts = field(default=_FACTS, init=False)

    def initial(self, config: RuntimeConfig, *, record: bool = False) -> Judged:
        """A fresh runtime, its judge and an empty shadow."""
        shadow = initial_state(_shadow_config(config), _Keep(self.name), record=record)
        return Judged(shadow, self.make(config), Judge(config.hard_ceiling), config)

    def truth(self, state: Judged) -> RuntimeState:
        """The shadow, with the judge's view of the runtime's broken history."""
        return state.shadow

    def copy(self, state: Judged) -> Judged:
        """An independent copy: the runtime's own ``copy()`` if it has one,
        else a fresh runtime fed the same events (O(events so far))."""
        runtime = state.runtime
        if _has(runtime, Copyable):
            return Judged(
                state.shadow.copy(),
                cast(Copyable, runtime).copy(),
                state.judge.copy(),
                state.config,
                list(state.history),
            )
        twin = self.initial(state.config, record=state.shadow.record)
        for event in state.history:
            self.apply(twin, event)
        return twin

    def key(self, state: Judged) -> int:
        """The runtime's request, executions and state key, and the judge's
        bookkeeping, as 64 bits."""
        runtime = state.runtime
        key = (
            request_digest(runtime.request()),
            tuple((e.call, e.tool, e.path, e.effect, e.retry_of) for e in runtime.executions()),
            state.judge.key(),
            cast(Keyed, runtime).state_key() if _has(runtime, Keyed) else None,
        )
        return hash(key) & _MASK64

    def request(self, state: Judged) -> RequestBody:
        """What the runtime would send now (OpenAI form)."""
        return RequestBody(
            Provider.OPENAI, {"model": "gpt-4.1", "messages": list(state.runtime.request())}
        )

    def apply(self, state: Judged, event: Event, at: float | None = None) -> StepResult:
        """Apply ``event`` to the shadow, feed its stimulus to the runtime and
        judge the runtime's request and executions."""
        shadow, runtime, judge = state.shadow, state.runtime, state.judge
        rendered = render(shadow, event, rejected=judge.rejected is not None)
        blocked = isinstance(event, Invoke) and bool(shadow.pending or shadow.assistant_stream)
        shadow.orphans, shadow.unanswered = set(), set()
        shadow.rejected_units = judge.rejected if isinstance(event, Retry) else None
        apply(shadow, event, at)  # the ground truth; raises on impossible events
        state.history.append(event)
        if isinstance(event, ExternalWrite):
            judge.external_write(event.path)
        if isinstance(event, NewSession):
            judge.new_session()
        try:  # a runtime's failure names the step it failed at
            if rendered.stimulus is not None:
                if at is not None and _has(runtime, Advancing):
                    cast(Advancing, runtime).advance(at)
                runtime.feed(rendered.stimulus)
            if isinstance(event, Retry):
                judge.rejected = None
            incidents = judge.judge(
                shadow.step_index - 1,
                shadow,
                list(runtime.request()),
                list(runtime.executions()),
                completed=rendered.completed,
                failed=rendered.failed,
                invoked=isinstance(event, Invoke) and not blocked,
                costs=cast(Costed, runtime).costs() if _has(runtime, Costed) else None,
                appended=rendered.appended,
            )
            if judge.rejected is not None and isinstance(event, Invoke):
                first = next(i for i in incidents if i.kind is IncidentKind.PROVIDER_REJECTION)
                runtime.feed(Rejected(400, first.text, first.ids))
        except PolicyError as exc:
            raise (exc if exc.step is not None else exc.at_step(shadow.step_index)) from None
        shadow.rejected_units = judge.rejected
        # What the drivers read to know the history is broken, in shadow ids.
        known = shadow.calls
        shadow.orphans = {
            t for c in judge.broken[0] if c in known for t in (known[c].target,) if t is not None
        }
        shadow.unanswered = {c for c in judge.broken[1] if c in known}
        for i in incidents:
            shadow.counters[i.kind.value] = shadow.counters.get(i.kind.value, 0) + 1
        notes: list[Note] = []
        if shadow.record:  # what the narrative shows of the runtime's request
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
