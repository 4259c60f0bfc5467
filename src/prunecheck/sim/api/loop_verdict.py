"""``prunecheck check loop:…``: a verdict per scenario class, and one for the agent.

Each scenario class (:data:`~prunecheck.sim.subjects.loops.scenarios.SCENARIOS`) the
configured agent supports is searched with its own number of runs
(:data:`CLASS_EXAMPLES` by default, as many as ``search`` runs for one
class; an explicit ``max_examples`` is shared among the classes) by the
generic action search (:func:`search_scenario`: the loop as a
:class:`~prunecheck.sim.subjects.loops.system.LoopSystem` driven by its own enabled
actions, :mod:`prunecheck.sim.drivers.action_search`); a class the agent
does not support says why.  A cell (the loop's placement) is

* **UNSAFE** — a schedule broke the loop; the cell holds the shrunk one;
* **safe** — no run broke it, the class's own step (a cancel, a resume …)
  was applied (how often is shown) and, for an agent that trims, its own
  code changed the history in at least one schedule;
* **vacuous** — no run broke it, but the class's own step never became
  enabled, or the agent's trimmer never fired (the search grew the
  schedules first: :mod:`.loop_reach`): nothing was tested;
* **n/a** — the agent lacks the capability (no cancel API, no durable
  persistence …);
* **out of time** — the deadline (``--time-limit``) came before the class's
  search found anything or finished: no verdict.

An UNSAFE cell holds every violation kind the class shows (the search goes
on past the kinds found), each finding the **framework's** (the plain agent
fails the same way on its schedule) or the **user's configuration's**
(:mod:`.loop_owner`); the exit status follows the configuration's.

Every searched cell carries its figures (:class:`.loop_reach.Figures`):
schedules in which the user's code changed the history, the widest batch,
the largest history against the budget when known.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from prunecheck.sim.drivers.action_search import Outcome, SearchOutcome, search
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.judge import rules_line
from prunecheck.sim.subjects.loops.offline import offline
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, LoopShape, Scenario, ScenarioClass
from prunecheck.sim.subjects.loops.scheduler import debris_unreported
from prunecheck.sim.subjects.loops.steps import Step
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget

from .loop_owner import Finding, Owner, defining_event, every_kind, versions
from .loop_reach import Figures, grow_search

__all__ = [
    "CLASS_EXAMPLES",
    "Cell",
    "CellVerdict",
    "LoopCheck",
    "cell_of",
    "check_loop",
    "not_applicable_reason",
    "search_scenario",
]

_WHY_NOT = {
    Capability.CANCEL: "the framework has no cancel API for this agent",
    Capability.CRASH_RESUME: "no durable persistence with a resume API in this configuration",
    Capability.CRASH_NEW_MESSAGE: "no durable persistence of the thread in this configuration",
    Capability.INTERRUPT: "no human-in-the-loop approval is configured",
    Capability.TRIM_HOOK: "the configuration does not trim at the framework's hook",
    Capability.TOOL_TIMEOUT: "no tool timeout is configured",
}


#: Runs each scenario class gets by default, as ``search`` of one class runs
#: by default: the same seed then runs the same schedules in both.
CLASS_EXAMPLES = 60


def not_applicable_reason(capability: Capability) -> str:
    """Why a scenario class needing ``capability`` does not apply."""
    return _WHY_NOT[capability]


class CellVerdict(StrEnum):
    UNSAFE = "UNSAFE"
    SAFE = "safe"
    VACUOUS = "vacuous"
    NOT_APPLICABLE = "n/a"
    OUT_OF_TIME = "out of time"


@dataclass(frozen=True, slots=True)
class Cell:
    """One scenario class's verdict.

    Attributes
    ----------
    scenario : Scenario
        The class.
    verdict : CellVerdict
        See the module's docs.
    found : Outcome or None
        The minimal failing schedule (UNSAFE).
    examples : int
        Runs generated.
    schedules : int
        Schedules run, shrinking included.
    exercised : int
        Times the class's own step was applied.
    note : str
        Why n/a, or what a safe cell covered.
    seconds : float
        Wall time (informational).
    saved : str or None
        The failure database's file whose schedule, replayed first, is
        ``found`` (the class was not searched), or None.
    findings : tuple[Finding, ...]
        Every finding of the class (``found`` first, then one per new
        violation kind), each the framework's or the configuration's
        (:mod:`.loop_owner`); empty when not judged.
    figures : Figures or None
        What the class's schedules reached (None: not searched).
    """

    scenario: Scenario
    verdict: CellVerdict
    found: Outcome[Step] | None
    examples: int
    schedules: int
    exercised: int
    note: str
    seconds: float = 0.0
    saved: str | None = None
    findings: tuple[Finding, ...] = ()
    figures: Figures | None = None

    @property
    def kinds(self) -> str:
        """Every violation kind found in the class."""
        if self.findings:
            return ", ".join(sorted(set().union(*(f.kinds for f in self.findings))))
        return ", ".join(sorted(self.found.kinds)) if self.found is not None else ""

    def owned(self, owner: Owner) -> tuple[Finding, ...]:
        """The class's findings of ``owner``."""
        return tuple(f for f in self.findings if f.owner is owner)

    @property
    def configuration_unsafe(self) -> bool:
        """UNSAFE by a finding of the user's configuration (a cell whose
        findings were not judged counts as the configuration's)."""
        if self.verdict is not CellVerdict.UNSAFE:
            return False
        return not self.findings or bool(self.owned(Owner.CONFIGURATION))

    @property
    def described(self) -> str:
        """The violations column: every kind, the framework's marked as such."""
        if not self.findings:
            return self.kinds
        parts = []
        for f in self.findings:
            kinds = ", ".join(sorted(f.kinds))
            parts.append(f"{kinds} (framework)" if f.owner is Owner.FRAMEWORK else kinds)
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class LoopCheck:
    """The verdict of ``check`` on a loop: one cell per scenario class.

    Attributes
    ----------
    target : LoopTarget
        The agent.
    cells : tuple[Cell, ...]
        In the order of :data:`~prunecheck.sim.subjects.loops.scenarios.SCENARIOS`.
    seed : int
        The search's seed.
    rules : str
        Which provider's rules judged the agent's requests, and why
        (:func:`provider_rules`); "" when not told.
    """

    target: LoopTarget
    cells: tuple[Cell, ...]
    seed: int
    rules: str = ""

    @property
    def unsafe(self) -> tuple[Cell, ...]:
        return tuple(c for c in self.cells if c.verdict is CellVerdict.UNSAFE)

    @property
    def configuration_unsafe(self) -> tuple[Cell, ...]:
        """The cells a finding of the user's configuration makes UNSAFE."""
        return tuple(c for c in self.cells if c.configuration_unsafe)

    @property
    def framework_findings(self) -> tuple[tuple[Cell, Finding], ...]:
        """Every framework finding, with its class."""
        return tuple((c, f) for c in self.cells for f in c.owned(Owner.FRAMEWORK))

    def framework_lines(self) -> str:
        """The framework findings, told once, with the version and the reproduction's length."""
        found = self.framework_findings
        if not found:
            return ""
        made = versions(self.target)
        lines = [f"framework findings ({made}: every configuration that can meet the "
                 "schedule shares them; they do not set the exit status without "
                 "--fail-on-framework):"]  # fmt: skip
        for cell, f in found:
            lines.append(f"  - {cell.scenario.title}: {', '.join(sorted(f.kinds))} "
                         f"({len(f.outcome.steps)} steps; {f.why})")  # fmt: skip
        return "\n".join(lines) + "\n"

    @property
    def verdict(self) -> CellVerdict:
        if self.unsafe:
            return CellVerdict.UNSAFE
        if any(c.verdict is CellVerdict.OUT_OF_TIME for c in self.cells):
            return CellVerdict.OUT_OF_TIME
        if any(c.verdict is CellVerdict.SAFE for c in self.cells):
            return CellVerdict.SAFE
        return CellVerdict.VACUOUS

    def table(self) -> str:
        """The scenario table (plain text)."""
        rows = [("scenario class", "verdict", "steps", "violations / covered")]
        for c in self.cells:
            steps = str(len(c.found.steps)) if c.found is not None else "-"
            rows.append((c.scenario.title, c.verdict.value, steps, c.described or c.note))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        out = []
        for n, r in enumerate(rows):
            out.append("  ".join(v.ljust(widths[i]) for i, v in enumerate(r[:3])) + "  " + r[3])
            if n == 0:
                out.append("  ".join("-" * w for w in widths) + "  " + "-" * len(r[3]))
        return "\n".join(out) + "\n"

    def verdict_line(self) -> str:
        who = f"{self.target.reference} ({self.target.framework})"
        if self.verdict is CellVerdict.UNSAFE:
            names = ", ".join(c.scenario.title for c in self.unsafe)
            safe = [c.scenario.title for c in self.cells if c.verdict is CellVerdict.SAFE]
            tail = f"; safe under {', '.join(safe)}" if safe else ""
            if not self.configuration_unsafe:
                return (f"verdict: UNSAFE (framework findings only) — {who} breaks under "
                        f"{names}, as {versions(self.target)}'s plain agent does; your "
                        f"configuration adds none{tail}")  # fmt: skip
            return f"verdict: UNSAFE — {who} breaks under {names}{tail}"
        figures = Figures.combined(c.figures for c in self.cells if c.figures is not None)
        told = f" ({figures.text()})" if figures is not None else ""
        if self.verdict is CellVerdict.SAFE:
            return f"verdict: safe — {who}: no schedule broke it in the classes it supports{told}"
        if self.verdict is CellVerdict.OUT_OF_TIME:
            names = ", ".join(
                c.scenario.title for c in self.cells if c.verdict is CellVerdict.OUT_OF_TIME
            )
            return (
                f"verdict: out of time — {who}: the time limit came before {names} "
                "finished; no verdict"
            )
        if figures is not None and figures.trims and not figures.fired:
            return f"verdict: vacuous — {who}: {figures.text()}; nothing was tested"
        return f"verdict: vacuous — {who}: no scenario class could be exercised{told}"


