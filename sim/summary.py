"""``summary.md`` of the failure-rate report: measured rates, what they mean,
and the domain document's observation checked claim by claim.

Every number is computed here from the sweep's rows; the verdicts are worded
from the numbers (a claim "holds" only when the measured intervals say so),
so a run whose figures disagree with the document says that it does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS

from .stats import Pooled, Rate
from .sweep import Row

__all__ = ["CLASS_LABELS", "MEANINGS", "ReportData", "pool", "summary_text", "write_summary"]

ORPHAN_400 = "provider_rejection:result_without_call"
DUP = "duplicated_side_effect"
TRUNC = "truncated_payload"
CEILING = "hard_ceiling_overrun"
ANY = "any_violation"

#: What each reported class means, in the design notes' vocabulary.
MEANINGS: dict[str, str] = {
    ANY: "at least one violation of any class below (structural damage the user must never ship)",
    ORPHAN_400: "the provider answered HTTP 400: a tool result whose call is gone",
    "provider_rejection:call_without_result": "HTTP 400: a call whose result is gone",
    "orphaned_result": "a result in context whose issuing assistant message was evicted",
    DUP: "a retry re-ran a batch: a write ran twice, or a read ran against a changed file",
    TRUNC: "a streamed result/answer lost its first chunks: valid-looking but wrong content",
    "unanswered_call": "a completed call whose result was evicted while the call stayed",
    "invalid_prune": "a prune applied that split a unit or touched an open or pending one",
    CEILING: "cost: context above the hard ceiling (fail loudly, recoverable)",
    "deferral": "cost: a budget check deferred because a call was pending",
    "spill": "cost: a closed unit moved to the side store",
    "reinjection": "cost: a spilled unit brought back because a new call needs its file",
}
CLASS_LABELS = {ANY: "any violation", ORPHAN_400: "orphaned-result 400s",
                  "orphaned_result": "orphaned results", DUP: "duplicated side effects",
                  TRUNC: "truncated payloads", "unanswered_call": "unanswered calls"}
_TABLE_CLASSES = (ANY, ORPHAN_400, DUP, TRUNC, "unanswered_call", CEILING)


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
    """

    main: tuple[Row, ...]
    tightness: tuple[Row, ...]
    knobs: tuple[Row, ...]
    tight_level: float
    seeds: tuple[int, ...]
    horizon: float
    command: str


def pool(rows: Iterable[Row], key: Callable[[Row], Any]) -> dict[Any, Pooled]:
    """Rows pooled by ``key(row)`` (seeds always pool together)."""
    out: dict[Any, Pooled] = {}
    for row in rows:
        out.setdefault(key(row), Pooled()).add(
            invocations=row.invocations, events=row.events, sim_time=row.sim_time,
            time_deferred=row.time_deferred, incidents=row.incidents, exposed=row.exposed,
            error=row.error is not None)
    return out


def _one(rows: Iterable[Row]) -> Pooled:
    return pool(rows, lambda r: 0).get(0, Pooled())


def _raw(row: Row) -> bool:
    return row.spec.policy in BUILTINS and row.spec.policy != "unit_safe"


def _gate(rows: Iterable[Row], gate: Gate) -> list[Row]:
    return [r for r in rows if r.spec.config.gate is gate]


def _r(rate: Rate) -> str:
    return rate.text()


