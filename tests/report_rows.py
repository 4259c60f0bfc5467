"""Synthetic sweep rows for the report's figure, page and browser tests:
every number in them is chosen here, so a test can say what a figure or a
page must show."""

from __future__ import annotations

from collections.abc import Sequence

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.stats.sessions import SessionEnd, SessionRecord
from prunecheck.sim.sweeps.runs import Row, RunSpec

ORPHANS = IncidentKind.ORPHANED_RESULT.value


def sessions(
    n: int, broken: int, turns: Sequence[int] = (3,), length: int = 10
) -> tuple[SessionRecord, ...]:
    """``n`` sessions of ``length`` user turns; the first ``broken`` met an
    orphaned result (a violation) at the turns given, cycled."""
    out = []
    for i in range(n):
        first: dict[str, tuple[float, int]] = {}
        if i < broken:
            turn = turns[i % len(turns)]
            first = {k: (10.0 * turn, turn) for k in (ANY_VIOLATION, ORPHANS, ORPHAN_REJECTION)}
        out.append(SessionRecord(100.0, length, SessionEnd.NATURAL, 20, {}, first))
    return tuple(out)


def row(
    policy: str,
    gate: Gate,
    level: float,
    n: int,
    broken: int = 0,
    *,
    check_at: CheckAt = CheckAt.AFTER_APPEND,
    turns: Sequence[int] = (3,),
    length: int = 10,
) -> Row:
    spec = RunSpec(policy, RuntimeConfig(gate=gate, check_at=check_at), level, load_at(level), 1)
    records = sessions(n, broken, turns, length)
    hits = {ORPHANS: broken, ANY_VIOLATION: broken} if broken else {}
    return Row(
        spec.key, spec, 20 * n, 200 * n, 600.0, 0.0, dict(hits), dict(hits), {}, None, records
    )


def data() -> ReportData:
    """recency breaks under gate none (at turns 2, 4 and 6), unit_safe never;
    gate commit sees nothing; the knobs add gate none checking before model
    calls, where recency breaks less (at turn 8)."""
    main = []
    for level in (0.0, 1.0):
        main += [
            row("recency", Gate.NONE, level, 40, 12 if level else 6, turns=(2, 4, 6)),
            row("unit_safe", Gate.NONE, level, 40),
            row("recency", Gate.COMMIT, level, 40),
            row("unit_safe", Gate.COMMIT, level, 40),
        ]
    knobs = [
        row("recency", Gate.NONE, level, 30, 3, check_at=CheckAt.BEFORE_INVOKE, turns=(8,))
        for level in (0.0, 1.0)
    ]
    return ReportData(
        main=tuple(main),
        tightness=(),
        knobs=tuple(knobs),
        tight_level=0.5,
        seeds=(1,),
        horizon=600.0,
        command="prunecheck report --test",
    )
