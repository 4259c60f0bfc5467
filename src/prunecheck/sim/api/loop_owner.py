"""Whose failure is it: the framework's, or the user's configuration's.

A finding of ``check loop:`` is a minimal schedule and the violation kinds it
shows.  It is a **framework finding** when every configuration of the
installed framework version shares it, and prunecheck decides that by
experiment, not by guess: the same minimal schedule is replayed against the
framework's **plain agent** — the user's agent built the same way, minus what
the user put on the history's path (history processors, trimming or
clearing middleware, session and model-input filters, a trimming model
context: the adapter's optional ``without_trimming()``) — and if the plain
agent shows every violation kind of the finding, no configuration of the
user's caused it.  Otherwise it is the **configuration's** finding.

The plain agent keeps what the schedule needs to run at all — its tools, its
persistence (a crash resumes from the same kind of store), its approvals and
tool timeouts, the framework's cancel API: a schedule with a resume cannot
replay on an agent without a store.  So "every configuration" reads: every
configuration that can meet the same schedule.

* An agent that puts nothing on the history's path is its framework's
  plain agent: the replay fails the same way, its findings are the
  framework's.
* A schedule the plain agent cannot take (a step not enabled when its turn
  comes) is the configuration's finding: it needs the user's code.
* An adapter that cannot build the plain agent leaves the finding the
  configuration's, and says so: nothing is excused without the replay.

By default the exit status of ``check``/``search`` follows the
configuration's findings; ``--fail-on-framework`` gates on the framework's
too (:mod:`prunecheck.sim.cli.loop_runs`).  Every violation kind found in a
class is reported: :func:`every_kind` searches the class again, past the
kinds found so far (:func:`prunecheck.sim.drivers.action_search.search`'s
``known``), until a search finds no new kind; then, where a kind was found
only as the framework's, once more for that kind as the configuration's (a
schedule the plain agent does not fail the same way): a framework finding
that is quick to reach (a failed tool's call left unanswered) must not hide
the configuration's own finding of the same kind (a call limit that ends a
run with calls of its batch unanswered).  The trimming class's search
requires its defining event (:func:`defining_event`): a schedule that breaks
the plain agent the same way is no finding of the user's trim.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.drivers.action_search import Outcome, SearchOutcome, rerun, search
from prunecheck.sim.evidence.loop_failures import framework_versions
from prunecheck.sim.subjects.loops.scenarios import Scenario, ScenarioClass
from prunecheck.sim.subjects.loops.scheduler import debris_unreported
from prunecheck.sim.subjects.loops.steps import Step
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget

__all__ = [
    "ROUNDS",
    "Finding",
    "Owner",
    "defining_event",
    "every_kind",
    "owner_of",
    "plain_target",
    "versions",
]

#: Searches of one class at most after its first finding (each past the kinds found so far).
ROUNDS = 3

_EVERY_KIND = frozenset(k.value for k in IncidentKind)


class Owner(StrEnum):
    """Whose failure a finding is (see the module's docs)."""

    FRAMEWORK = "framework"
    CONFIGURATION = "configuration"


@dataclass(frozen=True, slots=True)
class Finding:
    """One minimal schedule of a class and whose failure it is.

    Attributes
    ----------
    outcome : Outcome
        The minimal schedule, its incidents.
    kinds : frozenset[str]
        The violation kinds it is the finding of (those it added to the class's).
    owner : Owner
        The framework's, or the configuration's.
    why : str
        How that was decided, in words.
    """

    outcome: Outcome[Step]
    kinds: frozenset[str]
    owner: Owner
    why: str


def versions(target: LoopTarget) -> str:
    """The installed framework's distributions and versions, as a finding names them."""
    found = framework_versions(target.framework)
    return ", ".join(f"{d} {v}" for d, v in found.items()) or target.framework


def plain_target(target: LoopTarget) -> LoopTarget | None:
    """The framework's plain agent of ``target``: the same agent with its
    adapter's ``without_trimming()`` variant, or None (the adapter has none)."""
    make: Callable[[], object] | None = getattr(target.adapter, "without_trimming", None)
    if make is None:
        return None
    plain = make()
    if plain is None:
        return None
    return replace(target, adapter=plain)  # type: ignore[arg-type]


def owner_of(
    target: LoopTarget, scenario: Scenario, outcome: Outcome[Step], kinds: frozenset[str]
) -> tuple[Owner, str]:
    """Whose failure the finding ``outcome`` (of violation ``kinds``) is, and why."""
    plain = plain_target(target)
    if plain is None:
        return Owner.CONFIGURATION, (
            f"the {target.framework} adapter cannot build the framework's plain agent, "
            "so the finding is not excused"
        )
    system = LoopSystem(plain, scenario, max(len(outcome.steps), 1))
    replayed = rerun(system, outcome.steps, known=_EVERY_KIND)
    same = "the same schedule"
    if replayed is None and (aside := _aside_steps(target, scenario, outcome.steps)):
        # the user's own model calls (a summarizer's) are requests the plain agent never
        # makes: the schedule less the replies to them
        kept = [step for i, step in enumerate(outcome.steps) if i not in aside]
        replayed = rerun(system, kept, known=_EVERY_KIND)
        same = "the same schedule less its replies to the configuration's own model calls"
    if replayed is None:
        return Owner.CONFIGURATION, (
            "the plain agent (without the user's trimming) cannot take the same schedule"
        )
    if kinds <= replayed.kinds:
        return Owner.FRAMEWORK, (
            f"the plain agent of {versions(target)} (without the user's trimming) fails "
            f"the same way on {same}"
        )
    return Owner.CONFIGURATION, (
        "the plain agent (without the user's trimming) does not fail this way on the same "
        "schedule: " + (", ".join(sorted(replayed.kinds)) or "no violation")
    )


def _aside_steps(target: LoopTarget, scenario: Scenario, steps: Sequence[Step]) -> set[int]:
    """The indices of ``steps`` that answer a model call the user's own code made
    aside (a summarizer's), found by playing them on ``target`` once more."""
    system = LoopSystem(target, scenario, max(len(steps), 1))
    state = system.start(None)
    try:
        for step in steps:
            try:
                system.perform(state, step)
            except TraceError:
                break
        return set(state.run.aside_steps)
    finally:
        system.close(state)


def defining_event(
    target: LoopTarget, scenario: Scenario
) -> Callable[[Outcome[Step]], bool] | None:
    """What makes a run a finding *of* ``scenario``, or None: any violation.

    The trimming class is about the user's trim: a schedule that breaks the
    framework's plain agent the same way (a failed tool, no trim at all)
    shows nothing of it, and is no finding of that class (it is one of the
    class its own event belongs to: a tool failure, a cancel).  Every other
    class's own step is in its schedules by construction.
    """
    if scenario.name is not ScenarioClass.TRIM or plain_target(target) is None:
        return None

    def accept(outcome: Outcome[Step]) -> bool:
        owner, _ = owner_of(target, scenario, outcome, outcome.kinds)
        return owner is Owner.CONFIGURATION

    return accept


def every_kind(
    target: LoopTarget,
    scenario: Scenario,
    first: SearchOutcome[Step],
    *,
    seed: int,
    max_examples: int,
    max_steps: int,
    deadline: float | None = None,
    rounds: int = ROUNDS,
) -> tuple[Finding, ...]:
    """Every finding of a class: the first search's, then searches past the
    kinds found so far, each with what is left of ``max_examples`` (at least
    a tenth of it), until one finds no new kind or ``rounds`` are spent.  What the
    dropped runs of these searches leave is not reported, as in the first search
    (:func:`~prunecheck.sim.subjects.loops.scheduler.debris_unreported`)."""
    if first.found is None:
        return ()
    with debris_unreported():
        return _every_kind(target, scenario, first, seed=seed, max_examples=max_examples,
                           max_steps=max_steps, deadline=deadline, rounds=rounds)  # fmt: skip


def _every_kind(
    target: LoopTarget,
    scenario: Scenario,
    first: SearchOutcome[Step],
    *,
    seed: int,
    max_examples: int,
    max_steps: int,
    deadline: float | None,
    rounds: int,
) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    found: Outcome[Step] | None = first.found
    known: frozenset[str] = frozenset()
    left = max(max_examples - first.examples, max_examples // 10, 1)
    for n in range(rounds + 1):
        if found is None:
            break
        kinds = found.kinds - known
        owner, why = owner_of(target, scenario, found, kinds)
        findings.append(Finding(found, kinds, owner, why))
        known |= kinds
        if n == rounds or (deadline is not None and time.monotonic() >= deadline):
            break
        system = LoopSystem(target, scenario, max_steps)
        more = search(system, seed=seed + n + 1, max_examples=left, deadline=deadline,
                      known=known, accept=defining_event(target, scenario))  # fmt: skip
        found = more.found
        left = max(left - more.examples, max_examples // 10, 1)
    mine = _configuration_finding(
        target, scenario, findings,
        seed=seed + rounds + 1, max_examples=left, max_steps=max_steps, deadline=deadline,
    )  # fmt: skip
    return (*findings, mine) if mine is not None else tuple(findings)


def _configuration_finding(
    target: LoopTarget,
    scenario: Scenario,
    findings: list[Finding],
    *,
    seed: int,
    max_examples: int,
    max_steps: int,
    deadline: float | None,
) -> Finding | None:
    """The configuration's finding of a kind the class found only as the
    framework's, or None: one search where only those kinds count, a run
    counting only if the plain agent does not fail the same way."""
    mine = frozenset().union(*(f.kinds for f in findings if f.owner is Owner.CONFIGURATION))
    theirs = frozenset().union(*(f.kinds for f in findings if f.owner is Owner.FRAMEWORK))
    if not theirs - mine or plain_target(target) is None:
        return None
    if deadline is not None and time.monotonic() >= deadline:
        return None
    known = _EVERY_KIND - (theirs - mine)

    def accept(outcome: Outcome[Step]) -> bool:
        owner, _ = owner_of(target, scenario, outcome, outcome.kinds - known)
        return owner is Owner.CONFIGURATION

    system = LoopSystem(target, scenario, max_steps)
    more = search(system, seed=seed, max_examples=max_examples, deadline=deadline,
                  known=known, accept=accept)  # fmt: skip
    if more.found is None:
        return None
    kinds = more.found.kinds - known
    owner, why = owner_of(target, scenario, more.found, kinds)
    return Finding(more.found, kinds, owner, why)
