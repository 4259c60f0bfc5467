"""The incident report's claims, each quoted in its own words and checked
against the sweep's rows.

prunecheck was built from a written incident report about context pruning
in a production agent loop.  That report does not ship with prunecheck, so
a reader of ``summary.md`` cannot open it: every claim the summary checks
is a :class:`Claim` here, with the report's own words (:attr:`Claim.quote`),
the setting they describe and what the simulation measures for it.  The
verdict is worded from the numbers (a claim "holds" only when the measured
intervals say so), over sessions, and again per model invocation (the
measure earlier reports used), saying where the conclusion changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise

from prunecheck.model.gates import Gate
from prunecheck.sim.reports.data import (
    ANY,
    BLIND,
    CEILING,
    CLASS_LABELS,
    DUP,
    ORPHAN_400,
    PRUNE,
    TRUNC,
    Measure,
    ReportData,
    blind,
    gate_rows,
    group,
    per_session,
    pool,
    sessions_of,
    table,
)
from prunecheck.sim.stats.intervals import Pooled
from prunecheck.sim.stats.sessions import rate_of
from prunecheck.sim.sweeps.runs import Row

__all__ = ["CONTEXT", "INVARIANT", "QUOTES", "Claim", "claims_section"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim of the incident report.

    Attributes
    ----------
    title: a short name for the claim, in this report's words.
    quote: the report's own words, verbatim ("…" marks a cut).
    checked: what the simulation measures for it, in plain words.
    """

    title: str
    quote: str
    checked: str


#: Where the claims come from, for a reader who cannot open the report.
CONTEXT = (
    "The claims below come from a written incident report on context pruning in a production "
    "agent runtime: a long-running agent loop with a 32k-token working budget, tool calls "
    "issued in parallel batches with their results streamed in, and a pruning policy that "
    "evicted the lowest-salience messages whenever a budget check found the budget exceeded. "
    "That report is not shipped with prunecheck, so each claim is quoted in the report's own "
    "words, followed by what this run measured and whether the claim holds here."
)
#: The invariant the report's fix gates every prune on (gate ``commit`` here).
INVARIANT = (
    "A pruning policy is only safe to execute at a *commit boundary*: a point where every "
    "retained message is a complete unit (a full assistant turn, a full tool result, a full "
    "user message) and no pending operation references content that pruning could remove."
)

_EACH_BLIND = "each structure-blind built-in policy (every built-in but unit_safe)"
_ORPHANS = Claim(
    "structure-blind pruning gets tool results rejected by the provider",
    "The assistant turn was evicted. The remaining two results then arrived and were appended "
    "as orphaned tool-result messages with no preceding call. … On the next model invocation, "
    "the provider rejected the request with a 400: `tool_result` blocks without a matching "
    "`tool_use` block.",
    f"sessions with an HTTP 400 for a tool result whose call was evicted; {_EACH_BLIND}, "
    "gate none, budget checks after every append",
)
_DUPLICATES = Claim(
    "the retry after the 400 duplicates side effects",
    "The retry logic, unaware of the cause, re-ran the *entire* batch, duplicating a "
    "side-effectful `read_file` against a file that had been modified by an intervening step.",
    f"sessions with a duplicated side effect (a retry re-ran a batch); {_EACH_BLIND}, gate none",
)
_TRUNCATION = Claim(
    "evicting a streaming result truncates its payload",
    "The budget check fired mid-stream, evicted the *partial* trailing message because its "
    "salience was near-zero (it was short and incomplete), and the stream continued appending "
    "into a message that had been removed from the array. The result was a context where the "
    "tool result was present but its first 200 tokens were gone—a truncated JSON payload "
    "that parsed as valid but semantically wrong, silently corrupting downstream reasoning.",
    "sessions with a truncated payload (a streamed result that lost its first chunks); "
    f"{_EACH_BLIND}, gate none",
)
_SALIENCE = Claim(
    "the truncation comes from the salience policy",
    "The budget check fired mid-stream, evicted the *partial* trailing message because its "
    "salience was near-zero (it was short and incomplete) …",
    f"truncated-payload sessions under lowest_salience against the other {BLIND}, gate none",
)
_LOAD = (
    "In a long-running agent loop with a 32k working budget and a policy that evicts the "
    "lowest-salience messages when the budget is exceeded, the following sequence recurred "
    "under load: …"
)
_GATED = Claim(
    "gating every prune on the commit boundary removes the failures",
    "After the runtime was changed to gate every prune on the commit-boundary predicate, the "
    "orphaned-tool-result 400s disappeared entirely, and the duplicated-side-effect incident "
    "class went to zero over a multi-week window.",
    "sessions with any violation at all, every policy and load",
)
_COST = Claim(
    "the gate costs more hard-ceiling overruns",
    "The cost was a modest increase in hard-ceiling overruns (budget exceeded while a batch "
    "was in flight) …",
    "sessions with a hard-ceiling overrun, gate none against gate commit, every policy and load",
)
_SPILL = Claim(
    "spilling closed units absorbs the overruns",
    "… which were handled by spilling the oldest *closed* unit to an external store and "
    "re-injecting it on demand rather than by evicting live state.",
    "sessions with a hard-ceiling overrun, gate commit against gate spill (commit plus "
    "spilling closed units past the ceiling), every policy and load",
)
#: Every claim the section can check, in the report's words.
QUOTES: tuple[str, ...] = (
    _ORPHANS.quote,
    _DUPLICATES.quote,
    _TRUNCATION.quote,
    _SALIENCE.quote,
    _LOAD,
    _GATED.quote,
    _COST.quote,
    _SPILL.quote,
)
_OWN_POLICY = "a policy that evicts the lowest-salience messages when the budget is exceeded"
_SILENT = (
    "Neither failure raised an in-process exception at the point of pruning. Both "
    "surfaced later, as a provider error or a wrong answer, with no causal trace back "
    "to the eviction."
)


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


