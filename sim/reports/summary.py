"""``summary.md`` of the failure-rate report: measured rates over sessions,
survival medians, and the incident write-up's claims checked one by one.

Every number is computed here from the sweep's rows; the verdicts are worded
from the numbers (a claim "holds" only when the measured intervals say so),
so a run whose figures disagree with the write-up says that it does.  Each
claim is checked twice — over sessions (the unit that is right) and per
model invocation (the measure earlier reports used) — and the summary says
where the conclusion changes.  The tables live in :mod:`.summary_tables`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any, Protocol

from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.drivers.agents import SESSION_TURNS
from prunecheck.sim.stats.intervals import Pooled
from prunecheck.sim.stats.sessions import SessionRecord, rate_of
from prunecheck.sim.sweeps.sweep import Row

__all__ = ["CLASS_LABELS", "MEANINGS", "ReportData", "pool", "sessions_of", "summary_text",
           "write_summary"]

ORPHAN_400 = "provider_rejection:result_without_call"
DUP = "duplicated_side_effect"
TRUNC = "truncated_payload"
CEILING = "hard_ceiling_overrun"
ANY = "any_violation"
ABORT = "session_abort"
PRUNE = "invalid_prune"

#: What each reported class means, in the design notes' vocabulary.
MEANINGS: dict[str, str] = {
    ANY: "at least one violation of any class below (structural damage the user must never ship)",
    ORPHAN_400: "the provider answered HTTP 400: a tool result whose call is gone",
    "provider_rejection:call_without_result": "HTTP 400: a call whose result is gone",
    "orphaned_result": "a result in context whose issuing assistant message was evicted",
    DUP: "a retry re-ran a batch: a write ran twice, or a read ran against a changed file",
    TRUNC: "a streamed result/answer lost its first chunks: valid-looking but wrong content",
    "unanswered_call": "a completed call whose result was evicted while the call stayed",
    PRUNE: "a prune applied that split a unit or touched an open or pending one",
    ABORT: "outcome: a rejection after the runtime's last retry; the session ends and the "
           "agent starts a fresh one",
    CEILING: "cost: context above the hard ceiling (fail loudly, recoverable)",
    "deferral": "cost: a budget check deferred because a call was pending",
    "spill": "cost: a closed unit moved to the side store",
    "reinjection": "cost: a spilled unit brought back because a new call needs its file",
}
CLASS_LABELS = {ANY: "any violation", ORPHAN_400: "orphaned-result 400s",
                "orphaned_result": "orphaned results", DUP: "duplicated side effects",
                TRUNC: "truncated payloads", "unanswered_call": "unanswered calls",
                ABORT: "aborted sessions", CEILING: "hard-ceiling overruns"}
#: The write-up the claims come from, named where it is first quoted.
SOURCE = ("the incident write-up this tool was built from (*Where must an instance of a "
          "context-pruning policy refuse to prune: the mid-tool-call boundary*, 2026-11-14)")
#: The structure-blind built-ins: every built-in but unit_safe.
BLIND = "structure-blind built-ins"


@dataclass(frozen=True, slots=True)
class ReportData:
    """The rows of a report's sweep, by the question each part answers.

    Attributes
    ----------
    main: policies × gates × load levels (checks after every append, retry
        re-runs the batch).
    tightness: policies × gates × budget tightness at ``tight_level``.
    knobs: policies × other runtime configurations × load levels.
    seeds, horizon, command: how the sweep was run, for the summary.
    planned: runs the sweep planned (0: as many as given); fewer rows than
        planned means the time limit stopped it (``time_limit`` seconds).
    """

    main: tuple[Row, ...]
    tightness: tuple[Row, ...]
    knobs: tuple[Row, ...]
    tight_level: float
    seeds: tuple[int, ...]
    horizon: float
    command: str
    planned: int = 0
    time_limit: float | None = None


class Measure(Protocol):
    """A rate with its interval, per 1,000 of some unit."""

    @property
    def count(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def low(self) -> float: ...
    @property
    def high(self) -> float: ...
    @property
    def per_1000(self) -> float: ...


def pool(rows: Iterable[Row], key: Callable[[Row], Any]) -> dict[Any, Pooled]:
    """Rows pooled by ``key(row)`` (seeds always pool together): per-invocation sums."""
    out: dict[Any, Pooled] = {}
    for row in rows:
        out.setdefault(key(row), Pooled()).add(
            invocations=row.invocations, events=row.events, sim_time=row.sim_time,
            time_deferred=row.time_deferred, incidents=row.incidents, exposed=row.exposed,
            error=row.error is not None)
    return out


def sessions_of(rows: Iterable[Row]) -> list[SessionRecord]:
    return [s for row in rows for s in row.sessions]


def group(rows: Iterable[Row], key: Callable[[Row], Any]) -> dict[Any, list[SessionRecord]]:
    """Sessions grouped by ``key(row)``."""
    out: dict[Any, list[SessionRecord]] = {}
    for row in rows:
        out.setdefault(key(row), []).extend(row.sessions)
    return out


def blind(row: Row) -> bool:
    return row.spec.policy in BUILTINS and row.spec.policy != "unit_safe"


def gate_rows(rows: Iterable[Row], gate: Gate) -> list[Row]:
    return [r for r in rows if r.spec.config.gate is gate]


def table(head: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.extend("| " + " | ".join(row) + " |" for row in body)
    return [*lines, ""]


def per_session(sessions: Sequence[SessionRecord], key: str) -> str:
    """``"308 [226–398] (37 of 120)"``: per 1,000 sessions, exact 95% interval."""
    r = rate_of(sessions, key)
    return f"{r.per_1000_text()} ({r.count} of {r.total:,})" if r.total else "n/a"


# ----------------------------------------------------------- two measures
@dataclass(frozen=True, slots=True)
class _Way:
    """One way of measuring a class over a set of rows."""

    unit: str
    rate: Callable[[Sequence[Row], str], Measure]
    text: Callable[[Measure], str]


def _session_measure(rows: Sequence[Row], key: str) -> Measure:
    return rate_of(sessions_of(rows), key)


def _invocation_measure(rows: Sequence[Row], key: str) -> Measure:
    return pool(rows, lambda r: 0).get(0, Pooled()).rate(key)


def _num(m: Measure) -> str:
    digits = 1 if m.high < 100 else 0
    value = "0" if m.count == 0 else f"{m.per_1000:.{digits}f}"
    low = "0" if m.low == 0 else f"{m.low:.{digits}f}"
    return f"{value} [{low}–{m.high:.{digits}f}]" if m.total else "n/a"


SESSIONS = _Way("sessions", _session_measure,
                lambda m: f"{_num(m)} per 1,000 sessions ({m.count} of {m.total:,})")
INVOCATIONS = _Way("invocations", _invocation_measure,
                   lambda m: f"{_num(m)} per 1,000 invocations")


def _above(low: Measure, high: Measure) -> bool:
    """``high`` is above ``low`` beyond both 95% intervals."""
    return high.low > low.high


@dataclass(frozen=True, slots=True)
class _Check:
    measured: str
    verdict: str

    @property
    def word(self) -> str:
        return self.verdict.split(":")[0].split(",")[0]


def _produce(rows: Sequence[Row], key: str, way: _Way) -> _Check:
    by_policy: dict[str, list[Row]] = {}
    for r in rows:
        by_policy.setdefault(r.spec.policy, []).append(r)
    total = way.rate(rows, key)
    breaking = sorted(p for p, rs in by_policy.items() if way.rate(rs, key).count)
    n = len(by_policy)
    if total.count and len(breaking) == n:
        verdict = f"holds: all {n} {BLIND} produce them"
    elif total.count:
        verdict = f"partly: {len(breaking)} of {n} produce them ({', '.join(breaking)})"
    else:
        verdict = "does not hold: none seen"
    return _Check(way.text(total), verdict)


def _grows(rows: Sequence[Row], key: str, way: _Way) -> _Check:
    levels = sorted({r.spec.level for r in rows})
    at = {lv: way.rate([r for r in rows if r.spec.level == lv], key) for lv in levels}
    low, high = at[levels[0]], at[levels[-1]]
    steps = [at[lv].per_1000 for lv in levels]
    if _above(low, high):
        rising = all(b >= a for a, b in pairwise(steps))
        verdict = "holds" + (", rising at every level" if rising else
                             ", though not at every level step")
    elif high.per_1000 > low.per_1000:
        verdict = "not shown: higher at full load, but within the intervals"
    else:
        verdict = "does not hold: not higher at full load"
    text = (f"load {levels[0]:g}: {_num(low)} → load {levels[-1]:g}: {_num(high)} per 1,000 "
            f"{way.unit} (levels: {' → '.join(f'{s:.0f}' for s in steps)})")
    return _Check(text, verdict)


def _zero(rows: Sequence[Row], way: _Way) -> _Check:
    counts = {k: way.rate(rows, k) for k in (ORPHAN_400, DUP, ANY)}
    bad = {k: m.count for k, m in counts.items() if m.count}
    m = counts[ANY]
    verdict = "holds" if not bad else "does not hold: " + ", ".join(
        f"{CLASS_LABELS.get(k, k)} in {v}" for k, v in bad.items())
    if m.count == 0:
        text = (f"0 of {m.total:,} {way.unit} saw any violation: below {m.high:.1f} per 1,000 "
                f"{way.unit} with 95% confidence")
    else:
        text = f"{m.count} of {m.total:,} {way.unit} saw a violation ({_num(m)} per 1,000)"
    return _Check(text, verdict)


def _costlier(cheap: Sequence[Row], dear: Sequence[Row], key: str, way: _Way,
              names: tuple[str, str]) -> _Check:
    a, b = way.rate(cheap, key), way.rate(dear, key)
    verdict = ("holds" if _above(a, b) else "not shown: within the intervals"
               if b.per_1000 > a.per_1000 else "does not hold")
    return _Check(f"gate {names[0]}: {_num(a)} → gate {names[1]}: {_num(b)} per 1,000 "
                  f"{way.unit}", verdict)


def _attribution(rows: Sequence[Row], way: _Way) -> _Check:
    """Does the salience policy truncate more often than the other blind ones?"""
    doc = [r for r in rows if r.spec.policy == "lowest_salience"]
    rest = [r for r in rows if r.spec.policy != "lowest_salience"]
    d, o = way.rate(doc, TRUNC), way.rate(rest, TRUNC)
    if _above(o, d):
        verdict = "holds: lowest_salience truncates more often than the other policies"
    elif _above(d, o):
        verdict = ("does not hold: lowest_salience truncates less often than the other "
                   "policies (a fresh partial message scores high on recency)")
    else:
        verdict = "not shown: lowest_salience truncates about as often as the others"
    return _Check(f"lowest_salience: {_num(d)} vs the other {BLIND}: {_num(o)} per 1,000 "
                  f"{way.unit}", verdict)


def _absorbs(commit: Sequence[Row], spill: Sequence[Row], way: _Way) -> _Check:
    c, s = way.rate(commit, CEILING), way.rate(spill, CEILING)
    share = 1.0 - s.per_1000 / c.per_1000 if c.per_1000 else 0.0
    if _above(s, c):
        verdict = f"holds: spill absorbs {100 * share:.0f}% of them"
    else:
        verdict = "does not hold: spill is not below commit beyond the intervals"
    return _Check(f"gate commit: {_num(c)} → gate spill: {_num(s)} per 1,000 {way.unit} with "
                  "an overrun", verdict)


# ------------------------------------------------------------------ claims
def _claims(data: ReportData) -> list[str]:
    main = data.main
    none_blind = [r for r in gate_rows(main, Gate.NONE) if blind(r)]
    commit, spill = gate_rows(main, Gate.COMMIT), gate_rows(main, Gate.SPILL)
    none = gate_rows(main, Gate.NONE)
    checks: list[tuple[str, Callable[[_Way], _Check]]] = []
    if none_blind:
        checks += [
            ("“the provider rejected the request with a 400: `tool_result` blocks without a "
             "matching `tool_use` block” (checks after each append, a structure-blind policy)",
             lambda w: _produce(none_blind, ORPHAN_400, w)),
            ("“The retry logic, unaware of the cause, re-ran the *entire* batch, duplicating "
             "a side-effectful `read_file`”", lambda w: _produce(none_blind, DUP, w)),
            ("“a truncated JSON payload that parsed as valid but semantically wrong”",
             lambda w: _produce(none_blind, TRUNC, w)),
        ]
        policies = {r.spec.policy for r in none_blind}
        if "lowest_salience" in policies and len(policies) > 1:
            checks.append(("“The budget check fired mid-stream, evicted the *partial* trailing "
                           "message because its salience was near-zero”: truncation comes from "
                           "the salience policy", lambda w: _attribution(none_blind, w)))
        if len({r.spec.level for r in none_blind}) > 1:
            for key, name in ((ORPHAN_400, "orphaned-result 400s"),
                              (DUP, "duplicated side effects"), (TRUNC, "truncated payloads")):
                checks.append((f"“the following sequence recurred under load”: {name} grow "
                               "with load", partial(_grows, none_blind, key)))
    for name, rows in (("commit", commit), ("spill", spill)):
        if rows:
            checks.append(
                (f"“the orphaned-tool-result 400s disappeared entirely, and the duplicated-"
                 f"side-effect incident class went to zero” (gate {name}, every policy)",
                 partial(_zero, rows)))
    if commit and none:
        checks.append(("“The cost was a modest increase in hard-ceiling overruns (budget "
                       "exceeded while a batch was in flight)”",
                       lambda w: _costlier(none, commit, CEILING, w, ("none", "commit"))))
    if commit and spill:
        checks.append(("“handled by spilling the oldest *closed* unit to an external store "
                       "and re-injecting it on demand rather than by evicting live state”",
                       lambda w: _absorbs(commit, spill, w)))
    body = []
    for claim, check in checks:
        s, i = check(SESSIONS), check(INVOCATIONS)
        change = "no" if s.word == i.word else f"**yes**: per invocation “{i.word}”"
        body.append([claim, s.measured, s.verdict, f"{i.measured} — {i.word}", change])
    lines = [*table(["claim (quoted)", "measured over sessions [95% exact interval]",
                     "verdict (sessions)", "per invocation (earlier reports' measure)",
                     "conclusion changes?"], body)]
    return [*lines, *_notes(data, none_blind, none, commit)]


def _notes(data: ReportData, none_blind: Sequence[Row], none: Sequence[Row],
           commit: Sequence[Row]) -> list[str]:
    notes = []
    by_policy = group(none_blind, lambda r: r.spec.policy)
    doc = by_policy.get("lowest_salience")
    all_blind = sessions_of(none_blind)
    if doc:
        notes.append(
            "The write-up's own policy (“a policy that evicts the lowest-salience messages "
            "when the budget is exceeded”), lowest_salience, gate none, all loads, per 1,000 "
            f"sessions: orphaned-result 400s {per_session(doc, ORPHAN_400)}, duplicated side "
            f"effects {per_session(doc, DUP)}, truncated payloads {per_session(doc, TRUNC)}.")
    pruned = [s for s in all_blind if PRUNE in s.first]
    if pruned:
        same = sum(1 for s in pruned if ORPHAN_400 in s.first
                   and s.first[ORPHAN_400][1] == s.first[PRUNE][1])
        later = sum(1 for s in pruned if ORPHAN_400 in s.first
                    and s.first[ORPHAN_400][1] > s.first[PRUNE][1])
        never = len(pruned) - same - later
        notes.append(
            "“Neither failure raised an in-process exception at the point of pruning. Both "
            f"surfaced later”: of {len(pruned):,} sessions with an invalid prune ({BLIND}, gate "
            f"none), the first orphaned-result 400 came in the same user turn in {same:,}, in a "
            f"later turn in {later:,}, and never in {never:,} (the damage stayed silent, or "
            "surfaced as another class).")
    if commit and none:
        c, n = rate_of(sessions_of(commit), CEILING), rate_of(sessions_of(none), CEILING)
        ci, ni = _invocation_measure(commit, CEILING), _invocation_measure(none, CEILING)
        deferred = pool(commit, lambda r: 0)[0].deferred_share
        times = f"{c.per_1000 / n.per_1000:.1f} times as many" if n.count else "from none"
        notes.append(
            "How modest is the “modest increase in hard-ceiling overruns”? Per invocation: "
            f"{_num(ni)} → {_num(ci)} per 1,000 invocations. Per session: {_num(n)} → {_num(c)} "
            f"sessions per 1,000 meet at least one overrun ({times}; gate none → commit, every "
            f"policy and load). The commit gate also holds a budget check deferred "
            f"{100 * deferred:.1f}% of agent time.")
    return [*(f"- {n}" for n in notes), ""]


# ------------------------------------------------------------------ header
def _units(data: ReportData) -> list[str]:
    return [
        "## Units: what every number counts", "",
        f"- **Session** — the unit of every rate unless a table names another. One simulated "
        f"agent's conversation: it opens with a system prompt and ends *naturally* after the "
        f"turn that answers its {SESSION_TURNS}th user message, is *aborted* when an "
        "invocation is rejected after the runtime's last retry (`max_retries`, default 2: the "
        "error surfaces, the agent starts a fresh session and the user asks again), or is "
        f"*censored* by the run's {data.horizon:g}-second horizon. Every session started counts, "
        "including the censored last session of each agent: it had less time to fail, so a "
        "session rate slightly understates a full session's; the survival curves treat it as "
        "censored.",
        "- **Session rate** — sessions with at least one incident of the class, per 1,000 "
        "sessions, `rate [low–high] (K of N)`, with the exact (Clopper–Pearson) 95% interval. "
        "Sessions are treated as independent trials: each starts from a fresh context with "
        "its own random draws; within a run, an agent's sessions and the agents share only "
        "the world of files (whose versions matter to duplicated reads alone). That is the "
        "simulator's assumption, stated, not a measured fact.",
        "- **None seen** — `0 of N sessions: below U per 1,000 with 95% confidence`, where "
        "U = 1,000 × (1 − 0.025^(1/N)) is the exact upper bound (about 3.7/N; the one-sided "
        "“rule of three”, 3/N, is a little lower).",
        "- **Time to first violation** — Kaplan–Meier estimate of the share of sessions still "
        "intact against user turns (user messages received) and against simulated seconds "
        "since the session began, with 95% log-log (Greenwood) bands; a session that ends "
        "intact is censored at its end. *Median turns* is the first turn at which the curve "
        "is at or below one half; “not reached” when it stays above.",
        "- **Per-invocation rates** appear only for costs (hard-ceiling overruns, spills, "
        "re-injections per 1,000 model invocations), where the question is “how often does "
        "the runtime pay this”; their intervals are 95% percentile bootstraps over sessions "
        "(200 resamples, seeded), since invocations in one session are correlated. Time "
        "deferred is a share of simulated agent time.", "",
    ]


def _coverage(data: ReportData) -> list[str]:
    every = {r.key for r in (*data.main, *data.tightness, *data.knobs)}
    if not data.planned or len(every) >= data.planned:
        return []
    limit = f" ({data.time_limit:g} s)" if data.time_limit is not None else ""
    return [f"**Partial report.** The time limit{limit} stopped the sweep "
            f"after {len(every)} of {data.planned} planned runs; every figure below covers only "
            "the runs that finished (listed in `results.jsonl`), so some cells are missing or "
            "rest on fewer seeds. Run the same command again to resume.", ""]


def summary_text(data: ReportData, plots: Sequence[str]) -> str:
    """The whole summary as markdown."""
    from prunecheck.sim.reports.tables import tables

    every = {r.key: r for r in (*data.main, *data.tightness, *data.knobs)}
    invocations = sum(r.invocations for r in every.values())
    sessions = sum(len(r.sessions) for r in every.values())
    policies = sorted({r.spec.policy for r in every.values()},
                      key=lambda p: (p not in BUILTINS, p))
    user = [p for p in policies if p not in BUILTINS]
    head = [
        "# prunecheck failure-rate report", "",
        f"Generated by `{data.command}`: {len(every)} simulated runs, {sessions:,} sessions, "
        f"{invocations:,} model invocations, seeds from {data.seeds[0] if data.seeds else 0} "
        f"({len(data.seeds)} at full load, more at lighter levels: see the load table), "
        f"{data.horizon:g} simulated seconds per run. Policies: {', '.join(policies)}"
        + (f" (user policies: {', '.join(user)})" if user else "") + ". "
        "Every figure below is computed from this run's `results.jsonl`.", "",
        *_coverage(data),
        "Gates: `none` applies what the policy proposes, `reference` refuses a violating prune "
        "whole, `commit` is the write-up's decision procedure (defer while a call is pending, "
        "grow or shrink to whole units, fail loudly past the hard ceiling), `spill` is commit "
        f"plus spilling closed units past the ceiling. The {BLIND} are every built-in policy "
        "except unit_safe: they choose messages without regard to calls and results.", "",
        *_units(data),
        "## Do the write-up's claims hold?", "",
        f"Each claim is quoted from {SOURCE}. Checked over sessions (the verdict) and, for "
        "comparison, per model invocation as earlier reports did (pooled invocations, Wilson "
        "intervals that treat correlated invocations as independent and are far too narrow).",
        "",
    ]
    meaning = ["## What the classes mean", "",
               *table(["class", "meaning"], [[CLASS_LABELS.get(k, k.replace("_", " ")), v]
                                             for k, v in MEANINGS.items()])]
    files = ["## Plots", "", *(f"- [{p}]({p})" for p in plots), ""]
    parts = [head, _claims(data), *tables(data), meaning, files]
    return "\n".join(line for part in parts for line in part).rstrip() + "\n"


def write_summary(data: ReportData, path: Path, plots: Sequence[str]) -> None:
    path.write_text(summary_text(data, plots), encoding="utf-8")
