"""Comparing a current run with a baseline, class by class, over sessions:
a one-sided Fisher exact test on the share of sessions that met each class,
a minimum-effect guard, a log-rank test on the time to the first violation,
and corpus traces that newly show violations (see :mod:`.regress`).  The
verdict follows the tests it prints: a significant increase in a violation
class, or a significantly sooner first violation, is a regression.

>>> detectable_rate(150, 0.01)  # sessions with a violation per 1,000, none in the baseline
46.7
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.api.baseline_file import Baseline
from prunecheck.sim.stats.sessions import (
    observations,
)
from prunecheck.sim.stats.survival import kaplan_meier, logrank_greater

__all__ = [
    "ANY",
    "Change",
    "ClassChange",
    "Comparison",
    "compare",
    "detectable_rate",
    "fisher_greater",
]

#: The extra class the simulator counts: sessions that met any violation.
ANY = ANY_VIOLATION


def fisher_greater(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p-value that proportion ``k2/n2`` exceeds ``k1/n1``.

    Given the ``k1 + k2`` successes, the chance that ``n2`` draws from the
    ``n1 + n2`` trials hold ``k2`` or more of them (hypergeometric tail).

    >>> round(fisher_greater(0, 100, 10, 100), 4)
    0.0008
    >>> fisher_greater(5, 100, 5, 100) > 0.5
    True
    """
    k1, k2 = min(k1, n1), min(k2, n2)
    if n1 <= 0 or n2 <= 0:
        return 1.0
    total, successes = n1 + n2, k1 + k2
    top = min(successes, n2)
    if k2 <= max(0, successes - n1):
        return 1.0

    def log_comb(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    base = log_comb(total, n2)
    terms = [
        log_comb(successes, x) + log_comb(total - successes, n2 - x) - base
        for x in range(k2, top + 1)
    ]
    peak = max(terms)
    return min(1.0, math.exp(peak) * sum(math.exp(t - peak) for t in terms))


def detectable_rate(sessions: int, alpha: float) -> float | None:
    """The smallest share of sessions with a violation (per 1,000) that the
    one-sided Fisher test calls significant at ``alpha`` against a baseline
    that saw none, both runs having ``sessions`` sessions; None if no share
    is (too few sessions)."""
    for k in range(1, sessions + 1):
        if fisher_greater(0, sessions, k, sessions) < alpha:
            return round(1000.0 * k / sessions, 1)
    return None


class Change(StrEnum):
    REGRESSION = "REGRESSION"
    IMPROVED = "improved"
    COSTLIER = "costlier"
    CHEAPER = "cheaper"
    NOT_SIGNIFICANT = "not significant"
    SAME = "same counts"


@dataclass(frozen=True, slots=True)
class ClassChange:
    """One incident class, baseline against current."""

    kind: str
    base: tuple[int, int]  # (sessions that met the class, sessions)
    current: tuple[int, int]
    p_value: float
    change: Change

    @staticmethod
    def rate(pair: tuple[int, int]) -> float:
        k, n = pair
        return 1000.0 * k / n if n else 0.0


@dataclass(frozen=True, slots=True)
class Comparison:
    """What changed, class by class and corpus trace by corpus trace."""

    classes: tuple[ClassChange, ...]
    corpus: tuple[tuple[str, str], ...]  # (trace, what changed), regressions only
    notes: tuple[str, ...] = ()
    runs: int = 0
    alpha: float = 0.01
    survival: tuple[float, float] | None = None  # log-rank (z, p): current fails sooner
    #: The largest drop of the share still intact, per 1,000 sessions, at any
    #: user turn (Kaplan–Meier, baseline minus current), and the smallest that counts.
    survival_gap: float = 0.0
    min_effect: float = 10.0

    @property
    def sooner(self) -> bool:
        """The log-rank test says the current runtime fails significantly
        sooner, by at least ``min_effect`` per 1,000 sessions at some turn
        (so that a tiny shift over many sessions is not a regression)."""
        return (
            self.survival is not None
            and self.survival[1] < self.alpha
            and self.survival_gap >= self.min_effect
        )

    @property
    def regressed(self) -> bool:
        return (
            bool(self.corpus)
            or self.sooner
            or any(c.change is Change.REGRESSION for c in self.classes)
        )

    def table(self) -> str:
        """The table of what changed (plain text)."""
        head = (
            f"{'incident class':<24} {'baseline /1k sessions':>22} "
            f"{'current /1k sessions':>22} {'p-value':>9}  verdict"
        )
        lines = [head, "-" * len(head)]
        for c in self.classes:
            lines.append(
                f"{c.kind.replace('_', ' '):<24} {_rate(c.base):>22} "
                f"{_rate(c.current):>22} {_p(c.p_value):>9}  {c.change}"
            )
        if not self.classes:
            lines.append("(no incident in either run)")
        if self.survival is not None:
            z, p = self.survival
            if p >= self.alpha:
                word = "not significant"
            elif self.sooner:
                word = (
                    f"sooner: significant, REGRESSION (up to {self.survival_gap:.0f} per "
                    "1,000 more sessions broken by the same turn)"
                )
            else:
                word = (
                    f"sooner: significant, but at most {self.survival_gap:.1f} per 1,000 "
                    f"sessions (below the {self.min_effect:g} that count)"
                )
            lines.append(
                f"time to first violation (user turns), log-rank test that the current "
                f"runtime fails sooner: z = {z:.2f}, p = {_p(p)} — {word}"
            )
        for trace, text in self.corpus:
            lines.append(f"corpus {trace}: REGRESSION — {text}")
        lines.extend(self.notes)
        return "\n".join(lines) + "\n"


def _rate(pair: tuple[int, int]) -> str:
    return f"{ClassChange.rate(pair):.1f} ({pair[0]}/{pair[1]})"


def _p(p: float) -> str:
    return "<1e-12" if p < 1e-12 else f"{p:.2g}"


def compare(
    baseline: Baseline,
    current: Baseline,
    *,
    alpha: float = 0.01,
    min_effect: float = 10.0,
    min_ratio: float = 1.25,
) -> Comparison:
    """Compare the runs both hold (matched by level and seed) and the corpus.

    A class *regressed* when its share of sessions grew with one-sided
    p < ``alpha`` and by at least ``min_effect`` per 1,000 sessions and
    ``min_ratio`` times (the ratio is waived when the baseline saw none).
    Cost classes (deferral, overrun, spill, re-injection) and session aborts
    are reported as costlier / cheaper and never regress.  A difference the
    test cannot tell from chance is "not significant".
    """
    mine = {r.key: r for r in current.runs if r.error is None}
    pairs = [(r, mine[r.key]) for r in baseline.runs if r.error is None and r.key in mine]
    base_sessions = [s for b, _ in pairs for s in b.sessions]
    cur_sessions = [s for _, c in pairs for s in c.sessions]
    kinds = [ANY, *(k.value for k in IncidentKind)]
    classes = []
    for kind in kinds:
        base = (sum(1 for s in base_sessions if kind in s.first), len(base_sessions))
        cur = (sum(1 for s in cur_sessions if kind in s.first), len(cur_sessions))
        if not base[0] and not cur[0]:
            continue
        up, down = fisher_greater(*base, *cur), fisher_greater(*cur, *base)
        grown = _effect(base, cur, min_effect, min_ratio)
        shrunk = _effect(cur, base, min_effect, min_ratio)
        violation = kind == ANY or IncidentKind(kind).is_violation
        if up < alpha and grown:
            change, p = (Change.REGRESSION if violation else Change.COSTLIER), up
        elif down < alpha and shrunk:
            change, p = (Change.IMPROVED if violation else Change.CHEAPER), down
        else:
            change = Change.SAME if base == cur else Change.NOT_SIGNIFICANT
            p = min(up, down)
        classes.append(ClassChange(kind, base, cur, p, change))
    survival = None
    gap = 0.0
    if any(ANY in s.first for s in (*base_sessions, *cur_sessions)):
        before, after = observations(base_sessions, ANY), observations(cur_sessions, ANY)
        survival = logrank_greater(before, after)
        gap = _gap(before, after)
    corpus, notes = _corpus_changes(baseline, current)
    if len(pairs) < baseline.suite.size():
        notes.append(
            f"note: {len(pairs)} of {baseline.suite.size()} suite runs compared "
            "(the others are missing or ended by a policy error)."
        )
    return Comparison(
        tuple(classes), tuple(corpus), tuple(notes), len(pairs), alpha, survival, gap, min_effect
    )


def _gap(before: list[tuple[float, bool]], after: list[tuple[float, bool]]) -> float:
    """max over failure times t of S_before(t) − S_after(t), per 1,000."""
    if not before or not after:
        return 0.0
    old, new = kaplan_meier(before), kaplan_meier(after)
    times = sorted({*old.times, *new.times})
    return round(max((1000.0 * (old.at(t) - new.at(t)) for t in times), default=0.0), 1)


def _effect(a: tuple[int, int], b: tuple[int, int], min_effect: float, min_ratio: float) -> bool:
    ra, rb = ClassChange.rate(a), ClassChange.rate(b)
    return rb - ra >= min_effect and (ra == 0 or rb >= ra * min_ratio)


def _corpus_changes(
    baseline: Baseline, current: Baseline
) -> tuple[list[tuple[str, str]], list[str]]:
    before = {c.path: c for c in baseline.corpus}
    changes: list[tuple[str, str]] = []
    notes: list[str] = []
    for now in current.corpus:
        old = before.get(now.path)
        if now.error is not None:
            notes.append(f"corpus {now.path}: not replayed — {now.error}")
        elif old is None:
            notes.append(f"corpus {now.path}: new since the baseline, not compared")
        elif old.error is None and not old.violations and now.violations:
            shown = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in now.violations.items())
            changes.append((now.path, f"now shows {shown}; the baseline showed none"))
    return changes, notes