SESSIONS = _Way(
    "sessions",
    _session_measure,
    lambda m: f"{_num(m)} per 1,000 sessions ({m.count} of {m.total:,})",
)
INVOCATIONS = _Way("invocations", _invocation_measure, lambda m: f"{_num(m)} per 1,000 invocations")


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
        verdict = "holds" + (
            ", rising at every level" if rising else ", though not at every level step"
        )
    elif high.per_1000 > low.per_1000:
        verdict = "not shown: higher at full load, but within the intervals"
    else:
        verdict = "does not hold: not higher at full load"
    text = (
        f"load {levels[0]:g}: {_num(low)} → load {levels[-1]:g}: {_num(high)} per 1,000 "
        f"{way.unit} (levels: {' → '.join(f'{s:.0f}' for s in steps)})"
    )
    return _Check(text, verdict)


def _zero(rows: Sequence[Row], way: _Way) -> _Check:
    counts = {k: way.rate(rows, k) for k in (ORPHAN_400, DUP, ANY)}
    bad = {k: m.count for k, m in counts.items() if m.count}
    m = counts[ANY]
    verdict = (
        "holds"
        if not bad
        else "does not hold: "
        + ", ".join(f"{CLASS_LABELS.get(k, k)} in {v}" for k, v in bad.items())
    )
    if m.count == 0:
        text = (
            f"0 of {m.total:,} {way.unit} saw any violation: below {m.high:.1f} per 1,000 "
            f"{way.unit} with 95% confidence"
        )
    else:
        text = f"{m.count} of {m.total:,} {way.unit} saw a violation ({_num(m)} per 1,000)"
    return _Check(text, verdict)


def _costlier(
    cheap: Sequence[Row], dear: Sequence[Row], key: str, way: _Way, names: tuple[str, str]
) -> _Check:
    a, b = way.rate(cheap, key), way.rate(dear, key)
    verdict = (
        "holds"
        if _above(a, b)
        else "not shown: within the intervals"
        if b.per_1000 > a.per_1000
        else "does not hold"
    )
    return _Check(
        f"gate {names[0]}: {_num(a)} → gate {names[1]}: {_num(b)} per 1,000 {way.unit}", verdict
    )


def _attribution(rows: Sequence[Row], way: _Way) -> _Check:
    """Does the salience policy truncate more often than the other blind ones?"""
    doc = [r for r in rows if r.spec.policy == "lowest_salience"]
    rest = [r for r in rows if r.spec.policy != "lowest_salience"]
    d, o = way.rate(doc, TRUNC), way.rate(rest, TRUNC)
    if _above(o, d):
        verdict = "holds: lowest_salience truncates more often than the other policies"
    elif _above(d, o):
        verdict = (
            "does not hold: lowest_salience truncates less often than the other "
            "policies (a fresh partial message scores high on recency)"
        )
    else:
        verdict = "not shown: lowest_salience truncates about as often as the others"
    return _Check(
        f"lowest_salience: {_num(d)} vs the other {BLIND}: {_num(o)} per 1,000 {way.unit}", verdict
    )


def _absorbs(commit: Sequence[Row], spill: Sequence[Row], way: _Way) -> _Check:
    c, s = way.rate(commit, CEILING), way.rate(spill, CEILING)
    share = 1.0 - s.per_1000 / c.per_1000 if c.per_1000 else 0.0
    if _above(s, c):
        verdict = f"holds: spill absorbs {100 * share:.0f}% of them"
    else:
        verdict = "does not hold: spill is not below commit beyond the intervals"
    return _Check(
        f"gate commit: {_num(c)} → gate spill: {_num(s)} per 1,000 {way.unit} with an overrun",
        verdict,
    )


# ------------------------------------------------------------------ claims
_Checked = tuple[Claim, Callable[[_Way], _Check]]


