"""The figures behind a loop's verdict, and the search that grows until the user's code fires.

No "safe" without figures: every searched scenario class reports, over its
generated schedules, in how many the user's code changed the history (a
trimmer, a summarizer, a clearing edit removed or rewrote something:
:class:`prunecheck.sim.subjects.loops.reach.Watch`), the widest batch, and the
largest history sent (tokens by the framework's own counter where it has
one, else estimated, said so; messages; characters) against the budget the
configuration states, when prunecheck can read it.

:func:`grow_search` is the class's search: the default shape first, then,
while nothing broke an agent that trims, the rungs of
:func:`prunecheck.sim.subjects.loops.ladder.ladder` (wider batches, larger
tool outputs, longer schedules), each with half the class's schedules while
the agent's own code has not once changed the history, a quarter once it has
(their runs are the long, costly ones).  A trimmer that fired at once may
still cut a unit on a longer schedule: a cheap rule of it (the last two user
turns) fires first, a second (at most nine messages, cutting a long turn)
only on four or five tool rounds in one turn; a cap a checkpoint applies only
after enough steps.  Before, growth stopped at the first change, and both
such agents were called safe.  ``check`` and ``search`` run the
same growth, so with the same seed and count they run the same schedules.

What "exercised" means per class (documented in docs/how-to/own-runtime.md):

* an agent that trims at the framework's hook: the class's own step applied
  (a cancel, a resume …) **and** the user's code changed the history in at
  least one schedule; a class where it never did is vacuous, with the
  figures ("the trimmer never fired in 120 schedules; largest history 3,100
  tokens against its budget of 8,000 tokens");
* an agent that does not trim: the class's own step applied (the pairing of
  calls and results across cancels, crashes and approvals is tested with or
  without trimming); the figures still say how wide and large it got.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from prunecheck.sim.drivers.action_search import SearchOutcome, Tally
from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.ladder import ladder
from prunecheck.sim.subjects.loops.reach import Budget, budget_of, counter_name
from prunecheck.sim.subjects.loops.repair import RepairCounts
from prunecheck.sim.subjects.loops.scenarios import LoopShape, Scenario
from prunecheck.sim.subjects.loops.steps import Step
from prunecheck.sim.subjects.loops.target import LoopTarget

__all__ = ["Figures", "grow_search", "trims"]

#: A search of one class on one shape: (scenario, max_steps, max_examples) -> outcome.
Searcher = Callable[[Scenario, int, int], SearchOutcome[Step]]


def trims(target: LoopTarget) -> bool:
    """Whether the configured agent trims at the framework's hook."""
    return Capability.TRIM_HOOK in target.adapter.capabilities(target.target)


