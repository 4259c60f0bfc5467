"""Explore every action sequence of a subject driven by its own actions, up to a depth.

The bounded, exhaustive driver of an :class:`~prunecheck.model.system.Actions`
subject (a framework's agent loop; the model runtime as
:class:`~prunecheck.sim.drivers.event_actions.EventActions`), beside the
search of :mod:`.action_search`.  A run is a path through the subject's
*choice tree*: at each step, which of the kinds of action enabled now
happens, then each value the action draws (which call completes, which size
an output has).  The explorer walks that tree depth-first, like an
odometer: a run replays the choices of the run before up to its last choice
that still has an untried alternative, takes that alternative, and takes the
first alternative of every choice after it.  Depths grow one at a time
(iterative deepening), so the first run that breaks the invariant is a
shortest one: no run of fewer actions breaks it, within the bounds below.

The bounds are stated in the result:

- ``depth``: actions a run may take;
- ``values``: alternatives tried per value an action draws (the first
  ``values`` of each, default 3; 0: all).  The kinds enabled are always all
  tried.  Two is too few for an agent loop: a reply of two parallel calls
  is its third alternative;
- ``max_runs``: runs in all; a walk cut by it (or by the deadline) is not
  ``complete`` and proves nothing past the depth it finished.

Each run starts the subject with its own bounds at their widest (for an
agent loop: every kind of step its scenario class allows), where a search
draws narrower ones.  Nothing is remembered between runs but the choices: a subject that is a
live program (an agent loop) cannot be snapshotted, so each run starts it
afresh and replays, as a stateless model checker (VeriSoft, CHESS) does.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic

from prunecheck.model.incidents import Incident
from prunecheck.model.system import A, Actions, S
from prunecheck.sim.drivers.action_search import Outcome, SearchOutcome

__all__ = ["ExploreOutcome", "explore_actions"]


@dataclass(frozen=True, slots=True)
class ExploreOutcome(Generic[A]):
    """What a bounded exploration found.

    Attributes
    ----------
    search : SearchOutcome
        The result in a search's terms (``found`` is a shortest breaking run,
        ``examples`` and ``schedules`` the runs made), so a verdict, a
        narrative and a bundle take it as they take a search's.
    depth : int
        The deepest depth whose every run was made (0: none).
    complete : bool
        Every run up to the asked depth was made (nothing cut it short).
    bounds : dict[str, int]
        The depth, values and max_runs asked for.
    """

    search: SearchOutcome[A]
    depth: int
    complete: bool
    bounds: dict[str, int] = field(default_factory=dict)

    @property
    def found(self) -> Outcome[A] | None:
        return self.search.found


def _widest(n: int) -> int:
    """The subject's own bounds at their widest: every kind its class allows,
    its longest runs (a search draws narrower ones: swarm testing)."""
    return max(0, n - 1)


class _Cut(Exception):
    """The run budget or the deadline ended the walk."""


@dataclass(slots=True)
class _Walk:
    """One run's choices: (taken, alternatives) at each choice point."""

    prefix: list[int]
    made: list[tuple[int, int]] = field(default_factory=list)

    def choose(self, alternatives: int) -> int:
        at = len(self.made)
        taken = self.prefix[at] if at < len(self.prefix) else 0
        taken = min(taken, max(0, alternatives - 1))
        self.made.append((taken, max(1, alternatives)))
        return taken

    def next_prefix(self) -> list[int] | None:
        """The choices of the next run in odometer order; None when the tree is done."""
        for at in range(len(self.made) - 1, -1, -1):
            taken, alternatives = self.made[at]
            if taken + 1 < alternatives:
                return [t for t, _ in self.made[:at]] + [taken + 1]
        return None


def _run(
    system: Actions[S, A],
    walk: _Walk,
    depth: int,
    values: int,
    exercised: Counter[str],
) -> Outcome[A]:
    """One run along ``walk``'s choices, at most ``depth`` actions."""

    def value(n: int) -> int:
        return walk.choose(min(n, values) if values else n)

    state = system.start(_widest)
    try:
        steps: list[A] = []
        incidents: list[Incident] = []
        while len(steps) < depth:
            kinds = list(dict.fromkeys(system.enabled(state)))  # weights mean nothing here
            if not kinds:
                break
            kind = kinds[walk.choose(len(kinds))]
            action = system.action(state, kind, value)
            exercised[kind] += 1
            found = system.perform(state, action).incidents
            steps.append(action)
            incidents.extend(found)
            if any(i.is_violation for i in found):
                break
        return Outcome(tuple(steps), tuple(incidents), system.sent(state))
    finally:
        system.close(state)


def explore_actions(
    system: Actions[S, A],
    *,
    depth: int,
    values: int = 3,
    max_runs: int = 5_000,
    deadline: float | None = None,
    kinds: frozenset[str] | None = None,
    on_depth: Callable[[int, int], None] | None = None,
) -> ExploreOutcome[A]:
    """Every run of at most ``depth`` actions (within ``values`` and
    ``max_runs``, see the module's docs), shortest first; stops at the first
    run that breaks the invariant (with a violation kind in ``kinds``, when
    given).  ``deadline`` is a :func:`time.monotonic` instant; ``on_depth``
    is told each depth finished and the runs made so far."""
    started = time.perf_counter()
    exercised: Counter[str] = Counter()
    runs = actions = 0
    found: Outcome[A] | None = None
    done = 0
    complete = True
    try:
        for bound in range(1, depth + 1):
            prefix: list[int] | None = []
            while prefix is not None:
                if runs >= max_runs or (deadline is not None and time.monotonic() > deadline):
                    raise _Cut
                walk = _Walk(prefix)
                outcome = _run(system, walk, bound, values, exercised)
                runs += 1
                actions += len(outcome.steps)
                hit = outcome.kinds if kinds is None else outcome.kinds & kinds
                if hit:
                    found = outcome
                    break
                prefix = walk.next_prefix()
            if found is not None:
                break
            done = bound
            if on_depth is not None:
                on_depth(bound, runs)
    except _Cut:
        complete = False
    if found is not None:
        complete = False  # the walk stopped at a finding, not at the bound
    seconds = time.perf_counter() - started
    length = len(found.steps) if found is not None else None
    outcome_of = SearchOutcome(
        found, runs, runs, actions, exercised, length, seconds, timed_out=not complete and
        found is None and deadline is not None and time.monotonic() > deadline,
    )  # fmt: skip
    bounds = {"depth": depth, "values": values, "max_runs": max_runs}
    return ExploreOutcome(outcome_of, done, complete, bounds)