def _table(head: Sequence[str], body: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.extend("| " + " | ".join(row) + " |" for row in body)
    return [*lines, ""]


def _significant(low: Rate, high: Rate) -> bool:
    """``high`` is above ``low`` beyond both 95% intervals."""
    return high.low > low.high


# ------------------------------------------------------------------ claims
def _claims(data: ReportData) -> list[str]:
    main = data.main
    levels = sorted({r.spec.level for r in main})
    lo_level, hi_level = levels[0], levels[-1]
    raw_none = [r for r in _gate(main, Gate.NONE) if _raw(r)]
    by_level = pool(raw_none, lambda r: r.spec.level)
    all_raw = _one(raw_none)
    by_policy = pool(raw_none, lambda r: r.spec.policy)
    n_raw = len(by_policy)
    rows: list[list[str]] = []
    notes: list[str] = []
    for kind, name in ((ORPHAN_400, "orphaned-result rejections (HTTP 400)"),
                       (DUP, "duplicated side effects"), (TRUNC, "truncated payloads")):
        total = all_raw.rate(kind)
        breaking = sorted(p for p, pooled in by_policy.items() if pooled.exposed.get(kind))
        if total.count and len(breaking) == n_raw:
            verdict = f"holds: all {n_raw} raw built-ins produce them"
        elif total.count:
            verdict = (f"partly: {len(breaking)} of {n_raw} raw built-ins produce them "
                       f"({', '.join(breaking)})")
        else:
            verdict = "does not hold: none seen"
        rows.append([f"raw policies with per-append checks produce {name}",
                     f"{_r(total)} per 1,000 invocations, {n_raw} raw built-ins, gate none, "
                     "all loads", verdict])
        low, high = by_level[lo_level].rate(kind), by_level[hi_level].rate(kind)
        steps = [by_level[lv].rate(kind).per_1000 for lv in levels]
        rising = all(b >= a for a, b in pairwise(steps))
        if _significant(low, high):
            grow = "holds" + (", rising at every level" if rising else
                              ", though not at every level step")
        elif high.per_1000 > low.per_1000:
            grow = "not shown: higher at full load, but within the intervals"
        else:
            grow = "does not hold: not higher at full load"
        rows.append([f"… and they grow with load ({name})",
                     f"load {lo_level:g}: {_r(low)} → load {hi_level:g}: {_r(high)} "
                     f"(levels: {' → '.join(f'{s:.0f}' for s in steps)})", grow])
    doc_policy = by_policy.get("lowest_salience")
    if doc_policy is not None:
        notes.append(
            f"The document's own policy, lowest_salience, shows orphaned-result 400s at "
            f"{_r(doc_policy.rate(ORPHAN_400))}, duplicated side effects at "
            f"{_r(doc_policy.rate(DUP))} and truncated payloads at "
            f"{_r(doc_policy.rate(TRUNC))} per 1,000 invocations (gate none, all loads).")
        doc_trunc, all_trunc = doc_policy.rate(TRUNC), all_raw.rate(TRUNC)
        top = max(by_policy.items(), key=lambda item: item[1].rate(TRUNC).per_1000)
        if all_trunc.count and doc_trunc.high < all_trunc.low:
            notes.append(
                "Where this disagrees with the document: it attributes truncated payloads to "
                "the salience policy evicting a short, partial trailing message. Here "
                f"lowest_salience truncates {_r(doc_trunc)} per 1,000 invocations, below the "
                f"raw built-ins' {_r(all_trunc)}: a fresh partial message scores high on "
                "recency, so older messages go first. Most truncation comes from "
                f"{top[0]} ({_r(top[1].rate(TRUNC))}).")
    commit = _one(_gate(main, Gate.COMMIT))
    spill = _one(_gate(main, Gate.SPILL))
    none = _one(_gate(main, Gate.NONE))
    for gate_name, pooled in (("commit", commit), ("spill", spill)):
        if not pooled.invocations:
            continue
        counts = {k: pooled.exposed.get(k, 0) for k in (ORPHAN_400, DUP, TRUNC, ANY)}
        verdict = "holds" if not any(counts.values()) else \
            "does not hold: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        rows.append([f"under the {gate_name} gate those are zero",
                     f"{counts[ANY]} of {pooled.invocations:,} invocations saw any violation "
                     f"(rate {_r(pooled.rate(ANY))}), all policies and loads", verdict])
    if commit.invocations and none.invocations:
        c, n = commit.rate(CEILING), none.rate(CEILING)
        verdict = ("holds" if _significant(n, c) else
                   "not shown: within the intervals" if c.per_1000 > n.per_1000 else
                   "does not hold")
        rows.append(["… at the price of more hard-ceiling overruns",
                     f"gate none: {_r(n)} → gate commit: {_r(c)} per 1,000 invocations",
                     verdict])
        prevented = none.rate(ANY).per_1000
        notes.append(
            f"The document calls the increase in overruns modest. Measured, the commit gate "
            f"adds {c.per_1000 - n.per_1000:.1f} overruns per 1,000 invocations while it "
            f"removes {prevented:.1f} per 1,000 invocations with a violation (gate none, all "
            f"policies); it also holds a budget check deferred "
            f"{100 * commit.deferred_share:.1f}% of agent time (gate none: "
            f"{100 * none.deferred_share:.1f}%).")
    if commit.invocations and spill.invocations:
        c, s = commit.rate(CEILING), spill.rate(CEILING)
        share = 1.0 - s.per_1000 / c.per_1000 if c.per_1000 else 0.0
        if _significant(s, c):
            verdict = f"holds: spill absorbs {100 * share:.0f}% of them"
            if s.count:
                verdict += ("; the rest are contexts over the ceiling with nothing closed "
                            "left to spill (pending batches and open streams cannot move)")
        else:
            verdict = "does not hold: spill is not below commit beyond the intervals"
        rows.append(["spill absorbs those overruns",
                     f"gate commit: {_r(c)} → gate spill: {_r(s)} per 1,000 invocations; "
                     f"spills {_r(spill.rate('spill'))}, re-injections "
                     f"{_r(spill.rate('reinjection'))}", verdict])
    return [*_table(["claim (domain document)", "measured", "verdict"], rows),
            *(f"- {n}" for n in notes), ""]


