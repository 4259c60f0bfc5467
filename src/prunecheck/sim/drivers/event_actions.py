"""The model runtime's enabled actions: any model-event System as an :class:`Actions` subject.

A :class:`~prunecheck.model.system.System` speaks the model's events, and
what is enabled is read from its ground truth (``truth``) within a
:class:`~.shape.Shape`'s bounds (:func:`~.shape.enabled_events`, as the
search machine and the explorer read it).  :class:`EventActions` says so in
the :class:`~prunecheck.model.system.Actions` half of the protocol, so that
the generic action search (:mod:`.action_search`) — the one that drives an
agent loop by the steps its live run has enabled — drives the model runtime,
a runtime under test or the guard with the same code: enabled kinds are the
events' kinds (a kind weighs as many events as it has), an action is one of
the enabled events of the chosen kind.

The search state machine (:mod:`.search_machine`) stays the policy search of
``check`` and ``search``: its rules, macro-steps and ``target()`` guidance
reach deeper than uniform choices among enabled events.  This adapter is the
common ground: one driver for every subject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Event, Invoke
from prunecheck.model.state import StepResult
from prunecheck.model.system import Draw, S, System

from .shape import Shape, Usage, enabled_events

__all__ = ["EventActions", "EventRun"]


@dataclass(slots=True)
class EventRun(Generic[S]):
    """One run of a model-event System.

    Attributes
    ----------
    state : S
        The subject's state.
    usage : Usage
        What of the shape the run has used.
    bound : int
        Events at most.
    taken : int
        Events applied.
    sent : int
        Invocations of the model.
    """

    state: S
    usage: Usage
    bound: int
    taken: int = 0
    sent: int = 0


@dataclass(frozen=True, slots=True)
class EventActions(Generic[S]):
    """A model-event ``system`` under ``config``, driven by its enabled events.

    Parameters
    ----------
    system : System
        The subject (the model runtime with a policy, a runtime under test …).
    config : RuntimeConfig
        The runtime's budget, gate and knobs.
    shape : Shape
        The bounds of what may happen (sizes, widths, counts).
    max_events : int
        Events of one run at most (each run draws its own bound up to it).
    """

    system: System[S]
    config: RuntimeConfig
    shape: Shape
    max_events: int = 30

    @property
    def name(self) -> str:
        """The subject's spec."""
        return self.system.name

    def start(self, draw: Draw | None = None) -> EventRun[S]:
        """A fresh runtime; ``draw`` draws how many events the run may take."""
        bound = self.max_events if draw is None else 1 + draw(self.max_events)
        return EventRun(self.system.initial(self.config), Usage(), bound)

    def _events(self, run: EventRun[S]) -> list[Event]:
        return enabled_events(self.system.truth(run.state), run.usage, self.shape)

    def enabled(self, run: EventRun[S]) -> list[str]:
        """The kinds of the events the shape allows in the ground truth now."""
        if run.taken >= run.bound:
            return []
        return [event.kind for event in self._events(run)]

    def action(self, run: EventRun[S], kind: str, draw: Draw) -> Event:
        """One enabled event of ``kind``."""
        events = [event for event in self._events(run) if event.kind == kind]
        return events[draw(len(events))]

    def perform(self, run: EventRun[S], action: Event) -> StepResult:
        """Apply the event at its index (a TraceError if the truth does not allow it)."""
        usage = run.usage.after(action, self.system.truth(run.state))
        result = self.system.apply(run.state, action, float(run.taken))
        run.usage, run.taken = usage, run.taken + 1
        run.sent += isinstance(action, Invoke)
        return result

    def kind(self, action: Event) -> str:
        """The event's kind."""
        return action.kind

    def sent(self, run: EventRun[S]) -> int:
        """Invocations of the model so far."""
        return run.sent

    def close(self, run: EventRun[S]) -> None:
        """Nothing to release (a model state is plain data)."""
