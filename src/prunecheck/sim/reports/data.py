"""What a failure-rate report is made of: the sweep's rows (:class:`ReportData`),
the incident classes it reports, and the pooling of rows into rates.

Shared by :mod:`.claims`, :mod:`.tables` and :mod:`.summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION, UNANSWERED_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.stats.intervals import Pooled
from prunecheck.sim.stats.sessions import SessionRecord, rate_of
from prunecheck.sim.sweeps.runs import Row

__all__ = [
    "ABORT",
    "ANY",
    "BLIND",
    "CEILING",
    "CLASS_LABELS",
    "DUP",
    "MEANINGS",
    "ORPHAN_400",
    "PRUNE",
    "TRUNC",
    "Measure",
    "ReportData",
    "blind",
    "gate_rows",
    "group",
    "per_session",
    "pool",
    "sessions_of",
    "table",
]

ORPHAN_400 = ORPHAN_REJECTION
DUP = IncidentKind.DUPLICATED_SIDE_EFFECT
TRUNC = IncidentKind.TRUNCATED_PAYLOAD
CEILING = IncidentKind.HARD_CEILING_OVERRUN
ANY = ANY_VIOLATION
ABORT = IncidentKind.SESSION_ABORT
PRUNE = IncidentKind.INVALID_PRUNE

#: What each reported class means, in the design notes' vocabulary.
MEANINGS: dict[str, str] = {
    ANY: "at least one violation of any class below (structural damage the user must never ship)",
    ORPHAN_400: "the provider answered HTTP 400: a tool result whose call is gone",
    UNANSWERED_REJECTION: "HTTP 400: a call whose result is gone",
    IncidentKind.ORPHANED_RESULT: "a result in context whose issuing assistant message was evicted",
    DUP: "a retry re-ran a batch: a write ran twice, or a read ran against a changed file",
    TRUNC: "a streamed result/answer lost its first chunks: valid-looking but wrong content",
    IncidentKind.UNANSWERED_CALL: "a completed call whose result was evicted while the call stayed",
    PRUNE: "a prune applied that split a unit or touched an open or pending one",
    ABORT: "outcome: a rejection after the runtime's last retry; the session ends and the "
    "agent starts a fresh one",
    CEILING: "cost: context above the hard ceiling (fail loudly, recoverable)",
    IncidentKind.DEFERRAL: "cost: a budget check deferred because a call was pending",
    IncidentKind.SPILL: "cost: a closed unit moved to the side store",
    IncidentKind.REINJECTION: "cost: a spilled unit brought back because a new call needs its file",
}
CLASS_LABELS = {
    ANY: "any violation",
    ORPHAN_400: "orphaned-result 400s",
    IncidentKind.ORPHANED_RESULT: "orphaned results",
    DUP: "duplicated side effects",
    TRUNC: "truncated payloads",
    IncidentKind.UNANSWERED_CALL: "unanswered calls",
    ABORT: "aborted sessions",
    CEILING: "hard-ceiling overruns",
}
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
            invocations=row.invocations,
            events=row.events,
            sim_time=row.sim_time,
            time_deferred=row.time_deferred,
            incidents=row.incidents,
            exposed=row.exposed,
            error=row.error is not None,
        )
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
