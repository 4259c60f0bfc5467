"""Rates with honest uncertainty: Wilson score intervals, and pooling runs.

A failure rate here is a binomial proportion: of ``n`` model invocations,
``k`` saw at least one incident of a class (since the invocation before).
:func:`wilson` gives its 95% score interval, which stays inside [0, 1] and
is informative at ``k = 0`` (the upper bound is then ``z²/(n+z²)``), where
the textbook normal interval collapses to a point.

Examples
--------
>>> lo, hi = wilson(0, 10)
>>> round(lo, 4), round(hi, 4)
(0.0, 0.2775)
>>> r = rate(5, 1000)
>>> r.per_1000, round(r.low, 2), round(r.high, 2)
(5.0, 2.14, 11.65)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Z95", "Pooled", "Rate", "rate", "wilson"]

#: The standard normal quantile for a two-sided 95% interval.
Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials.

    Parameters
    ----------
    k, n: successes and trials, ``0 <= k <= n``.
    z: the normal quantile (default: 95% two-sided).

    Returns
    -------
    (low, high) as proportions; ``(0.0, 1.0)`` when ``n == 0`` (no data:
    nothing is known).

    Raises
    ------
    ValueError
        if ``k`` is outside ``[0, n]``.
    """
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"successes k ({k}) must be between 0 and the trials n ({n})")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` of ``total`` invocations, as a rate per 1,000 with its 95%
    Wilson interval (also per 1,000)."""

    count: int
    total: int
    low: float
    high: float

    @property
    def per_1000(self) -> float:
        return 1000.0 * self.count / self.total if self.total else math.nan

    def text(self, digits: int = 1) -> str:
        """``"12.3 [10.1–14.9]"``; ``"0 [0–3.7]"`` for none observed."""
        if not self.total:
            return "n/a"
        value = "0" if self.count == 0 else f"{self.per_1000:.{digits}f}"
        return f"{value} [{self.low:.{digits}f}–{self.high:.{digits}f}]"


def rate(count: int, total: int) -> Rate:
    """``count`` of ``total`` as a :class:`Rate` per 1,000 with a 95% interval."""
    low, high = wilson(count, total)
    return Rate(count, total, 1000.0 * low, 1000.0 * high)


@dataclass(slots=True)
class Pooled:
    """Runs pooled together (seeds, levels, policies …): sums of their counts."""

    runs: int = 0
    errors: int = 0
    invocations: int = 0
    events: int = 0
    sim_time: float = 0.0
    time_deferred: float = 0.0
    incidents: Counter[str] = field(default_factory=Counter)
    exposed: Counter[str] = field(default_factory=Counter)

    def add(
        self,
        *,
        invocations: int,
        events: int,
        sim_time: float,
        time_deferred: float,
        incidents: Mapping[str, int],
        exposed: Mapping[str, int],
        error: bool = False,
    ) -> None:
        self.runs += 1
        self.errors += int(error)
        self.invocations += invocations
        self.events += events
        self.sim_time += sim_time
        self.time_deferred += time_deferred
        self.incidents.update(incidents)
        self.exposed.update(exposed)

    def rate(self, kind: str) -> Rate:
        """Invocations exposed to ``kind`` per 1,000 invocations."""
        return rate(self.exposed.get(kind, 0), self.invocations)

    def per_1000(self, kind: str) -> float:
        """Incidents of ``kind`` (all of them, not exposure) per 1,000 invocations."""
        n = self.invocations
        return 1000.0 * self.incidents.get(kind, 0) / n if n else math.nan

    @property
    def deferred_share(self) -> float:
        """Share of simulated agent time spent with a deferred budget check."""
        return self.time_deferred / self.sim_time if self.sim_time else math.nan
