"""The tables of ``summary.md``: session rates and survival medians per
policy and gate, rates against load, the cost of safety, budget tightness,
runtime knobs, load levels and policy errors.  Every table names its unit."""

from __future__ import annotations

from collections.abc import Sequence

from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.model.state import CounterName
from prunecheck.sim.reports.data import (
    ABORT,
    ANY,
    BLIND,
    CEILING,
    CLASS_LABELS,
    DUP,
    ORPHAN_400,
    TRUNC,
    ReportData,
    blind,
    gate_rows,
    group,
    pool,
    sessions_of,
    table,
)
from prunecheck.sim.stats.sessions import (
    SessionRecord,
    bootstrap_per_invocation,
    observations,
    rate_of,
)
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.sweeps.runs import Row

__all__ = ["median_text", "tables"]

_CLASSES = (ANY, ORPHAN_400, DUP, TRUNC, ABORT)


def median_text(sessions: Sequence[SessionRecord], axis: str = "turns") -> str:
    """The Kaplan–Meier median to the first violation, or "not reached"."""
    if not sessions:
        return "n/a"
    median = kaplan_meier(observations(sessions, ANY, axis)).median()
    if median is None:
        return "not reached"
    return f"{median:g}" if axis == "turns" else f"{median:.0f} s"


def _cell(sessions: Sequence[SessionRecord], key: str) -> str:
    r = rate_of(sessions, key)
    return r.per_1000_text() if r.total else "n/a"


def _policies(rows: Sequence[Row]) -> list[str]:
    names = {r.spec.policy for r in rows}
    return sorted(names, key=lambda p: (p not in BUILTINS, p))


def _per_policy(data: ReportData) -> list[str]:
    by = group(data.main, lambda r: (r.spec.policy, r.spec.config.gate))
    body = []
    for policy in _policies(data.main):
        for gate in Gate:
            sessions = by.get((policy, gate))
            if sessions is None:
                continue
            body.append(
                [
                    policy,
                    gate.value,
                    f"{len(sessions):,}",
                    *(_cell(sessions, k) for k in _CLASSES),
                    median_text(sessions),
                    median_text(sessions, "time"),
                ]
            )
    head = [
        "policy",
        "gate",
        "sessions",
        *(CLASS_LABELS[k] for k in _CLASSES),
        "median turns to first violation",
        "median time to first violation",
    ]
    return [
        "## Session rates and time to first violation, per policy and gate",
        "",
        "Unit: sessions. Rates are sessions per 1,000 with at least one incident of the "
        "class [exact 95% interval], every load level pooled, checks after every append. "
        "Medians are Kaplan–Meier: user turns (or simulated seconds) into a session until "
        "half the sessions had a violation; “not reached” where more than half stayed "
        "intact to their end. The curves are in survival.png.",
        "",
        *table(head, body),
    ]


def _growth(data: ReportData) -> list[str]:
    none = gate_rows(data.main, Gate.NONE)
    if not none:
        return []
    levels = sorted({r.spec.level for r in none})
    by = group(none, lambda r: (r.spec.policy, r.spec.level))
    body = [[p, *(_cell(by.get((p, lv), []), ANY) for lv in levels)] for p in _policies(none)]
    pooled = group([r for r in none if blind(r)], lambda r: r.spec.level)
    body2 = [
        [CLASS_LABELS.get(k, k), *(_cell(pooled.get(lv, []), k) for lv in levels)]
        for k in (
            ANY,
            ORPHAN_400,
            IncidentKind.ORPHANED_RESULT,
            DUP,
            TRUNC,
            IncidentKind.UNANSWERED_CALL,
            ABORT,
        )
    ]
    turns = [
        ["median turns to first violation", *(median_text(pooled.get(lv, [])) for lv in levels)]
    ]
    return [
        "## Which policy breaks, and at what load",
        "",
        "Unit: sessions per 1,000 with at least one violation [exact 95% interval], gate "
        "none, checks after every append:",
        "",
        *table(["policy (gate none)", *(f"load {lv:g}" for lv in levels)], body),
        f"Each class against load, the {BLIND} pooled (gate none; sessions per 1,000):",
        "",
        *table(["class", *(f"load {lv:g}" for lv in levels)], [*body2, *turns]),
    ]


def _levels(data: ReportData) -> list[str]:
    loads = {r.spec.level: r.spec.load for r in data.main}
    seeds: dict[float, set[int]] = {}
    for r in data.main:
        seeds.setdefault(r.spec.level, set()).add(r.spec.seed)
    body = [
        [
            f"{lv:g}",
            str(ld.agents),
            f"{ld.user_interval:g} s",
            f"{ld.batch_width:g}",
            f"{ld.latency_tail:g}",
            f"{ld.chunks:g}",
            f"{ld.tightness:g}",
            f"{100 * ld.background:g}%",
            f"{ld.edit_interval:g} s",
            str(len(seeds[lv])),
        ]
        for lv, ld in sorted(loads.items())
    ]
    head = [
        "load level",
        "agents",
        "user writes every",
        "batch width (mean)",
        "latency tail σ",
        "chunks per stream",
        "tightness",
        "background calls",
        "editor writes every",
        "seeds (runs per policy and gate)",
    ]
    return [
        "## What a load level is",
        "",
        "One number for how hard a run pushes the runtime: how many agents share the "
        "files, how often each user writes, how wide and slow the tool batches are, how "
        "finely results stream, and how much of the budget a turn fills. Lighter levels "
        "run more seeds: their runs hold fewer sessions.",
        "",
        *table(head, body),
    ]


