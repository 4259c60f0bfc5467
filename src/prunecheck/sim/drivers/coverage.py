"""Coverage: what a run exercised, and whether a "safe" is vacuous.

As Hypothesis prints its statistics and TLC its coverage, ``check``,
``search`` and ``explore`` report what they exercised: budget checks fired,
how many found the context over budget (*pressure*), how many of those came
while a call was pending or a message open (*live state*, what the
commit-boundary invariant is about), the policy's non-empty proposals and
the prunes applied with live state, user messages that arrived while a
batch was pending, and the incident classes met.

The counts are read from the ground truth a :class:`~prunecheck.model.system.System`
exposes (``system.truth(state).counters``, kept by the model runtime: see
:class:`~prunecheck.model.state.CounterName`), so one :class:`Coverage`
serves every driver and every subject; :class:`CoverageTally` sums them
over runs (whole runs: :meth:`CoverageTally.run`) or over transitions
(the explorer: :meth:`CoverageTally.step`).  A subject that decides its own
prunes (a runtime under test) shows the drivers a shadow that keeps every
message: its proposals are not observed (None), and only pressure, live
state and interleavings are judged.

:func:`gaps` names what was never exercised; a *safe* verdict with a gap is
*vacuous* — it says nothing about the states the invariant is about.  What
flag widens each gap is the command's to say (:mod:`prunecheck.sim.api.vacuity`).

Examples
--------
>>> c = Coverage.from_counters({"checks": 4, "pressed_checks": 2, "policy_calls": 2})
>>> [g.value for g in c.gaps()]
['no_proposal', 'no_live_pressure', 'no_mid_batch_message', 'no_open_check']
>>> c.merge(c).checks
8
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from prunecheck.model.config import CheckAt
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.state import CounterName

__all__ = ["Coverage", "CoverageTally", "Gap", "gaps"]

_INCIDENTS = frozenset(k.value for k in IncidentKind)


class Gap(StrEnum):
    """Something a run never exercised that the invariant is about."""

    #: No budget check found the context over budget: the policy was never asked.
    NO_PRESSURE = "no_pressure"
    #: Asked under pressure, the policy never proposed anything.
    NO_PROPOSAL = "no_proposal"
    #: No check over budget came while a call was pending or a message open.
    NO_LIVE_PRESSURE = "no_live_pressure"
    #: Under pressure with live state, the policy never proposed anything.
    NO_LIVE_PROPOSAL = "no_live_proposal"
    #: No user message arrived while a batch was pending.
    NO_MID_BATCH_MESSAGE = "no_mid_batch_message"
    #: No budget check fired while a message was open (streaming).
    NO_OPEN_CHECK = "no_open_check"

    def describe(self, coverage: Coverage) -> str:
        """What was never exercised, in words, with the counts of ``coverage``."""
        c = coverage
        if self is Gap.NO_PRESSURE:
            return (
                f"none of {c.checks:,} budget check(s) found the context over budget, so the "
                "policy was never asked to free tokens"
            )
        if self is Gap.NO_PROPOSAL:
            return f"the policy proposed nothing in {c.policy_calls:,} call(s) under pressure"
        if self is Gap.NO_LIVE_PRESSURE:
            return (
                f"none of {c.pressed:,} check(s) over budget came while a call was pending or "
                "a message open"
            )
        if self is Gap.NO_LIVE_PROPOSAL:
            return (
                f"the policy proposed nothing in {c.live_pressed:,} check(s) over budget while "
                "a call was pending or a message open"
            )
        if self is Gap.NO_MID_BATCH_MESSAGE:
            return "no user message arrived while a batch was pending"
        return f"none of {c.checks:,} budget check(s) fired while a message was open (streaming)"


@dataclass(frozen=True, slots=True)
class Coverage:
    """Counts of what runs exercised (see the module's docs).

    Attributes
    ----------
    runs : int
        Runs (sessions, scenarios' agents, search runs) or, for the
        explorer, transitions the counts are summed over.
    events : int
        Events applied.
    checks : int
        Budget checks fired.
    pressed : int
        Checks that found the context over budget (tokens to free).
    live_pressed : int
        Of those, checks with a call pending or a message open.
    open_checks : int
        Checks with a message open (streaming).
    policy_calls : int
        Times the policy was asked.
    proposals : int or None
        Non-empty proposals (None: not observed, a runtime under test).
    live_proposals : int or None
        Non-empty proposals made with live state.
    prunes : int or None
        Prunes applied (what the gate let through, non-empty).
    live_prunes : int or None
        Prunes applied with live state.
    mid_batch_messages : int
        User messages that arrived while a call was pending.
    incidents : Mapping[str, int]
        Incidents met, by class (costs included).
    placements : frozenset of CheckAt
        Where the runtimes covered fire their budget checks.
    """

    runs: int = 0
    events: int = 0
    checks: int = 0
    pressed: int = 0
    live_pressed: int = 0
    open_checks: int = 0
    policy_calls: int = 0
    proposals: int | None = 0
    live_proposals: int | None = 0
    prunes: int | None = 0
    live_prunes: int | None = 0
    mid_batch_messages: int = 0
    incidents: Mapping[str, int] = field(default_factory=dict)
    placements: frozenset[CheckAt] = frozenset()

    @classmethod
    def from_counters(
        cls,
        counters: Mapping[str, int],
        *,
        runs: int = 1,
        events: int = 0,
        placements: Iterable[CheckAt] = (),
        proposals_observed: bool = True,
    ) -> Coverage:
        """The coverage of a runtime's counters (``truth(state).counters``,
        or a sum of them).

        Parameters
        ----------
        counters : Mapping[str, int]
            The counters (:class:`CounterName` and incident-class keys).
        runs, events : int
            What they were summed over.
        placements : iterable of CheckAt
            Where the runtime fires its checks.
        proposals_observed : bool
            False for a subject that prunes by itself (its proposals are None).
        """

        def get(name: CounterName) -> int:
            return int(counters.get(name.value, 0))

        def seen(name: CounterName) -> int | None:
            return get(name) if proposals_observed else None

        return cls(
            runs=runs,
            events=events,
            checks=get(CounterName.CHECKS),
            pressed=get(CounterName.PRESSED_CHECKS),
            live_pressed=get(CounterName.LIVE_PRESSED_CHECKS),
            open_checks=get(CounterName.OPEN_CHECKS),
            policy_calls=get(CounterName.POLICY_CALLS) if proposals_observed else 0,
            proposals=seen(CounterName.PROPOSALS),
            live_proposals=seen(CounterName.LIVE_PROPOSALS),
            prunes=seen(CounterName.PRUNES),
            live_prunes=seen(CounterName.LIVE_PRUNES),
            mid_batch_messages=get(CounterName.MID_BATCH_MESSAGES),
            incidents={k: int(n) for k, n in sorted(counters.items()) if k in _INCIDENTS and n},
            placements=frozenset(placements),
        )

    def merge(self, other: Coverage) -> Coverage:
        """The coverage of both (counts summed; a count unobserved on
        either side stays observed from the other)."""
        incidents: Counter[str] = Counter(self.incidents)
        incidents.update(other.incidents)
        return Coverage(
            runs=self.runs + other.runs,
            events=self.events + other.events,
            checks=self.checks + other.checks,
            pressed=self.pressed + other.pressed,
            live_pressed=self.live_pressed + other.live_pressed,
            open_checks=self.open_checks + other.open_checks,
            policy_calls=self.policy_calls + other.policy_calls,
            proposals=_add(self.proposals, other.proposals),
            live_proposals=_add(self.live_proposals, other.live_proposals),
            prunes=_add(self.prunes, other.prunes),
            live_prunes=_add(self.live_prunes, other.live_prunes),
            mid_batch_messages=self.mid_batch_messages + other.mid_batch_messages,
            incidents=dict(sorted(incidents.items())),
            placements=self.placements | other.placements,
        )

    @property
    def proposals_observed(self) -> bool:
        """Whether the policy's proposals were seen (not a runtime under test)."""
        return self.proposals is not None

    def gaps(self) -> tuple[Gap, ...]:
        """What was never exercised (see :func:`gaps`)."""
        return gaps(self)

    @property
    def vacuous(self) -> bool:
        """Whether anything the invariant is about was never exercised."""
        return bool(self.gaps())

    def lines(self) -> list[str]:
        """The coverage in a few lines of text (``coverage: …``)."""
        lines = [
            f"coverage: {self.checks:,} budget check(s), {self.pressed:,} over budget "
            f"({self.live_pressed:,} with a call pending or a message open), "
            f"{self.open_checks:,} with a message open; {self.mid_batch_messages:,} user "
            "message(s) arrived mid-batch"
        ]
        if self.proposals is None:
            lines.append(
                "  proposals: not observed (a runtime under test prunes by itself; "
                "pressure and live state are the shadow's)"
            )
        else:
            lines.append(
                f"  policy asked {self.policy_calls:,} time(s): {self.proposals:,} non-empty "
                f"proposal(s) ({self.live_proposals or 0:,} with live state), "
                f"{self.prunes or 0:,} prune(s) applied ({self.live_prunes or 0:,} with live state)"
            )
        met = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in self.incidents.items())
        lines.append(f"  incident classes met: {met or 'none'}")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The coverage as the verdict schema's ``coverage`` object."""
        return {
            "runs": self.runs,
            "events": self.events,
            "checks": self.checks,
            "pressed_checks": self.pressed,
            "live_pressed_checks": self.live_pressed,
            "open_checks": self.open_checks,
            "policy_calls": self.policy_calls,
            "proposals": self.proposals,
            "live_proposals": self.live_proposals,
            "prunes": self.prunes,
            "live_prunes": self.live_prunes,
            "mid_batch_messages": self.mid_batch_messages,
            "incidents": dict(self.incidents),
            "placements": sorted(str(p) for p in self.placements),
            "gaps": [g.value for g in self.gaps()],
            "vacuous": self.vacuous,
        }


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


