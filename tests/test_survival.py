"""Tests of the Kaplan–Meier estimator, its band and the log-rank test
(prunecheck.sim.stats.survival), and of session rates (prunecheck.sim.stats.sessions).

The expected values are computed by hand in the comments, not by the code
under test."""

from __future__ import annotations

import doctest
import math

import pytest

from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.sim.stats import sessions as sessions_module
from prunecheck.sim.stats import survival as survival_module
from prunecheck.sim.stats.sessions import (
    SessionEnd,
    SessionRecord,
    bootstrap_per_invocation,
    exact_interval,
    session_rate,
)
from prunecheck.sim.stats.survival import kaplan_meier, logrank_greater


def test_doctests() -> None:
    for module in (survival_module, sessions_module):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def _session(turns: int, failed_at: int | None, end: SessionEnd) -> SessionRecord:
    first = {} if failed_at is None else {ANY_VIOLATION: (10.0 * failed_at, failed_at)}
    return SessionRecord(10.0 * turns, turns, end, turns, {}, first)


def test_kaplan_meier_and_its_band_match_a_hand_computation() -> None:
    # Six sessions with known outcomes, in user turns:
    #   fails at turn 1; intact at its natural end at 2 (censored); fails at 3;
    #   fails at 3; intact when the horizon cut it at 4 (censored); fails at 5.
    runs = [
        _session(1, 1, SessionEnd.ABORT),
        _session(2, None, SessionEnd.NATURAL),
        _session(3, 3, SessionEnd.ABORT),
        _session(3, 3, SessionEnd.NATURAL),
        _session(4, None, SessionEnd.CENSORED),
        _session(5, 5, SessionEnd.ABORT),
    ]
    observations = [
        (s.first[ANY_VIOLATION][1], True) if s.has(ANY_VIOLATION) else (s.turns, False)
        for s in runs
    ]
    km = kaplan_meier(observations)
    # By hand: t=1: 6 at risk, 1 fails: S = 5/6.
    #          t=3: 4 at risk (3, 3, 4, 5), 2 fail: S = 5/6 · 2/4 = 5/12.
    #          t=5: 1 at risk, 1 fails: S = 0.
    assert km.times == (1.0, 3.0, 5.0)
    assert km.at_risk == (6, 4, 1) and km.events == (1, 2, 1)
    assert km.survival == pytest.approx((0.833333, 0.416667, 0.0), abs=1e-6)
    assert km.at(2.9) == pytest.approx(0.833333, abs=1e-6)
    assert km.median() == 3.0  # the first S(t) <= 1/2
    # Greenwood at t=1: Σ d/(n(n-d)) = 1/30; ln(5/6) = -0.182322, squared 0.0332412;
    # v = 0.0333333 / 0.0332412 = 1.002773; z·√v = 1.959964 · 1.001386 = 1.962680;
    # band = S^exp(±1.962680) = (5/6)^7.118377, (5/6)^0.140481 = 0.273123, 0.974712.
    assert km.low[0] == pytest.approx(0.273123, abs=1e-5)
    assert km.high[0] == pytest.approx(0.974712, abs=1e-5)
    # At t=3: Σ = 1/30 + 2/(4·2) = 0.283333; ln(5/12) = -0.875469, squared 0.766446;
    # v = 0.369672; z·√v = 1.959964 · 0.608006 = 1.191671;
    # band = (5/12)^3.292578, (5/12)^0.303713 = 0.055992, 0.766522.
    assert km.low[1] == pytest.approx(0.055992, abs=1e-5)
    assert km.high[1] == pytest.approx(0.766522, abs=1e-5)
    assert km.band_at(0.5) == (1.0, 1.0)


def test_a_curve_that_stays_above_one_half_has_no_median() -> None:
    km = kaplan_meier([(1, True), *[(10, False)] * 9])
    assert km.median() is None and km.at(10) == pytest.approx(0.9)
    assert km.end == 10.0
    xs, ss, lo, hi = km.steps()
    assert xs == [0.0, 1.0, 10.0] and ss[-1] == pytest.approx(0.9)
    assert all(a <= b <= c for a, b, c in zip(lo, ss, hi, strict=True))


def test_logrank_detects_earlier_failures_and_not_equal_ones() -> None:
    same = [(t, t % 3 == 0) for t in range(1, 41)]
    assert logrank_greater(same, same)[1] == pytest.approx(0.5)
    worse = [(t / 4, True) for t in range(1, 41)]
    z, p = logrank_greater(same, worse)
    assert z > 3 and p < 0.001
    assert logrank_greater(worse, same)[1] > 0.99
    assert logrank_greater([(1, False)], [(2, False)]) == (0.0, 1.0)


def test_session_rates_use_the_exact_interval() -> None:
    # 0 of 900: the upper bound solves (1 - p)^900 = 0.025: p = 1 - 0.025^(1/900).
    rate = session_rate(0, 900)
    assert rate.high == pytest.approx(1000 * (1 - 0.025 ** (1 / 900)))
    assert rate.bound_text() == "0 of 900 sessions: below 4.1 per 1,000 with 95% confidence"
    # 5 of 10: symmetric, P(X >= 5 | p=low) = 0.025 gives low = 0.187086 (tables).
    low, high = exact_interval(5, 10)
    assert low == pytest.approx(0.187086, abs=1e-5) and high == pytest.approx(1 - low)
    assert exact_interval(10, 10)[1] == 1.0
    with pytest.raises(ValueError):
        exact_interval(3, 2)


def test_the_bootstrap_over_sessions_is_seeded_and_wider_than_pooling() -> None:
    # Two kinds of session: broken ones where every invocation fails, and
    # healthy ones.  Pooled invocations look like a precise rate; sessions
    # say how little is known.
    runs = [
        SessionRecord(1.0, 1, SessionEnd.NATURAL, 50, {"x": 50 if i % 4 == 0 else 0})
        for i in range(40)
    ]
    a = bootstrap_per_invocation(runs, "x", seed=3)
    b = bootstrap_per_invocation(runs, "x", seed=3)
    assert a == b and a.per_1000 == 250.0
    wilson_half = 1000 * 1.96 * math.sqrt(0.25 * 0.75 / 2000)  # ≈ 19 per 1,000
    assert a.high - a.low > 4 * wilson_half