# ------------------------------------------------------------------ tables
def _at_top(data: ReportData) -> list[str]:
    top = max(r.spec.level for r in data.main)
    rows = [r for r in data.main if r.spec.level == top]
    pooled = pool(rows, lambda r: (r.spec.policy, r.spec.config.gate))
    order = list(dict.fromkeys(r.spec.policy for r in sorted(
        rows, key=lambda r: (r.spec.policy not in BUILTINS, r.spec.policy))))
    body = [[p, g.value, str(pooled[(p, g)].invocations),
             *(_r(pooled[(p, g)].rate(k)) for k in _TABLE_CLASSES)]
            for p in order for g in Gate if (p, g) in pooled]
    head = ["policy", "gate", "invocations", *(k.replace("provider_rejection:", "")
                                              .replace("result_without_call",
                                                       "orphan 400s").replace("_", " ")
                                              for k in _TABLE_CLASSES)]
    return [f"## Rates at the highest load level ({top:g})", "", *_table(head, body)]


def _growth(data: ReportData) -> list[str]:
    none = _gate(data.main, Gate.NONE)
    levels = sorted({r.spec.level for r in none})
    by = pool(none, lambda r: (r.spec.policy, r.spec.level))
    policies = sorted({r.spec.policy for r in none}, key=lambda p: (p not in BUILTINS, p))
    body = [[p, *(_r(by[(p, lv)].rate(ANY)) for lv in levels)] for p in policies]
    head = ["policy (gate none)", *(f"load {lv:g}" for lv in levels)]
    pooled = pool([r for r in none if _raw(r)], lambda r: r.spec.level)
    body2 = [[CLASS_LABELS.get(k, k), *(_r(pooled[lv].rate(k)) for lv in levels)]
             for k in (ANY, ORPHAN_400, "orphaned_result", DUP, TRUNC, "unanswered_call")]
    return ["## Which policy breaks, and at what load", "",
            "Invocations per 1,000 with at least one violation, gate none, checks after "
            "every append:", "", *_table(head, body),
            "Each class against load, the raw built-ins pooled (gate none):", "",
            *_table(["class", *(f"load {lv:g}" for lv in levels)], body2)]