def gaps(coverage: Coverage) -> tuple[Gap, ...]:
    """What ``coverage`` never exercised, first the policy's, then the shape's.

    The gaps of live state (and of a check with a message open) are judged
    only for runtimes that can check with live state: a runtime that checks
    only before model calls never does (an invocation waits for pending
    calls and streams), so its verdict is not vacuous for that.  Proposals
    are judged only where they were observed.

    Parameters
    ----------
    coverage : Coverage
        What runs exercised.

    Returns
    -------
    tuple of Gap
        Empty: nothing the invariant is about went unexercised.
    """
    c = coverage
    live = not c.placements or any(p is not CheckAt.BEFORE_INVOKE for p in c.placements)
    found: list[Gap] = []
    if c.pressed == 0:
        found.append(Gap.NO_PRESSURE)
    elif c.proposals == 0:
        found.append(Gap.NO_PROPOSAL)
    if live:
        if c.live_pressed == 0:
            found.append(Gap.NO_LIVE_PRESSURE)
        elif c.live_proposals == 0 and c.proposals != 0:
            found.append(Gap.NO_LIVE_PROPOSAL)
    if c.mid_batch_messages == 0:
        found.append(Gap.NO_MID_BATCH_MESSAGE)
    if live and c.open_checks == 0:
        found.append(Gap.NO_OPEN_CHECK)
    return tuple(found)


