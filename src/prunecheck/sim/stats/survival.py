"""Time to first failure: the Kaplan–Meier estimator, its confidence band,
and the log-rank test.

A session is *intact* until its first violation; a session that ended (or
was cut by the horizon) while still intact is *censored* at its end: we
know it survived that long, not how much longer it would have.  The
Kaplan–Meier estimate of the share of sessions still intact at ``t`` is

    S(t) = Π over event times tᵢ ≤ t of (1 − dᵢ / nᵢ)

with ``dᵢ`` sessions failing at ``tᵢ`` and ``nᵢ`` at risk just before
(sessions censored at ``tᵢ`` count as at risk there).  Its variance is
Greenwood's, ``S(t)² Σ dᵢ / (nᵢ (nᵢ − dᵢ))``; the 95% band is the log-log
(Kalbfleisch–Prentice) one, ``S(t) ^ exp(± z √v)`` with
``v = Σ dᵢ / (nᵢ (nᵢ − dᵢ)) / (ln S(t))²``, which stays inside [0, 1].

Written here rather than taken from ``lifelines``: the estimator, its band
and the log-rank test are about eighty lines, and the library would bring
pandas, scipy and autograd into a tool that needs none of them.

Examples
--------
>>> km = kaplan_meier([(1, True), (2, False), (3, True), (3, True), (4, False), (5, True)])
>>> [round(s, 4) for s in km.survival]
[0.8333, 0.4167, 0.0]
>>> km.median()
3.0
>>> round(km.at(2.5), 4), km.at(0.5)
(0.8333, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Survival", "kaplan_meier", "logrank_greater"]

_Z95 = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Survival:
    """A Kaplan–Meier curve: a step function that drops at each event time.

    Attributes
    ----------
    times: the distinct event (failure) times, increasing.
    survival: S(t) just after each of them.
    low, high: its pointwise 95% log-log band.
    at_risk, events: nᵢ and dᵢ at each of them.
    subjects: sessions in the estimate; ``end``: the latest time observed
        (event or censoring): beyond it the curve is not defined.
    """

    times: tuple[float, ...]
    survival: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    at_risk: tuple[int, ...]
    events: tuple[int, ...]
    subjects: int
    end: float

    def _index(self, t: float) -> int:
        """How many event times are ≤ t."""
        lo, hi = 0, len(self.times)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.times[mid] <= t:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def at(self, t: float) -> float:
        """S(t): 1 before the first event."""
        i = self._index(t)
        return 1.0 if i == 0 else self.survival[i - 1]

    def band_at(self, t: float) -> tuple[float, float]:
        i = self._index(t)
        return (1.0, 1.0) if i == 0 else (self.low[i - 1], self.high[i - 1])

    def median(self) -> float | None:
        """The first time S(t) ≤ 1/2; None ("not reached") if it never is."""
        for t, s in zip(self.times, self.survival, strict=True):
            if s <= 0.5:
                return t
        return None

    def steps(self) -> tuple[list[float], list[float], list[float], list[float]]:
        """x, S, low, high as a step plot from 0 to ``end`` (``where='post'``)."""
        xs = [0.0, *self.times, self.end]
        ss = [1.0, *self.survival, self.survival[-1] if self.survival else 1.0]
        lo = [1.0, *self.low, self.low[-1] if self.low else 1.0]
        hi = [1.0, *self.high, self.high[-1] if self.high else 1.0]
        return xs, ss, lo, hi


def kaplan_meier(observations: Iterable[tuple[float, bool]], z: float = _Z95) -> Survival:
    """The Kaplan–Meier estimate of ``(time, failed)`` observations; a
    ``failed=False`` observation is censored at ``time``.  O(n log n).

    >>> km = kaplan_meier([(2, False), (2, False)])
    >>> km.times, km.median(), km.at(10)
    ((), None, 1.0)
    """
    data = sorted((float(t), bool(e)) for t, e in observations)
    n = len(data)
    times: list[float] = []
    surv: list[float] = []
    low: list[float] = []
    high: list[float] = []
    risk: list[int] = []
    deaths: list[int] = []
    s, greenwood = 1.0, 0.0
    i = 0
    while i < n:
        t = data[i][0]
        d = c = 0
        while i < n and data[i][0] == t:
            if data[i][1]:
                d += 1
            else:
                c += 1
            i += 1
        at_risk = n - (i - d - c)
        if d:
            s *= 1.0 - d / at_risk
            if at_risk > d:
                greenwood += d / (at_risk * (at_risk - d))
            times.append(t)
            surv.append(s)
            lo, hi = _loglog(s, greenwood, z)
            low.append(lo)
            high.append(hi)
            risk.append(at_risk)
            deaths.append(d)
    end = data[-1][0] if data else 0.0
    return Survival(
        tuple(times), tuple(surv), tuple(low), tuple(high), tuple(risk), tuple(deaths), n, end
    )


def _loglog(s: float, greenwood: float, z: float) -> tuple[float, float]:
    if s <= 0.0:
        return 0.0, 0.0
    if s >= 1.0:
        return 1.0, 1.0
    log_s = math.log(s)
    spread = z * math.sqrt(greenwood) / abs(log_s)
    return s ** math.exp(spread), s ** math.exp(-spread)


def logrank_greater(
    base: Sequence[tuple[float, bool]], current: Sequence[tuple[float, bool]]
) -> tuple[float, float]:
    """The log-rank test that ``current`` fails sooner than ``base``.

    Returns ``(z, p)``: the standardized excess of failures in ``current``
    over what equal hazards predict, and its one-sided p-value (normal
    approximation).  ``p = 1`` when neither group fails.

    >>> z, p = logrank_greater([(5, False)] * 20, [(1, True)] * 10 + [(5, False)] * 10)
    >>> round(z, 2), p < 0.001
    (3.61, True)
    """
    events = sorted({float(t) for t, e in (*base, *current) if e})
    if not events:
        return 0.0, 1.0
    observed = expected = variance = 0.0
    for t in events:
        n1 = sum(1 for x, _ in current if x >= t)
        n0 = sum(1 for x, _ in base if x >= t)
        d1 = sum(1 for x, e in current if e and x == t)
        d = d1 + sum(1 for x, e in base if e and x == t)
        n = n0 + n1
        if n < 2:
            continue
        observed += d1
        expected += d * n1 / n
        variance += d * (n1 / n) * (1 - n1 / n) * (n - d) / (n - 1)
    if variance <= 0:
        return 0.0, 1.0
    z = (observed - expected) / math.sqrt(variance)
    return z, 0.5 * math.erfc(z / math.sqrt(2))
