"""The model runtime driven by its enabled actions (sim/drivers/event_actions.py):
the generic action search that drives an agent loop drives a model-event
System too, with the same shrinker, and what it finds replays as a trace."""

from __future__ import annotations

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import Actions, incidents_of
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.action_search import rerun, search
from prunecheck.sim.drivers.event_actions import EventActions
from prunecheck.sim.drivers.shape import Shape, enabled_events

CONFIG = RuntimeConfig(budget=1000, hard_ceiling=2000)


def _subject(policy: str, max_events: int = 24) -> EventActions[RuntimeState]:
    chosen = builtin_policy(policy)
    assert chosen is not None
    return EventActions(ModelSystem(chosen), CONFIG, Shape.small(CONFIG.budget), max_events)


def test_the_enabled_kinds_are_the_enabled_events_of_the_truth() -> None:
    subject = _subject("recency")
    assert isinstance(subject, Actions)
    run = subject.start(None)
    truth = subject.system.truth(run.state)
    events = enabled_events(truth, run.usage, subject.shape)
    assert subject.enabled(run) == [e.kind for e in events] and events
    user = subject.action(run, "user", lambda n: 0)
    subject.perform(run, user)
    assert run.usage.users == 1 and run.taken == 1


def test_the_action_search_finds_and_shrinks_a_model_runtime_violation() -> None:
    subject = _subject("lowest_salience")
    result = search(subject, seed=1, max_examples=60, shrink_runs=20, polish_runs=40)
    assert result.found is not None and result.found.violations
    assert result.first_length is not None and len(result.found.steps) <= result.first_length
    again = rerun(subject, result.found.steps)
    assert again is not None and again.kinds == result.found.kinds
    trace = Trace(subject.name, CONFIG, tuple(result.found.steps))
    replayed = {i.kind.value for i in incidents_of(trace, subject.system) if i.is_violation}
    assert replayed == set(result.found.kinds)
