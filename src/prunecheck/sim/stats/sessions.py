"""Sessions, the statistical unit: what one session did, and rates over sessions.

A *session* is one conversation of one simulated agent: it opens with a
system prompt and ends in one of three ways (:class:`SessionEnd`):

* ``natural``: the agent finished the turn after its ``SESSION_TURNS``-th
  user message (see :mod:`.agents`) and starts a fresh session;
* ``abort``: a rejected invocation exhausted the runtime's ``max_retries``,
  the error surfaced and the agent started a fresh session;
* ``censored``: the run's horizon (or a policy error) cut it short.

Invocations inside a session are correlated (a broken history stays broken
until the session ends); sessions are independent of each other within the
simulator's assumptions (fresh context, their own random draws; they share
only the world of files, whose versions matter to duplicated reads alone).
So rates with intervals are taken *over sessions*: the share of sessions
with at least one incident of a class, with an exact (Clopper–Pearson) 95%
interval, and per-invocation rates get a seeded bootstrap over sessions.

Examples
--------
>>> r = session_rate(0, 900)
>>> r.text()
'0 of 900 [0–4.1]'
>>> round(exact_interval(3, 10)[0], 4), round(exact_interval(3, 10)[1], 4)
(0.0667, 0.6525)
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any

from prunecheck.model.incidents import IncidentKind

__all__ = [
    "NOT_TIMED",
    "PER_INVOCATION",
    "ClusteredRate",
    "SessionEnd",
    "SessionRate",
    "SessionRecord",
    "bootstrap_per_invocation",
    "exact_interval",
    "observations",
    "rate_of",
    "session_rate",
    "sessions_from_json",
    "sessions_to_json",
]


#: Keys a session records the first time of: every class but the frequent
#: costs of the safe gates (deferral, spill, re-injection happen in nearly
#: every gated session and are measured per invocation instead).
NOT_TIMED = frozenset(
    {IncidentKind.DEFERRAL.value, IncidentKind.SPILL.value, IncidentKind.REINJECTION.value}
)
#: Keys a session counts exposed invocations of: the costs reported per
#: 1,000 invocations (with a bootstrap over sessions).
PER_INVOCATION = frozenset(
    {
        IncidentKind.HARD_CEILING_OVERRUN.value,
        IncidentKind.SPILL.value,
        IncidentKind.REINJECTION.value,
    }
)


class SessionEnd(StrEnum):
    """How a session ended."""

    NATURAL = "natural"
    ABORT = "abort"
    CENSORED = "censored"


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session.

    Attributes
    ----------
    duration: simulated seconds from its first event to its end.
    turns: user messages it received.
    end: how it ended.
    invocations: model invocations in it (blocked ones not counted).
    exposed: per cost in :data:`PER_INVOCATION`, invocations that saw it
        since the invocation before.
    first: per class key (incident kinds but :data:`NOT_TIMED`,
        ``provider_rejection:<kind>`` and ``any_violation``), when it first
        happened: (seconds since the session began, user messages received
        by then).
    """

    duration: float
    turns: int
    end: SessionEnd
    invocations: int = 0
    exposed: Mapping[str, int] = field(default_factory=dict)
    first: Mapping[str, tuple[float, int]] = field(default_factory=dict)

    def has(self, key: str) -> bool:
        return key in self.first

    def to_json(self) -> dict[str, Any]:
        """Compact JSON: ``exp`` and ``first`` are left out when empty."""
        out: dict[str, Any] = {
            "t": self.duration,
            "turns": self.turns,
            "end": self.end.value,
            "inv": self.invocations,
        }
        if self.exposed:
            out["exp"] = dict(sorted(self.exposed.items()))
        if self.first:
            out["first"] = {k: [t, n] for k, (t, n) in sorted(self.first.items())}
        return out

    @classmethod
    def from_json(cls, data: Any) -> SessionRecord:
        """Parse; ValueError/TypeError/KeyError if it is not a session."""
        first = {str(k): (float(v[0]), int(v[1])) for k, v in data.get("first", {}).items()}
        exposed = {str(k): int(v) for k, v in data.get("exp", {}).items()}
        return cls(
            float(data["t"]),
            int(data["turns"]),
            SessionEnd(data["end"]),
            int(data["inv"]),
            exposed,
            first,
        )


def sessions_to_json(sessions: Sequence[SessionRecord]) -> list[dict[str, Any]]:
    return [s.to_json() for s in sessions]


def sessions_from_json(data: Any) -> tuple[SessionRecord, ...]:
    if not isinstance(data, list):
        raise TypeError("sessions must be a list")
    return tuple(SessionRecord.from_json(item) for item in data)