def _costs(data: ReportData) -> list[str]:
    built = [r for r in data.main if r.spec.policy in BUILTINS]
    top = max(r.spec.level for r in built)
    body = []
    for gate in Gate:
        rows = _gate(built, gate)
        if not rows:
            continue
        every, at_top = _one(rows), _one(r for r in rows if r.spec.level == top)
        refused = sum(r.counters.get("refused_prunes", 0) for r in rows)
        body.append([gate.value, _r(every.rate(CEILING)), _r(at_top.rate(CEILING)),
                     f"{100 * every.deferred_share:.1f}%", _r(every.rate("spill")),
                     _r(every.rate("reinjection")), str(refused)])
    head = ["gate", "overruns (all loads)", f"overruns (load {top:g})", "time deferred",
            "spills", "re-injections", "refused prunes"]
    return ["## The cost of safety (built-in policies pooled)", "",
            "Rates per 1,000 invocations; time deferred is the share of simulated agent time "
            "with a deferred budget check.", "", *_table(head, body)]


def _tightness(data: ReportData) -> list[str]:
    if not data.tightness:
        return []
    by = pool([r for r in data.tightness if r.spec.policy in BUILTINS],
              lambda r: (r.spec.config.gate, r.spec.load.tightness, _raw(r)))
    values = sorted({r.spec.load.tightness for r in data.tightness})
    body = []
    for t in values:
        raw = by.get((Gate.NONE, t, True), Pooled())
        cells = [f"{t:g}", _r(raw.rate(ANY)), _r(raw.rate(ORPHAN_400))]
        for gate in (Gate.COMMIT, Gate.SPILL):
            both = Pooled()
            for safe in (True, False):
                part = by.get((gate, t, safe))
                if part is not None:
                    both.add(invocations=part.invocations, events=part.events,
                             sim_time=part.sim_time, time_deferred=part.time_deferred,
                             incidents=part.incidents, exposed=part.exposed)
            cells += [_r(both.rate(ANY)), _r(both.rate(CEILING))]
        body.append(cells)
    head = ["tightness", "none: any violation (raw)", "none: orphan 400s (raw)",
            "commit: any violation", "commit: overruns", "spill: any violation",
            "spill: overruns"]
    return [f"## Budget tightness (load level {data.tight_level:g})", "",
            "Tightness is a typical turn's tokens against the working budget.", "",
            *_table(head, body)]


def _knob_table(data: ReportData) -> list[str]:
    rows = [r for r in data.knobs if _raw(r)]
    if not rows:
        return []
    by = pool(rows, lambda r: (r.spec.config.gate.value, r.spec.config.check_at.value,
                               r.spec.config.retry.value))
    kinds = (ANY, ORPHAN_400, DUP, TRUNC, CEILING)
    body = [[*k, *(_r(p.rate(x)) for x in kinds)] for k, p in sorted(by.items())]
    head = ["gate", "checks", "retry", *(CLASS_LABELS.get(k, "overruns") for k in kinds)]
    notes = []
    base = by.get(("none", "after_append", "rerun_batch"))
    for variant, kind, what in (
            (("none", "before_invoke", "rerun_batch"), TRUNC,
             "Checking only before an invocation (no stream is open then)"),
            (("none", "after_batch", "rerun_batch"), TRUNC, "Checking after whole batches"),
            (("none", "after_append", "idempotent"), DUP, "An idempotent retry")):
        other = by.get(variant)
        if base is None or other is None:
            continue
        orphans = other.rate(ORPHAN_400)
        tail = (f", but orphaned-result 400s stay at {_r(orphans)} (vs "
                f"{_r(base.rate(ORPHAN_400))}): the policies still split closed units."
                if orphans.count else f"; orphaned-result 400s: {_r(orphans)}.")
        notes.append(f"- {what} takes {CLASS_LABELS[kind]} from {_r(base.rate(kind))} to "
                     f"{_r(other.rate(kind))}{tail}")
    append, before = (by.get(("commit", c, "rerun_batch")) for c in ("after_append",
                                                                     "before_invoke"))
    if append is not None and before is not None:
        notes.append(
            f"- Under the commit gate, overruns are {_r(append.rate(CEILING))} with checks "
            f"after every append and {_r(before.rate(CEILING))} with checks before each "
            "invocation only: then nothing is pending at a check, so nothing defers, and the "
            "ceiling is only looked at when a check or an invocation happens.")
    return ["## Runtime knobs (raw built-ins pooled, all loads)", "", *_table(head, body),
            *notes, ""]