@dataclass(frozen=True, slots=True)
class Figures:
    """What one scenario class's schedules reached (see the module's docs).

    Attributes
    ----------
    schedules : int
        Generated schedules measured.
    changed : int
        Schedules in which the user's code removed or rewrote something.
    trims : bool
        The agent trims at the framework's hook.
    widest : int
        The widest parallel batch issued.
    messages, chars, tokens : int
        The largest history sent: messages, characters, tokens.
    counter : str
        How the tokens were counted.
    budget : Budget or None
        The budget the configuration states, if read.
    rung : int
        Rungs of the ladder climbed (0: the default shape only).
    grown : str
        The last rung's shape, said in words ("" for none).
    faults : int
        Schedules in which a summarizer's model call failed (``model_error``, injected).
    repairs : RepairCounts
        What the framework's repair layer did to histories on their way to
        the model (:mod:`prunecheck.sim.subjects.loops.repair`), and which
        providers reject a history it repaired, as it was before.
    oldest_ms : int
        The oldest message's age at a request, in milliseconds: the longest
        span from a schedule's first request to its last (what a threshold in
        time, :data:`~prunecheck.sim.subjects.loops.reach.TIME_UNITS`, is against;
        in ``--json`` only with such a budget).  Measured in real time as well as
        virtual, it differs between two runs of the same schedules: not compared.
    output : int
        Characters of the longest output a tool returned (what a threshold on
        one output, :attr:`~prunecheck.sim.subjects.loops.reach.Budget.per_output`,
        is against).
    users : int
        The most user messages one request held (what a budget in turns is against).
    """

    schedules: int
    changed: int
    trims: bool
    widest: int
    messages: int
    chars: int
    tokens: int
    counter: str
    budget: Budget | None = None
    rung: int = 0
    grown: str = ""
    faults: int = 0
    repairs: RepairCounts = field(default_factory=RepairCounts)
    oldest_ms: int = field(default=0, compare=False)  # wall time: no two runs measure it alike
    output: int = 0
    users: int = 0

    @classmethod
    def of(cls, tally: Tally, target: LoopTarget) -> Figures:
        """The figures of a class's search of ``target``."""
        most = tally.most
        rung = most.get("rung", 0)
        steps = ladder(budget_of(target.adapter, target.target))
        return cls(
            tally.runs, tally.hits["changed"], trims(target), most.get("widest", 0),
            most.get("messages", 0), most.get("chars", 0), most.get("tokens", 0),
            counter_name(target.adapter), budget_of(target.adapter, target.target), rung,
            steps[rung - 1].text() if 0 < rung <= len(steps) else "",
            tally.hits["model_failed"], RepairCounts.of(tally.hits), most.get("oldest_ms", 0),
            most.get("output", 0), most.get("users", 0),
        )  # fmt: skip

    @classmethod
    def combined(cls, figures: Iterable[Figures]) -> Figures | None:
        """Every class's figures as one (None: none)."""
        every = list(figures)
        if not every:
            return None
        top = max(every, key=lambda f: (f.tokens, f.chars))
        return cls(
            sum(f.schedules for f in every), sum(f.changed for f in every),
            any(f.trims for f in every), max(f.widest for f in every),
            max(f.messages for f in every), max(f.chars for f in every), top.tokens,
            top.counter, top.budget, max(f.rung for f in every),
            max(every, key=lambda f: f.rung).grown, sum(f.faults for f in every),
            sum((f.repairs for f in every), RepairCounts()), max(f.oldest_ms for f in every),
            max(f.output for f in every), max(f.users for f in every),
        )  # fmt: skip

    @property
    def fired(self) -> bool:
        """The user's code changed the history at least once."""
        return self.changed > 0

    def largest(self) -> str:
        """The largest history, against the budget when known."""
        size = (
            f"largest history {self.tokens:,} tokens ({self.counter}), {self.messages:,} "
            f"messages, {self.chars:,} characters"
        )
        if self.budget is None:
            return size + ("; budget unknown" if self.trims else "")
        if self.budget.seconds is not None:  # a threshold in time: against the oldest's age
            age = self.oldest_ms / 1000
            said = f"{age:,.0f}" if age >= 10 else f"{age:.2f}".rstrip("0").rstrip(".")
            return (
                f"{size}; its threshold of {self.budget.text()} against the oldest "
                f"message's age of {said} s at a request (a schedule's first to last request)"
            )
        if self.budget.per_output:  # a tool-output hook's threshold: against one output
            return (
                f"{size}; largest tool output {self.output:,} characters against its "
                f"threshold of {self.budget.text()}"
            )
        if self.budget.unit in (
            "turns",
            "user turns",
        ):  # against the most user turns a request held
            return f"{size}; {self.users:,} user turns against its budget of {self.budget.text()}"
        reached = {"tokens": self.tokens, "characters": self.chars, "messages": self.messages}
        got = reached.get(self.budget.unit)
        if got is None:  # outputs, items, an unknown unit: not what a history is measured in
            return f"{size}; its budget: {self.budget.text()}, not measured in the history"
        return f"{size}: {got:,} against its budget of {self.budget.text()}"

    def text(self) -> str:
        """The figures in words (a cell's note)."""
        if not self.trims:
            who = f"{self.schedules} schedules, no trimming configured"
        elif self.fired:
            who = (
                f"the user's code changed the history in {self.changed} of "
                f"{self.schedules} schedules"
            )
        else:
            who = f"the trimmer never fired in {self.schedules} schedules"
        grown = f"; grown to {self.grown}" if self.grown else ""
        faults = (
            f"; the summarizer's model call failed (injected) in {self.faults} schedules"
            if self.faults
            else ""
        )
        repaired = f"; {self.repairs.text()}" if self.repairs.schedules else ""
        return f"{who}{faults}{repaired}; widest batch {self.widest}; {self.largest()}{grown}"

    def to_json(self) -> dict[str, object]:
        """The figures in ``--json`` (a placement's ``figures``)."""
        budget = None
        if self.budget is not None:
            budget = {"amount": self.budget.amount, "unit": self.budget.unit,
                      "where": self.budget.where}  # fmt: skip
        out: dict[str, object] = {
            "schedules": self.schedules,
            "trims": self.trims,
            "history_changed": self.changed,
            "widest_batch": self.widest,
            "largest_history": {"tokens": self.tokens, "messages": self.messages,
                                "characters": self.chars, "token_counter": self.counter},
            "budget": budget,
            "rungs_climbed": self.rung,
            "summarizer_failed": self.faults,
            "repaired": self.repairs.to_json(),
        }  # fmt: skip
        if self.budget is not None and self.budget.seconds is not None:  # a threshold in time
            out["oldest_seconds"] = self.oldest_ms / 1000
        return out


def _combined(
    first: SearchOutcome[Step], then: SearchOutcome[Step], rung: int
) -> SearchOutcome[Step]:
    tally = first.tally.merged(then.tally)
    tally.most["rung"] = rung
    exercised: Counter[str] = first.exercised + then.exercised
    return SearchOutcome(
        then.found, first.examples + then.examples, first.schedules + then.schedules,
        first.steps + then.steps, exercised, then.first_length, first.seconds + then.seconds,
        then.timed_out, tally, first.inconsistent + then.inconsistent,
    )  # fmt: skip


def grow_search(
    target: LoopTarget,
    scenario: Scenario,
    max_steps: int,
    max_examples: int,
    searcher: Searcher,
    *,
    grow: bool = True,
) -> SearchOutcome[Step]:
    """The class's search, grown rung by rung while nothing broke (see the
    module's docs): ``max_examples`` runs on the class's shape, half as many
    (at least 1) on each rung while the user's code has not changed the
    history, a quarter once it has.

    Only an agent that trims grows, and only on the default shape (a shape
    the user gave is searched as given) and with ``grow``.
    """
    result = searcher(scenario, max_steps, max_examples)
    if not grow or scenario.shape != LoopShape() or not trims(target):
        return result
    for n, rung in enumerate(ladder(budget_of(target.adapter, target.target)), 1):
        if result.found is not None or result.timed_out:
            break
        share = 4 if result.tally.hits["changed"] else 2
        more = searcher(replace(scenario, shape=rung.shape), max(max_steps, rung.steps),
                        max(1, max_examples // share))  # fmt: skip
        result = _combined(result, more, n)
    return result
