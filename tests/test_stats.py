"""Tests of rates and Wilson intervals (prunecheck.sim.stats.intervals)."""

from __future__ import annotations

import math

import pytest

from prunecheck.sim.stats.intervals import Pooled, rate, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion",
        # Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score, no correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # Closed forms: k = 0 gives z²/(n + z²); k = n mirrors it; k = n/2 is symmetric.
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_matches_published_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_wilson_is_symmetric_and_narrows_with_more_trials() -> None:
    lo, hi = wilson(3, 40)
    mirror_lo, mirror_hi = wilson(37, 40)
    assert math.isclose(lo, 1 - mirror_hi) and math.isclose(hi, 1 - mirror_lo)
    widths = [wilson(n // 10, n)[1] - wilson(n // 10, n)[0] for n in (10, 100, 1000, 10000)]
    assert widths == sorted(widths, reverse=True)


def test_wilson_without_data_and_bad_counts() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="between 0 and the trials"):
        wilson(5, 4)
    with pytest.raises(ValueError):
        wilson(-1, 4)


def test_rate_per_1000_and_its_text() -> None:
    r = rate(5, 1000)
    assert r.per_1000 == 5.0
    assert (round(r.low, 2), round(r.high, 2)) == (2.14, 11.65)
    assert r.text() == "5.0 [2.1–11.7]"
    assert rate(0, 1000).text() == "0 [0.0–3.8]"
    assert rate(0, 0).text() == "n/a" and math.isnan(rate(0, 0).per_1000)


def test_pooled_adds_runs_and_rates_exposure() -> None:
    pooled = Pooled()
    pooled.add(
        invocations=100,
        events=900,
        sim_time=600.0,
        time_deferred=60.0,
        incidents={"orphaned_result": 7},
        exposed={"orphaned_result": 3},
    )
    pooled.add(
        invocations=300,
        events=2000,
        sim_time=600.0,
        time_deferred=0.0,
        incidents={"orphaned_result": 2},
        exposed={"orphaned_result": 1},
        error=True,
    )
    assert (pooled.runs, pooled.errors, pooled.invocations) == (2, 1, 400)
    assert pooled.rate("orphaned_result").count == 4
    assert pooled.rate("orphaned_result").per_1000 == 10.0
    assert pooled.per_1000("orphaned_result") == 22.5
    assert pooled.rate("spill").count == 0
    assert pooled.deferred_share == 0.05
