"""The SimPy simulator for subjects driven by their own actions: sessions in simulated time.

:mod:`.simulator` runs model-event :class:`~prunecheck.model.system.System`
subjects (the model runtime, runtimes under test) under a workload of agents
and a world of files; this module is the same simulator for an
:class:`~prunecheck.model.system.Actions` subject (a framework's agent loop,
any model-event System through :class:`.event_actions.EventActions`): it
answers "how often does a session end in a violation under this load?",
where the search (:mod:`.action_search`) answers "can it?".

**A session in time.**  A session is one run of the subject, from ``start``
to its first violation or to its end (nothing pending, the run's own bounds,
or the horizon).  Every action the subject has enabled becomes *pending*: a
SimPy process that waits a latency drawn from the session's
:class:`~.workload.Workload` and then fires, unless the action stopped being
enabled meanwhile.  The earliest fires; the subject's enabled set is read
again; what is newly enabled is drawn a latency, what is no longer enabled
is dropped, and what stays keeps its time.  So the order in which things
complete comes from time under load — a call issued first but drawn a long
latency finishes after one issued later — not from a uniform choice.

What a kind waits on is its :class:`Clock` (:data:`CLOCKS`, by kind name;
a kind not listed ticks like the runtime's own steps):

* ``REPLY`` — a model reply: :meth:`Workload.model_latency` (about 1.2 s);
* ``TOOL`` — a tool call completing: :meth:`Workload.tool_latency`,
  lognormal with median 0.8 s and the load's ``latency_tail`` as its sigma;
* ``USER`` — a person (a message, an approval, a restart after a crash):
  :meth:`Workload.user_gap`, exponential with mean ``user_interval``;
* ``FAULT`` — a failure, a timeout, a cancel, a crash: exponential with rate
  ``pressure × weight / FAULT_MEAN`` (``weight``: how often the subject
  repeats the kind in its enabled list, its way of saying "more likely
  now"); at pressure 0 no fault ever happens.  An exponential clock has no
  memory, so a fault's clock is drawn again at every step (its rate follows
  the subject's weights) at no cost to the statistics;
* ``TIMER`` — the clock reaching a timer the subject set (a tool's timeout,
  a retry's backoff): exponential, mean ``TIMER_MEAN`` (30 s);
* ``TICK`` — anything else (the runtime's own steps): exponential, mean
  ``TICK_MEAN``.

**What an action is about.**  A subject that says which call a kind's
actions concern (:class:`Aimed`: a completion, a failure or a timeout *of
call c*) gets one pending action per call, so each call keeps its own drawn
latency; other kinds are pending once each.

Sessions are independent (each has its own seeded stream,
:func:`session_rng`), so the session is the unit of statistics
(:mod:`prunecheck.sim.stats.sessions` turns counts into exact intervals).
The same seed gives the same session, byte for byte: SimPy orders events of
equal time by when they were scheduled, and pending actions are scheduled in
the subject's own order.

Cost: per step, one read of the enabled set and of each targeted kind's
targets, O(k) bookkeeping for k pending actions, and a heap operation per
newly pending action: O(steps × k log k) around the subject's own work.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, TypeVar, runtime_checkable

import simpy

from prunecheck.model.errors import PrunecheckError
from prunecheck.model.system import A, Actions, Draw, S
from prunecheck.sim.drivers.workload import Load, Workload

__all__ = [
    "CLOCKS",
    "FAULT_MEAN",
    "SESSION_HORIZON",
    "TICK_MEAN",
    "TIMER_MEAN",
    "Aimed",
    "Clock",
    "SessionRun",
    "faults_of",
    "session_rng",
    "simulate_session",
]


class Clock(Enum):
    """What an action of a kind waits on (see the module's docs)."""

    REPLY = "reply"
    TOOL = "tool"
    USER = "user"
    FAULT = "fault"
    TIMER = "timer"
    TICK = "tick"


#: The clock of each kind of action: an agent loop's steps and the model's events.
CLOCKS: Mapping[str, Clock] = {
    # an agent loop's environment (prunecheck.sim.subjects.loops.steps)
    "reply": Clock.REPLY, "complete": Clock.TOOL, "user": Clock.USER,
    "new_message": Clock.USER, "approve": Clock.USER, "resume": Clock.USER,
    "fail": Clock.FAULT, "timeout": Clock.FAULT, "cancel": Clock.FAULT,
    "crash": Clock.FAULT, "model_error": Clock.FAULT, "advance": Clock.TIMER,
    # the model's events (prunecheck.model.events), as EventActions enables them
    "assistant": Clock.REPLY, "batch": Clock.REPLY, "result": Clock.TOOL,
    "failure": Clock.FAULT, "write": Clock.USER,
}  # fmt: skip

#: Mean seconds to a fault of weight 1 at pressure 1, per pending action.
FAULT_MEAN = 5.0
#: Mean seconds until a timer the subject set fires.
TIMER_MEAN = 30.0
#: Mean seconds of a step the runtime takes on its own.
TICK_MEAN = 0.1
#: Simulated seconds a session may last at most.
SESSION_HORIZON = 3600.0
#: The budget the workload's sizes are drawn against (only its latencies are used here).
_BUDGET = 100_000


_S_in = TypeVar("_S_in", contravariant=True)
_A_out = TypeVar("_A_out", covariant=True)


@runtime_checkable
class Aimed(Protocol[_S_in, _A_out]):
    """An :class:`~prunecheck.model.system.Actions` subject that says what an
    action of a kind is about (an agent loop: the call a completion, failure
    or timeout concerns), so that each has its own pending time."""

    def targets(self, state: _S_in, kind: str) -> Sequence[str]:
        """What an action of the enabled ``kind`` can concern now (empty: nothing in particular)."""
        ...

    def aimed(self, state: _S_in, kind: str, target: str, draw: Draw) -> _A_out:
        """An action of ``kind`` about ``target``, its other values drawn."""
        ...


@dataclass(frozen=True, slots=True)
class SessionRun:
    """One session.

    Attributes
    ----------
    steps : int
        Actions performed.
    requests : int
        Requests the subject sent its model.
    faults : int
        Actions of a ``FAULT`` clock performed.
    violations : tuple[str, ...]
        The violation kinds of the step that ended it (sorted; empty: none).
    first_violation : int or None
        The 1-based step of the first violation, or None.
    error : str or None
        What stopped the session if the subject raised (not a violation).
    sim_time : float
        Simulated seconds from the start to the session's end.
    """

    steps: int
    requests: int
    faults: int
    violations: tuple[str, ...]
    first_violation: int | None
    error: str | None = None
    sim_time: float = 0.0

    @property
    def violated(self) -> bool:
        return bool(self.violations)


def session_rng(seed: int, index: int, label: str = "") -> random.Random:
    """The random stream of session ``index`` of a run seeded ``seed`` (``label``
    separates the streams of different groups: a scenario class, a level)."""
    return random.Random(f"prunecheck-session:{seed}:{label}:{index}")


def faults_of(clocks: Mapping[str, Clock] = CLOCKS) -> frozenset[str]:
    """The kinds whose clock is ``FAULT``."""
    return frozenset(kind for kind, clock in clocks.items() if clock is Clock.FAULT)


Key = tuple[str, str]  # (kind, target); target "" for an action about nothing in particular


class _Session:
    """The SimPy side of one session: pending actions, each a process (O(1) per fire check)."""

    def __init__(self, system: Actions[Any, Any], rng: random.Random, load: Load,
                 pressure: float, clocks: Mapping[str, Clock]) -> None:  # fmt: skip
        self.system, self.rng, self.pressure, self.clocks = system, rng, pressure, clocks
        self.aimed: Aimed[Any, Any] | None = system if isinstance(system, Aimed) else None
        self.work = Workload(load, _BUDGET, rng)
        self.env = simpy.Environment()
        self.done = self.env.event()
        self.pending: dict[Key, object] = {}  # key -> the token of its live process
        self.state: Any = None
        self.steps = self.faults = 0
        self.violations: tuple[str, ...] = ()

    def draw(self, n: int) -> int:
        return self.rng.randrange(max(1, n))

    def clock(self, kind: str) -> Clock:
        return self.clocks.get(kind, Clock.TICK)

    def latency(self, kind: str, weight: int) -> float | None:
        """Seconds until an action of ``kind`` happens; None: never (a fault at pressure 0)."""
        clock = self.clock(kind)
        if clock is Clock.FAULT:
            rate = self.pressure * weight / FAULT_MEAN
            return self.rng.expovariate(rate) if rate > 0 else None
        if clock is Clock.REPLY:
            return self.work.model_latency()
        if clock is Clock.TOOL:
            return self.work.tool_latency(False)
        if clock is Clock.USER:
            return self.work.user_gap()
        return self.rng.expovariate(1.0 / (TIMER_MEAN if clock is Clock.TIMER else TICK_MEAN))

    def wanted(self) -> dict[Key, int]:
        """The actions enabled now, by key, with their kind's weight (the subject's order)."""
        kinds = list(self.system.enabled(self.state))
        weights = Counter(kinds)
        keys: dict[Key, int] = {}
        for kind in dict.fromkeys(kinds):
            targets = list(self.aimed.targets(self.state, kind)) if self.aimed else []
            for target in targets or [""]:
                keys[(kind, target)] = weights[kind]
        return keys

    def reschedule(self) -> None:
        """Read the enabled set again: keep what stays (faults drawn anew), add what is new."""
        wanted = self.wanted()
        kept = {k: t for k, t in self.pending.items()
                if k in wanted and self.clock(k[0]) is not Clock.FAULT}  # fmt: skip
        self.pending = kept
        for key, weight in wanted.items():
            if key in kept:
                continue
            delay = self.latency(key[0], weight)
            if delay is not None:
                token = object()
                self.pending[key] = token
                self.env.process(self.wait(key, token, delay))
        if not self.pending and not self.done.triggered:
            self.done.succeed()  # nothing can happen any more: the session is over

    def wait(self, key: Key, token: object, delay: float) -> Generator[simpy.Event, Any, None]:
        yield self.env.timeout(delay)
        if self.pending.get(key) is token and not self.done.triggered:
            self.fire(key)

    def fire(self, key: Key) -> None:
        kind, target = key
        del self.pending[key]  # done: enabled again after it, it is a new action with a new time
        if target and self.aimed is not None:
            action = self.aimed.aimed(self.state, kind, target, self.draw)
        else:
            action = self.system.action(self.state, kind, self.draw)
        found = self.system.perform(self.state, action).incidents
        self.steps += 1
        self.faults += self.clock(kind) is Clock.FAULT
        self.violations = tuple(sorted({i.kind.value for i in found if i.is_violation}))
        if self.violations:
            self.done.succeed()
        else:
            self.reschedule()


def simulate_session(
    system: Actions[S, A],
    rng: random.Random,
    *,
    load: Load,
    pressure: float = 1.0,
    horizon: float = SESSION_HORIZON,
    clocks: Mapping[str, Clock] = CLOCKS,
) -> SessionRun:
    """Run one session of ``system`` in simulated time (see the module's docs).

    Parameters
    ----------
    system : Actions
        The subject (optionally :class:`Aimed`).
    rng : random.Random
        The session's own stream (:func:`session_rng`): the run's bounds,
        every latency and every value an action draws.
    load : Load
        The workload's latencies: ``latency_tail`` (tools), ``user_interval``.
    pressure : float
        Scales every fault's rate (0: no fault, 1: one per ``FAULT_MEAN``
        seconds per pending fault of weight 1).
    horizon : float
        Simulated seconds the session may last.
    clocks : Mapping[str, Clock]
        The clock of each kind (a kind not named: ``TICK``).

    Returns
    -------
    SessionRun
        A subject that raises (other than bad input) ends its session with
        ``error`` set; bad input (a :class:`PrunecheckError`) propagates.
    """
    session = _Session(system, rng, load, pressure, clocks)
    session.state = system.start(session.draw)
    error = None
    try:
        session.reschedule()
        session.env.run(
            until=simpy.AnyOf(session.env, [session.done, session.env.timeout(horizon)])
        )
    except PrunecheckError:  # bad input (an agent that cannot load, …): the caller's
        raise
    except Exception as exc:  # the subject's own failure ends the session; it is said
        error = f"{type(exc).__name__}: {exc}"
    finally:
        requests = system.sent(session.state)
        system.close(session.state)
    first = session.steps if session.violations else None
    return SessionRun(session.steps, requests, session.faults, session.violations, first, error,
                      round(session.env.now, 3))  # fmt: skip