def check_loop(
    target: LoopTarget,
    *,
    seed: int = 0,
    max_examples: int | None = None,
    scenarios: Sequence[ScenarioClass] | None = None,
    max_steps: int = 16,
    shape: LoopShape | None = None,
    deadline: float | None = None,
    on_class: Callable[[Scenario], None] | None = None,
    replay: Callable[[Scenario], SearchOutcome[Step] | None] | None = None,
) -> LoopCheck:
    """Search every applicable scenario class (see the module's docs).

    Parameters
    ----------
    target : LoopTarget
        The agent and its adapter (:func:`~prunecheck.sim.subjects.loops.target.load_target`).
    seed : int
        The same seed gives the same cells, schedules and counterexamples.
    max_examples : int or None
        None: each applicable class gets :data:`CLASS_EXAMPLES` runs of its
        own (a class whose trimmer never fired gets half as many again per
        rung it grows); a number: runs in all, split evenly among the
        applicable classes (at least 1 each).
    scenarios : Sequence[ScenarioClass] or None
        The classes to check; None: all.
    max_steps : int
        Steps of one schedule at most.
    shape : LoopShape or None
        The bounds every class shares (None: the table's).
    deadline : float or None
        A ``time.monotonic()`` after which no search run starts; the
        classes it cuts short or never reaches are out of time.
    on_class : callable or None
        Called with each applicable class before it is searched (progress).
    replay : callable or None
        Given each applicable class first: the outcome of a saved schedule
        that still breaks the loop there (the failure database, replayed by
        :mod:`.loop_api`) makes the class UNSAFE without a search.
    """
    caps = target.adapter.capabilities(target.target)
    chosen = [SCENARIOS[s] for s in (scenarios or list(SCENARIOS))]
    if shape is not None:
        chosen = [replace(s, shape=shape) for s in chosen]
    live = [s for s in chosen if s.applies(caps)]
    split = None if max_examples is None else max(1, max_examples // max(1, len(live)))
    # an adapter may run fewer by default (a black-box agent: a process per run)
    own = getattr(target.adapter, "class_examples", CLASS_EXAMPLES)
    share = (own if isinstance(own, int) else CLASS_EXAMPLES) if split is None else split
    cells: list[Cell] = []
    grow, fired = True, False
    for scenario in chosen:
        if not scenario.applies(caps):
            assert scenario.needs is not None
            cells.append(Cell(scenario, CellVerdict.NOT_APPLICABLE, None, 0, 0, 0,
                              not_applicable_reason(scenario.needs)))  # fmt: skip
            continue
        if deadline is not None and time.monotonic() >= deadline:
            cells.append(Cell(scenario, CellVerdict.OUT_OF_TIME, None, 0, 0, 0,
                              "not searched: the time limit came first"))  # fmt: skip
            continue
        if on_class is not None:
            on_class(scenario)
        saved = replay(scenario) if replay is not None else None
        if saved is not None:
            cell = cell_of(scenario, saved)
            findings = every_kind(target, scenario, saved, seed=seed, max_examples=share,
                                  max_steps=max_steps, deadline=deadline, rounds=0)  # fmt: skip
            cells.append(replace(cell, findings=findings))
            continue
        result = search_scenario(target, scenario, seed=seed, max_examples=share,
                                 max_steps=max_steps, deadline=deadline, grow=grow)  # fmt: skip
        cell = cell_of(scenario, result, target)
        fired = fired or bool(cell.figures is not None and cell.figures.fired)
        if (
            cell.verdict is CellVerdict.VACUOUS
            and cell.figures is not None
            and (cell.figures.rung and not cell.figures.fired)
            and not fired
        ):
            # it never fired at the top, nor in any class before: the next classes are
            # not grown again (one that fired elsewhere may fire in the next classes)
            grow = False
        if result.found is not None:  # every kind of the class, and whose each is
            cell = replace(cell, findings=every_kind(
                target, scenario, result, seed=seed, max_examples=share, max_steps=max_steps,
                deadline=deadline))  # fmt: skip
        cells.append(cell)
    return LoopCheck(target, tuple(cells), seed, provider_rules(target))


def provider_rules(target: LoopTarget) -> str:
    """Which provider's rules judge ``target``'s requests, and why: the provider
    its adapter reads from the user's model (an adapter's optional ``provider``,
    else its ``providers``; :func:`~prunecheck.sim.subjects.loops.judge.rules_line`)."""
    read = getattr(target.adapter, "provider", None)
    if callable(read):
        found = read(target.target)
        return rules_line(frozenset(found.names), str(found.source))
    names = getattr(target.adapter, "providers", None)
    return rules_line(frozenset(names(target.target)) if callable(names) else frozenset())


def search_scenario(
    target: LoopTarget,
    scenario: Scenario,
    *,
    seed: int = 0,
    max_examples: int = 40,
    max_steps: int = 16,
    shrink_runs: int | None = None,
    polish_runs: int | None = None,
    deadline: float | None = None,
    kinds: frozenset[str] | None = None,
    grow: bool = True,
) -> SearchOutcome[Step]:
    """Search one scenario class: the generic action search of the loop's System,
    grown while the agent's trimmer never fired (:func:`.loop_reach.grow_search`).

    Parameters as :func:`prunecheck.sim.drivers.action_search.search`;
    ``max_steps`` bounds one schedule; ``grow``: False searches the given shape only.
    The trimming class counts only schedules its user's trim caused
    (:func:`.loop_owner.defining_event`).
    """
    accept = defining_event(target, scenario)
    # an adapter may shrink with fewer runs by default (a black-box agent: a process per run)
    shrink_runs = _own(target, "shrink_runs") if shrink_runs is None else shrink_runs
    polish_runs = _own(target, "polish_runs") if polish_runs is None else polish_runs

    def searcher(chosen: Scenario, steps: int, examples: int) -> SearchOutcome[Step]:
        system = LoopSystem(target, chosen, steps)
        return search(system, seed=seed, max_examples=examples, shrink_runs=shrink_runs,
                      polish_runs=polish_runs, deadline=deadline, kinds=kinds,
                      accept=accept)  # fmt: skip

    with confined(), offline(), debris_unreported():  # the agent's code: offline, in the cage
        return grow_search(target, scenario, max_steps, max_examples, searcher, grow=grow)


def _own(target: LoopTarget, name: str) -> int | None:
    """The adapter's own default of a search budget (``shrink_runs`` …), or None."""
    value = getattr(target.adapter, name, None)
    return value if isinstance(value, int) else None


def cell_of(
    scenario: Scenario, result: SearchOutcome[Step], target: LoopTarget | None = None
) -> Cell:
    """The cell of one class's search of ``target`` (see the module's docs;
    without ``target``, no figures and no trimmer to have fired)."""
    key = result.exercised.get(scenario.key, 0)
    figures = Figures.of(result.tally, target) if target and result.tally.runs else None
    applied = f"{result.examples} schedules, {scenario.key} applied {key} times"
    if figures is not None:
        applied = f"{scenario.key} applied {key} times; {figures.text()}"
    if result.found is not None:
        verdict, note = CellVerdict.UNSAFE, ""
        if figures is not None and figures.faults:  # the injected fault is named, unsafe or not
            note = f"the summarizer's model call failed (injected) in {figures.faults} schedules"
    elif result.timed_out:
        verdict = CellVerdict.OUT_OF_TIME
        note = f"{result.examples} schedules before the time limit"
    elif figures is not None and figures.trims and not figures.fired:
        verdict, note = CellVerdict.VACUOUS, applied
    elif key:
        verdict, note = CellVerdict.SAFE, applied
    else:
        verdict = CellVerdict.VACUOUS
        note = f"{result.examples} schedules, {scenario.key} never enabled"
        if figures is not None:
            note = f"{scenario.key} never enabled; {figures.text()}"
    if result.inconsistent:  # an agent in another process answered the same choices differently
        said = (f"{result.inconsistent} schedules dropped: the agent answered choices an "
                "earlier schedule had made differently (its own timing)")  # fmt: skip
        note = f"{note}; {said}" if note else said
    if result.found is not None and not result.exercised:  # replayed, not searched
        key = sum(1 for step in result.found.steps if step.kind == scenario.key)
    return Cell(scenario, verdict, result.found, result.examples, result.schedules, key, note,
                result.seconds, saved=getattr(result, "saved", None) or None,
                figures=figures)  # fmt: skip