def _costs(data: ReportData) -> list[str]:
    built = [r for r in data.main if r.spec.policy in BUILTINS]
    if not built:
        return []
    seed = data.seeds[0] if data.seeds else 0
    body = []
    for gate in Gate:
        rows = gate_rows(built, gate)
        if not rows:
            continue
        sessions = sessions_of(rows)
        deferred = pool(rows, lambda r: 0)[0].deferred_share
        refused = sum(r.counters.get(CounterName.REFUSED_PRUNES, 0) for r in rows)
        body.append(
            [
                gate.value,
                _cell(sessions, CEILING),
                bootstrap_per_invocation(sessions, CEILING, seed=seed).text(),
                f"{100 * deferred:.1f}%",
                bootstrap_per_invocation(sessions, IncidentKind.SPILL, seed=seed).text(),
                bootstrap_per_invocation(sessions, IncidentKind.REINJECTION, seed=seed).text(),
                _cell(sessions, ABORT),
                f"{refused:,}",
            ]
        )
    head = [
        "gate",
        "sessions with an overrun (per 1,000 sessions)",
        "overruns (per 1,000 invocations)",
        "agent time deferred",
        "spills (per 1,000 invocations)",
        "re-injections (per 1,000 invocations)",
        "aborted sessions (per 1,000 sessions)",
        "refused prunes (count)",
    ]
    return [
        "## The cost of safety (built-in policies pooled, every load)",
        "",
        "Each column names its unit. Per-invocation intervals are 95% bootstraps over "
        "sessions; per-session ones are exact.",
        "",
        *table(head, body),
    ]


def _tightness(data: ReportData) -> list[str]:
    rows = [r for r in data.tightness if r.spec.policy in BUILTINS]
    if not rows:
        return []
    by = group(rows, lambda r: (r.spec.config.gate, r.spec.load.tightness, blind(r)))
    body = []
    for t in sorted({r.spec.load.tightness for r in rows}):
        raw = by.get((Gate.NONE, t, True), [])
        cells = [f"{t:g}", _cell(raw, ANY), _cell(raw, ORPHAN_400)]
        for gate in (Gate.COMMIT, Gate.SPILL):
            both = [*by.get((gate, t, True), []), *by.get((gate, t, False), [])]
            cells += [_cell(both, ANY), _cell(both, CEILING)]
        body.append(cells)
    head = [
        "tightness",
        f"none: any violation ({BLIND})",
        f"none: orphan 400s ({BLIND})",
        "commit: any violation",
        "commit: overrun",
        "spill: any violation",
        "spill: overrun",
    ]
    return [
        f"## Budget tightness (load level {data.tight_level:g})",
        "",
        "Tightness is a typical turn's tokens against the working budget. Unit: sessions "
        "per 1,000 with at least one incident of the class [exact 95% interval].",
        "",
        *table(head, body),
    ]


def _knobs(data: ReportData) -> list[str]:
    rows = [r for r in data.knobs if blind(r)]
    if not rows:
        return []
    by = group(
        rows,
        lambda r: (
            r.spec.config.gate.value,
            r.spec.config.check_at.value,
            r.spec.config.retry.value,
        ),
    )
    kinds = (ANY, ORPHAN_400, DUP, TRUNC, CEILING)
    body = [
        [*k, f"{len(s):,}", *(_cell(s, x) for x in kinds), median_text(s)]
        for k, s in sorted(by.items())
    ]
    head = [
        "gate",
        "checks",
        "retry",
        "sessions",
        *(CLASS_LABELS[k] for k in kinds),
        "median turns to first violation",
    ]
    notes = []
    base = by.get(("none", "after_append", "rerun_batch"))
    for variant, kind, what in (
        (
            ("none", "before_invoke", "rerun_batch"),
            TRUNC,
            "Checking only before an invocation (no stream is open then)",
        ),
        (("none", "after_batch", "rerun_batch"), TRUNC, "Checking after whole batches"),
        (("none", "after_append", "idempotent"), DUP, "An idempotent retry"),
    ):
        other = by.get(variant)
        if base is None or other is None:
            continue
        orphans = rate_of(other, ORPHAN_400)
        tail = (
            f", but orphaned-result 400s stay at {_cell(other, ORPHAN_400)} (vs "
            f"{_cell(base, ORPHAN_400)}): the policies still split closed units."
            if orphans.count
            else f"; orphaned-result 400s: {_cell(other, ORPHAN_400)}."
        )
        notes.append(
            f"- {what} takes sessions with {CLASS_LABELS[kind]} from "
            f"{_cell(base, kind)} to {_cell(other, kind)} per 1,000{tail}"
        )
    return [
        f"## Runtime knobs ({BLIND} pooled, every load)",
        "",
        "Unit: sessions per 1,000 with at least one incident of the class [exact 95% interval].",
        "",
        *table(head, body),
        *notes,
        "",
    ]


def _errors(data: ReportData) -> list[str]:
    bad = {r.key: r for r in (*data.main, *data.tightness, *data.knobs) if r.error}
    lines = ["## Policy errors", ""]
    if not bad:
        return [*lines, "No run ended with a policy error.", ""]
    return [*lines, *(f"- `{k}`: {r.error}" for k, r in bad.items()), ""]


def tables(data: ReportData) -> list[list[str]]:
    """Every table section, in the order the summary shows them."""
    return [
        _per_policy(data),
        _levels(data),
        _growth(data),
        _costs(data),
        _tightness(data),
        _knobs(data),
        _errors(data),
    ]