# ------------------------------------------------------------ exact intervals
def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p) = I_(1-p)(n - k, k + 1)."""
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return _betainc(n - k, k + 1, 1.0 - p)


def _solve(f: Any, target: float, increasing: bool) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(60):  # bisection to ~1e-18
        mid = (lo + hi) / 2
        if (f(mid) < target) == increasing:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@cache
def exact_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Clopper–Pearson ("exact") interval of ``k`` successes in ``n``.

    Each side holds at least ``(1 - confidence) / 2``; at ``k = 0`` the upper
    bound is ``1 - (α/2)^(1/n)`` (about ``3.7 / n`` at 95%, a little above the
    "rule of three" ``3 / n``, which is the one-sided 95% bound).

    >>> lo, hi = exact_interval(0, 900)
    >>> lo, round(1000 * hi, 2)
    (0.0, 4.09)
    >>> exact_interval(0, 0)
    (0.0, 1.0)
    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"successes k ({k}) must be between 0 and the trials n ({n})")
    if n == 0:
        return 0.0, 1.0
    tail = (1.0 - confidence) / 2
    # lowest p with P(X >= k) >= tail; highest p with P(X <= k) >= tail
    low = (
        0.0
        if k == 0
        else tail ** (1.0 / n)
        if k == n
        else _solve(lambda p: 1.0 - _binom_cdf(k - 1, n, p), tail, True)
    )
    high = (
        1.0
        if k == n
        else 1.0 - tail ** (1.0 / n)
        if k == 0
        else _solve(lambda p: _binom_cdf(k, n, p), tail, False)
    )
    return low, high


@dataclass(frozen=True, slots=True)
class SessionRate:
    """``count`` of ``total`` sessions, per 1,000 sessions, with its exact 95%
    interval (also per 1,000 sessions)."""

    count: int
    total: int
    low: float
    high: float

    @property
    def per_1000(self) -> float:
        return 1000.0 * self.count / self.total if self.total else math.nan

    def text(self) -> str:
        """``"37 of 120 [226–398]"``: sessions, then per 1,000 sessions with a 95% interval;
        ``"0 of 900 [0–4.1]"`` when none was seen."""
        if not self.total:
            return "n/a"
        digits = 1 if self.high < 100 else 0
        value = f"{self.count} of {self.total:,}"
        low = "0" if self.low == 0 else f"{self.low:.{digits}f}"
        return f"{value} [{low}–{self.high:.{digits}f}]"

    def per_1000_text(self) -> str:
        """``"308 [226–398]"`` per 1,000 sessions."""
        if not self.total:
            return "n/a"
        digits = 1 if self.high < 100 else 0
        value = "0" if self.count == 0 else f"{self.per_1000:.{digits}f}"
        low = "0" if self.low == 0 else f"{self.low:.{digits}f}"
        return f"{value} [{low}–{self.high:.{digits}f}]"

    def bound_text(self) -> str:
        """``"0 of 900 sessions: below 4.1 per 1,000 with 95% confidence"``."""
        return (
            f"{self.count} of {self.total:,} sessions: below {self.high:.1f} per 1,000 "
            "with 95% confidence"
        )


def session_rate(count: int, total: int) -> SessionRate:
    """Sessions with the class of ``total`` sessions, per 1,000 with an exact interval."""
    low, high = exact_interval(count, total)
    return SessionRate(count, total, 1000.0 * low, 1000.0 * high)


# ------------------------------------------------------------------ bootstrap
@dataclass(frozen=True, slots=True)
class ClusteredRate:
    """A per-1,000-invocation rate with a 95% percentile bootstrap interval
    over sessions (the invocations of one session are resampled together)."""

    count: int
    total: int
    low: float
    high: float

    @property
    def per_1000(self) -> float:
        return 1000.0 * self.count / self.total if self.total else math.nan

    def text(self, digits: int = 1) -> str:
        """``"38.1 [36.2–40.3]"``; ``"0 (none in 41,504)"`` when none was seen
        (a bootstrap of zeros is a point; it says nothing about the bound)."""
        if not self.total:
            return "n/a"
        if self.count == 0:
            return f"0 (none in {self.total:,})"
        return f"{self.per_1000:.{digits}f} [{self.low:.{digits}f}–{self.high:.{digits}f}]"


def bootstrap_per_invocation(
    sessions: Sequence[SessionRecord], key: str, *, seed: int = 0, reps: int = 200
) -> ClusteredRate:
    """Invocations that saw ``key`` per 1,000 invocations, with a seeded 95%
    percentile bootstrap over sessions (a cluster bootstrap: a session's
    invocations are correlated, so they are resampled together).

    >>> s = [SessionRecord(10.0, 2, SessionEnd.NATURAL, 10, {"x": 5}),
    ...      SessionRecord(10.0, 2, SessionEnd.NATURAL, 10, {})]
    >>> r = bootstrap_per_invocation(s, "x", seed=1)
    >>> r.per_1000, r.low, r.high
    (250.0, 0.0, 500.0)
    """
    counts = [(s.exposed.get(key, 0), s.invocations) for s in sessions if s.invocations]
    k = sum(c for c, _ in counts)
    n = sum(m for _, m in counts)
    if not n:
        return ClusteredRate(0, 0, math.nan, math.nan)
    rng = random.Random(f"prunecheck/bootstrap/{seed}/{key}")
    size = len(counts)
    ks = [c for c, _ in counts]
    ms = [m for _, m in counts]
    every = range(size)
    stats = []
    for _ in range(reps):
        pick = rng.choices(every, k=size)
        stats.append(1000.0 * sum(map(ks.__getitem__, pick)) / sum(map(ms.__getitem__, pick)))
    stats.sort()
    low = stats[int(0.025 * (reps - 1))]
    high = stats[math.ceil(0.975 * (reps - 1))]
    return ClusteredRate(k, n, low, high)


# ------------------------------------------------------------------ pooling
def rate_of(sessions: Sequence[SessionRecord], key: str) -> SessionRate:
    """Sessions that met ``key`` at least once, of all ``sessions``."""
    return session_rate(sum(1 for s in sessions if key in s.first), len(sessions))


def observations(
    sessions: Sequence[SessionRecord], key: str, axis: str = "turns"
) -> list[tuple[float, bool]]:
    """``(time, failed)`` per session for a survival estimate of the first
    ``key``: on ``axis`` "turns" (user messages received) or "time"
    (simulated seconds since the session began); an intact session is
    censored at its end."""
    index = 1 if axis == "turns" else 0
    out: list[tuple[float, bool]] = []
    for s in sessions:
        hit = s.first.get(key)
        if hit is not None:
            out.append((float(hit[index]), True))
        else:
            out.append((float(s.turns if index else s.duration), False))
    return out