def _errors(data: ReportData) -> list[str]:
    bad = [r for r in (*data.main, *data.tightness, *data.knobs) if r.error]
    lines = ["## Policy errors", ""]
    if not bad:
        return [*lines, "No run ended with a policy error.", ""]
    seen = dict.fromkeys(r.key for r in bad)
    for row in bad:
        if row.key in seen:
            lines.append(f"- `{row.key}`: {row.error}")
            del seen[row.key]
    return [*lines, ""]


def _levels(data: ReportData) -> list[str]:
    loads = {r.spec.level: r.spec.load for r in data.main}
    body = [[f"{lv:g}", str(ld.agents), f"{ld.user_interval:g} s", f"{ld.batch_width:g}",
             f"{ld.latency_tail:g}", f"{ld.chunks:g}", f"{ld.tightness:g}",
             f"{100 * ld.background:g}%", f"{ld.edit_interval:g} s"]
            for lv, ld in sorted(loads.items())]
    head = ["load level", "agents", "user writes every", "batch width (mean)",
            "latency tail σ", "chunks per stream", "tightness", "background calls",
            "editor writes every"]
    return ["## What a load level is", "", *_table(head, body)]


def summary_text(data: ReportData, plots: Sequence[str]) -> str:
    """The whole summary as markdown."""
    every = (*data.main, *data.tightness, *data.knobs)
    runs = len({r.key for r in every})
    invocations = sum(r.invocations for r in {r.key: r for r in every}.values())
    policies = sorted({r.spec.policy for r in every}, key=lambda p: (p not in BUILTINS, p))
    user = [p for p in policies if p not in BUILTINS]
    head = [
        "# prunecheck failure-rate report", "",
        f"Generated by `{data.command}`: {runs} simulated runs, {invocations} model "
        f"invocations, seeds {', '.join(map(str, data.seeds))}, {data.horizon:g} simulated "
        f"seconds per run. Policies: {', '.join(policies)}"
        + (f" (user policies: {', '.join(user)})" if user else "") + ". "
        "Every figure below is computed from this run's `results.jsonl`.", "",
        "**How to read a rate.** Model invocations per 1,000 that saw at least one incident of "
        "the class since the invocation before, pooled over seeds, with the 95% Wilson "
        "interval in brackets. `0 [0.0–3.7]` means none was seen and the rate is below 3.7 "
        "per 1,000 with 95% confidence. *Raw* policies are the built-ins that ignore structure "
        "(all but unit_safe). Gates: `none` applies what the policy proposes, `reference` "
        "refuses a violating prune whole, `commit` is the document's decision procedure "
        "(defer while a call is pending, grow or shrink to whole units, fail loudly past the "
        "hard ceiling), `spill` is commit plus spilling closed units past the ceiling.", "",
        "## Does the domain document's observation hold?", "",
    ]
    meaning = ["## What the classes mean", "",
               *_table(["class", "meaning"], [[CLASS_LABELS.get(k, k.replace("_", " ")), v]
                                              for k, v in MEANINGS.items()])]
    files = ["## Plots", "", *(f"- [{p}]({p})" for p in plots), ""]
    parts = [head, _claims(data), meaning, _levels(data), _growth(data), _at_top(data),
             _costs(data), _tightness(data), _knob_table(data), _errors(data), files]
    return "\n".join(line for part in parts for line in part).rstrip() + "\n"


def write_summary(data: ReportData, path: Path, plots: Sequence[str]) -> None:
    path.write_text(summary_text(data, plots), encoding="utf-8")
