"""The subject every driver drives: one :class:`System` protocol.

In the manner of stateright's ``Model`` (initial states, actions, the next
state, properties), a *system* is what a driver needs of the thing under
test, and nothing else:

* :meth:`System.initial` — the state of a fresh runtime under a
  :class:`~prunecheck.model.config.RuntimeConfig`;
* :meth:`System.truth` — the ground-truth model state a driver reads to
  choose the next *enabled* event (pending calls, open streams, a
  rejection to retry …): the drivers' alphabet is the model's
  :mod:`~prunecheck.model.events`, whatever the subject is;
* :meth:`System.apply` — the next-state relation, one event in place; its
  :class:`~prunecheck.model.state.StepResult` carries the incidents, which
  are the properties checked (a violation is a counterexample);
* :meth:`System.copy` and :meth:`System.key` — what the explorer needs to
  branch and to fingerprint a state beyond its ground truth;
* :meth:`System.request` — the request the subject would send now (what a
  reproduction bundle shows);
* :attr:`System.name` and :attr:`System.facts` — the spec a trace records,
  and what a driver may know before running the subject.

Implementations: the model runtime with a policy
(:class:`prunecheck.model.model_system.ModelSystem`); a runtime under test
pushed stimuli and judged against a shadow
(:class:`prunecheck.sim.subjects.runtimes.judged.JudgedSystem`: a user's
``RuntimeUnderTest``, the guard's reference runtime, the model runtime
behind that protocol).  A framework's agent loop, where the framework
decides when the model is called and the harness owns the environment, is
one more: its state holds the loop and the harness's ledger, ``truth``
reads the ledger, ``apply`` delivers one event of the environment.

**Enabled actions** (:class:`Actions`, issue 30).  A driver that proposes
model events from ``truth`` may propose what the subject is not ready for:
a framework's agent loop decides itself when it calls the model and runs
its tools.  The second half of the protocol is the subject's own alphabet:
:meth:`Actions.enabled` says which kinds of action can happen *now* (for a
loop, read from the live run: a model request waiting for its reply, tool
calls outstanding — complete, fail, time out —, a user message, a cancel,
a crash, a resume, an interrupt's approval, the clock), and
:meth:`Actions.action` draws one of a kind with every value concrete, so
that the sequence replays without its chooser.  The model runtime's
enabled actions are its enabled events, derived from ``truth`` as the
drivers do (:mod:`prunecheck.sim.drivers.shape`): any model-event System is
an :class:`Actions` subject through
:class:`prunecheck.sim.drivers.event_actions.EventActions`; a loop's come
from its :class:`~prunecheck.sim.subjects.loops.scheduler.LoopRun`
(:class:`prunecheck.sim.subjects.loops.system.LoopSystem`).  One search and one
shrinker (:mod:`prunecheck.sim.drivers.action_search`) take any
:class:`Actions` subject.

Why this shape: the state is a type parameter, not a field of ``Any`` on a
model state, so each implementation keeps what it needs (the model's
:class:`~prunecheck.model.state.RuntimeState` alone, or a shadow with a
runtime and its judge) and drivers never look inside it.  Drivers import
this module only, never an implementation (a contract in ``make lint``).

:func:`replay` and :func:`incidents_of` are the one replay of a trace for
every subject.  Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from .config import RuntimeConfig
from .errors import TraceError
from .events import Event
from .incidents import Incident
from .provider import Provider
from .state import RuntimeState, StepResult
from .trace import Trace, TraceStep

__all__ = [
    "A",
    "Actions",
    "Draw",
    "Facts",
    "Fragile",
    "RequestBody",
    "S",
    "System",
    "incidents_of",
    "replay",
]

#: The state type of a system (each implementation chooses its own).
S = TypeVar("S")

#: The action type of an :class:`Actions` subject (a loop's steps, the model's events).
A = TypeVar("A")

#: ``draw(n)``: an integer in ``range(n)`` (n >= 1): Hypothesis's choice in a
#: search, a seeded ``random.Random``'s in a walk.
Draw = Callable[[int], int]


@dataclass(frozen=True, slots=True)
class Facts:
    """What a driver may know of a subject before running it.

    Attributes
    ----------
    reads_times : bool
        Whether the subject may read messages' creation times beyond their
        order (a decaying salience does).  If not, the explorer folds
        states that differ only in when messages were created.
    own_gate : bool
        Whether the subject decides its own prunes' safety, so that the
        configuration's ``gate`` does not apply to it (a runtime under
        test is its own code).
    provider : Provider or None
        The request format the subject speaks; None: the configuration's
        ``provider``.
    """

    reads_times: bool = True
    own_gate: bool = False
    provider: Provider | None = None


@dataclass(frozen=True, slots=True)
class RequestBody:
    """A request as the subject would send it now.

    Attributes
    ----------
    provider : Provider
        Whose rules it is judged by.
    body : Mapping[str, object]
        The JSON body (``messages`` and the rest).
    """

    provider: Provider
    body: Mapping[str, object]


@runtime_checkable
class System(Protocol[S]):
    """A subject the drivers drive (see the module's docs).

    ``apply`` mutates the state it is given; drivers that branch call
    ``copy`` first.  ``truth(state)`` is read-only for drivers.

    Attributes
    ----------
    name : str
        The spec a trace records.
    facts : Facts
        What a driver may know before running the subject.
    """

    @property
    def name(self) -> str:
        """The spec a trace records (``lowest_salience``, ``runtime:guard:recency`` …)."""
        ...

    @property
    def facts(self) -> Facts:
        """What a driver may know before running the subject."""
        ...

    def initial(self, config: RuntimeConfig, *, record: bool = False) -> S:
        """A fresh runtime under ``config``.

        Parameters
        ----------
        config : RuntimeConfig
            The runtime's budget, gate and knobs.
        record : bool
            Keep notes for narratives (off in the drivers' hot loops).

        Returns
        -------
        S
            The state, which ``apply`` updates in place.
        """
        ...

    def apply(self, state: S, event: Event, at: float | None = None) -> StepResult:
        """Apply one event in place at time ``at``; what it did (incidents, notes).

        Parameters
        ----------
        state : S
            The state, updated in place.
        event : Event
            One of the model's events.
        at : float or None
            The event's time (simulated seconds); None: its step index.

        Returns
        -------
        StepResult
            The step's incidents (the properties checked) and notes.

        Raises
        ------
        TraceError
            if the event is impossible in the ground truth.
        PolicyError
            if the subject's policy (or the subject) failed.
        """
        ...

    def truth(self, state: S) -> RuntimeState:
        """The ground truth: the model state drivers read to choose the next event."""
        ...

    def copy(self, state: S) -> S:
        """An independent copy of ``state``."""
        ...

    def key(self, state: S) -> int:
        """64 bits of ``state``'s identity beyond its ground truth (0 if none)."""
        ...

    def request(self, state: S) -> RequestBody:
        """The request the subject would send now."""
        ...


@runtime_checkable
class Actions(Protocol[S, A]):
    """A subject driven by its own enabled actions (see the module's docs).

    A driver's run: ``state = start(draw)``; then, while ``enabled(state)``
    is not empty, pick a kind among them with ``draw``, make the action with
    ``action(state, kind, draw)`` and ``perform`` it; ``close(state)`` at the
    end, always.  A replay (``start(None)``) performs given actions, and an
    action not enabled when its turn comes is a
    :class:`~prunecheck.model.errors.TraceError`.

    Attributes
    ----------
    name : str
        The spec of the subject.
    """

    @property
    def name(self) -> str:
        """The subject's spec (``loop:examples/loops/x.py:agent`` …)."""
        ...

    def start(self, draw: Draw | None = None) -> S:
        """A fresh subject; ``draw`` draws the run's own bounds (swarm
        testing), None: no bounds beyond the subject's (a replay)."""
        ...

    def enabled(self, state: S) -> Sequence[str]:
        """The kinds of action that can happen now, a kind repeated to weigh
        more; empty when none can (or the run's bounds are reached)."""
        ...

    def action(self, state: S, kind: str, draw: Draw) -> A:
        """An action of an enabled ``kind``, every value drawn (ids, sizes, …)."""
        ...

    def perform(self, state: S, action: A) -> StepResult:
        """Perform ``action`` now; its incidents.

        Raises
        ------
        TraceError
            If the action is not enabled now.
        """
        ...

    def kind(self, action: A) -> str:
        """The kind of ``action`` (what a driver counts as exercised)."""
        ...

    def sent(self, state: S) -> int:
        """Requests the subject sent its model so far."""
        ...

    def close(self, state: S) -> None:
        """Release what the run holds (its event loops, its store)."""
        ...


@runtime_checkable
class Fragile(Protocol):
    """A subject (or policy) that can fail for good — a caged policy whose
    worker hung or died: every later call would fail at once, so a search
    stops instead of shrinking."""

    def failed_for_good(self) -> bool: ...


def replay(
    trace: Trace, system: System[S], *, record: bool = True
) -> Iterator[tuple[TraceStep, S]]:
    """Run a trace from a fresh state of ``system``; yield each step with
    the state after it.

    The state object is the same one throughout (updated in place); copy it
    with ``system.copy`` if you keep it.  Times are the trace's, or the
    event's index.

    Parameters
    ----------
    trace : Trace
        The events, the configuration and (optionally) the times.
    system : System
        What replays them: ``ModelSystem(policy)`` for a policy in the
        model runtime, a ``JudgedSystem`` for a runtime under test.
    record : bool
        Keep notes (what narratives tell).

    Yields
    ------
    tuple of (TraceStep, S)
        Each step and the state after it.

    Raises
    ------
    TraceError
        at the first impossible event, naming it.
    TypeError
        if ``system`` is not a :class:`System` (a bare policy, say).
    """
    if not isinstance(system, System):
        raise TypeError(
            f"replay takes a System, got {type(system).__name__}; "
            "wrap a policy once: prunecheck.model.ModelSystem(policy)"
        )
    state = system.initial(trace.config, record=record)
    for i, event in enumerate(trace.events):
        at = trace.times[i] if trace.times is not None else float(i)
        try:
            result = system.apply(state, event, at)
        except TraceError as exc:
            raise TraceError(f"events[{i}] ({event.kind})", exc.rule, exc.hint) from None
        yield TraceStep(i, event, at, result), state


def incidents_of(trace: Trace, system: System[S]) -> list[Incident]:
    """Every incident of a replay of ``trace`` by ``system``, in order.

    Parameters
    ----------
    trace : Trace
        The trace to replay.
    system : System
        What replays it (see :func:`replay`).

    Returns
    -------
    list of Incident
        Costs and violations, step by step.

    Raises
    ------
    TraceError
        at the first impossible event.
    """
    return [i for step, _ in replay(trace, system, record=False) for i in step.result.incidents]