def _checks(main: Sequence[Row]) -> list[_Checked]:
    """The claims this run's rows can check, each with its check."""
    none_blind = [r for r in gate_rows(main, Gate.NONE) if blind(r)]
    commit, spill = gate_rows(main, Gate.COMMIT), gate_rows(main, Gate.SPILL)
    none = gate_rows(main, Gate.NONE)
    out: list[_Checked] = []
    if none_blind:
        out += [
            (_ORPHANS, lambda w: _produce(none_blind, ORPHAN_400, w)),
            (_DUPLICATES, lambda w: _produce(none_blind, DUP, w)),
            (_TRUNCATION, lambda w: _produce(none_blind, TRUNC, w)),
        ]
        policies = {r.spec.policy for r in none_blind}
        if "lowest_salience" in policies and len(policies) > 1:
            out.append((_SALIENCE, lambda w: _attribution(none_blind, w)))
        if len({r.spec.level for r in none_blind}) > 1:
            for key in (ORPHAN_400, DUP, TRUNC):
                label = CLASS_LABELS[key]
                claim = Claim(
                    f"{label} grow with load",
                    _LOAD,
                    f"whether the failures of the claims above recur more under "
                    f"load: sessions with {label} at the lightest against the "
                    f"heaviest load level; {_EACH_BLIND}, gate none",
                )
                out.append((claim, partial(_grows, none_blind, key)))
    for name, rows in (("commit", commit), ("spill", spill)):
        if rows:
            claim = Claim(
                f"{_GATED.title} (gate {name})", _GATED.quote, f"gate {name}: {_GATED.checked}"
            )
            out.append((claim, partial(_zero, rows)))
    if commit and none:
        out.append((_COST, lambda w: _costlier(none, commit, CEILING, w, ("none", "commit"))))
    if commit and spill:
        out.append((_SPILL, lambda w: _absorbs(commit, spill, w)))
    return out


def _block(number: int, claim: Claim, s: _Check, i: _Check) -> list[str]:
    change = (
        "The conclusion is the same per model invocation."
        if s.word == i.word
        else f"**The conclusion changes per model invocation**: there it “{i.word}”."
    )
    return [
        f"### Claim {number}: {claim.title}",
        "",
        f"> “{claim.quote}”",
        "",
        f"Checked here: {claim.checked}.",
        "",
        *table(
            ["measure", "measured [95% interval]", "verdict"],
            [
                ["sessions (the verdict)", s.measured, s.verdict],
                ["per invocation (earlier reports' measure)", i.measured, i.word],
            ],
        ),
        change,
        "",
    ]


def claims_section(data: ReportData) -> list[str]:
    """``## Do the incident report's claims hold?``: an overview, then each
    claim quoted next to its verdict, then notes on claims that are not rates."""
    checked = [(claim, check(SESSIONS), check(INVOCATIONS)) for claim, check in _checks(data.main)]
    overview = [
        [
            str(n),
            claim.title,
            s.verdict,
            "no" if s.word == i.word else f"**yes**: per invocation “{i.word}”",
        ]
        for n, (claim, s, i) in enumerate(checked, 1)
    ]
    lines = [
        "## Do the incident report's claims hold?",
        "",
        CONTEXT,
        "",
        "The report's fix is the commit gate (gate `commit` here); the invariant it "
        "enforces, in the report's words:",
        "",
        f"> “{INVARIANT}”",
        "",
        "Each claim is checked over sessions (the verdict) and, for comparison, per model "
        "invocation as earlier reports did (pooled invocations, Wilson intervals that "
        "treat correlated invocations as independent and are far too narrow).",
        "",
        *table(["claim", "in short", "verdict (sessions)", "conclusion changes?"], overview),
    ]
    for n, (claim, s, i) in enumerate(checked, 1):
        lines += _block(n, claim, s, i)
    return [*lines, *_notes(data)]


def _notes(data: ReportData) -> list[str]:
    main = data.main
    none_blind = [r for r in gate_rows(main, Gate.NONE) if blind(r)]
    none, commit = gate_rows(main, Gate.NONE), gate_rows(main, Gate.COMMIT)
    notes = []
    doc = group(none_blind, lambda r: r.spec.policy).get("lowest_salience")
    if doc:
        notes.append(
            f"The report's own policy (“{_OWN_POLICY}”) is lowest_salience here. Gate none, all "
            f"loads, per 1,000 sessions: orphaned-result 400s {per_session(doc, ORPHAN_400)}, "
            f"duplicated side effects {per_session(doc, DUP)}, truncated payloads "
            f"{per_session(doc, TRUNC)}."
        )
    pruned = [s for s in sessions_of(none_blind) if PRUNE in s.first]
    if pruned:
        same = sum(
            1
            for s in pruned
            if ORPHAN_400 in s.first and s.first[ORPHAN_400][1] == s.first[PRUNE][1]
        )
        later = sum(
            1
            for s in pruned
            if ORPHAN_400 in s.first and s.first[ORPHAN_400][1] > s.first[PRUNE][1]
        )
        never = len(pruned) - same - later
        notes.append(
            "Of its two incidents (the orphaned results and the truncated payload), the "
            f"report says: “{_SILENT}” Here, of {len(pruned):,} sessions with an invalid prune "
            f"({BLIND}, gate none), the first orphaned-result 400 came in the same user turn "
            f"in {same:,}, in a later turn in {later:,}, and never in {never:,} (the damage "
            "stayed silent, or surfaced as another class)."
        )
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
            f"{100 * deferred:.1f}% of agent time."
        )
    return [*(f"- {n}" for n in notes), ""]