class CoverageTally:
    """Sums coverage as a driver runs: whole runs, or the explorer's transitions.

    Parameters
    ----------
    placements : iterable of CheckAt
        Where the runtime fires its checks.
    proposals_observed : bool
        False for a subject that prunes by itself.
    """

    __slots__ = ("_counts", "_observed", "_placements", "events", "runs")

    def __init__(self, placements: Iterable[CheckAt] = (), *, proposals_observed: bool = True):
        self._counts: Counter[str] = Counter()
        self._placements = frozenset(placements)
        self._observed = proposals_observed
        self.runs = 0
        self.events = 0

    def run(self, counters: Mapping[str, int], events: int) -> None:
        """Add one whole run: its final counters and the events it applied."""
        self._counts.update(counters)
        self.runs += 1
        self.events += events

    def step(self, before: Mapping[str, int], after: Mapping[str, int]) -> None:
        """Add one transition: what its counters gained (``after - before``)."""
        counts = self._counts
        for key, n in after.items():
            gained = n - before.get(key, 0)
            if gained:
                counts[key] += gained
        self.runs += 1
        self.events += 1

    def freeze(self) -> Coverage:
        """The coverage so far."""
        return Coverage.from_counters(
            self._counts,
            runs=self.runs,
            events=self.events,
            placements=self._placements,
            proposals_observed=self._observed,
        )
