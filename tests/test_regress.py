"""baseline and regress: the statistical test, the baseline file, the corpus,
and partial results when a policy fails."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import (
    CallSpec,
    Event,
    ExternalWrite,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.trace import Trace, dumps
from prunecheck.sim.api.baseline_file import Baseline, SuiteRun, read_baseline
from prunecheck.sim.api.compare import Change, compare, fisher_greater
from prunecheck.sim.api.suite import Suite
from prunecheck.sim.cli.app import main
from prunecheck.sim.stats.sessions import SessionEnd, SessionRecord

SUITE = ["--levels", "0.6", "--seeds", "1-3", "--horizon", "200"]


def _brute_fisher(k1: int, n1: int, k2: int, n2: int) -> float:
    total, successes = n1 + n2, k1 + k2
    return sum(
        math.comb(successes, x) * math.comb(total - successes, n2 - x)
        for x in range(k2, min(successes, n2) + 1)
    ) / math.comb(total, n2)


@pytest.mark.parametrize(
    "case", [(0, 100, 10, 100), (5, 40, 12, 50), (30, 300, 31, 290), (7, 20, 1, 25), (0, 10, 0, 10)]
)
def test_fisher_matches_the_hypergeometric_tail(case: tuple[int, int, int, int]) -> None:
    expected = _brute_fisher(*case) if case[0] + case[2] else 1.0
    assert fisher_greater(*case) == pytest.approx(expected, rel=1e-9)


def _run(hit: int, sessions: int, kind: str = "orphaned_result") -> SuiteRun:
    """A run of ``sessions`` sessions, ``hit`` of which met ``kind`` (at turn 2)."""
    first = {kind: (20.0, 2)}
    if IncidentKind(kind).is_violation:
        first[ANY_VIOLATION] = (20.0, 2)
    met = SessionRecord(100.0, 10, SessionEnd.NATURAL, 30, {}, first)
    intact = SessionRecord(100.0, 10, SessionEnd.NATURAL, 30)
    records = (met,) * hit + (intact,) * (sessions - hit)
    return SuiteRun(0.5, 1, 30 * sessions, 300 * sessions, {kind: hit}, {kind: hit}, None, records)


def _baseline(*runs: SuiteRun) -> Baseline:
    return Baseline("recency", RuntimeConfig(), Suite((0.5,), (1,), 10.0), runs, complete=True)


def test_compare_needs_significance_and_a_minimum_effect() -> None:
    same = compare(_baseline(_run(3, 1000)), _baseline(_run(3, 1000)))
    assert not same.regressed and {c.change for c in same.classes} == {Change.SAME}
    # a difference the test cannot tell from chance is "not significant", not "unchanged"
    noise = compare(_baseline(_run(30, 1000)), _baseline(_run(36, 1000)))
    assert not noise.regressed and noise.classes[0].change is Change.NOT_SIGNIFICANT
    assert "not significant" in noise.table() and "unchanged" not in noise.table()
    worse = compare(_baseline(_run(0, 1000)), _baseline(_run(40, 1000)))
    assert worse.regressed and "REGRESSION" in worse.table()
    assert "baseline /1k sessions" in worse.table()
    # significant over many sessions (p ≈ 4e-4), but 6 per 1,000 < the 10 that count
    tiny = compare(_baseline(_run(20_000, 100_000)), _baseline(_run(20_600, 100_000)))
    assert not tiny.regressed and tiny.classes[0].p_value < 0.01
    assert (
        compare(_baseline(_run(40, 1000)), _baseline(_run(0, 1000))).classes[0].change
        is Change.IMPROVED
    )
    costs = compare(_baseline(_run(0, 1000, "deferral")), _baseline(_run(90, 1000, "deferral")))
    assert not costs.regressed and costs.classes[0].change is Change.COSTLIER


def _seed_trace() -> Trace:
    """The domain document's first incident, found under gate none."""
    events: tuple[Event, ...] = (
        SystemPrompt(200),
        UserMessage(1200, "Summarize the layout"),
        UserMessage(300, "read"),
        Invoke(),
        IssueBatch(
            (
                CallSpec("read_file", "src/app.py"),
                CallSpec("grep", "src"),
                CallSpec("stat", "app.log"),
            ),
            90,
        ),
        ResultChunk("c1", 700),
        ExternalWrite("src/app.py"),
        ResultChunk("c2", 300),
        ResultChunk("c3", 60),
        Invoke(),
        Retry(),
        Invoke(),
    )
    return Trace("lowest_salience", RuntimeConfig(budget=2000, hard_ceiling=4000), events)


def test_regress_flags_a_weakened_runtime_and_passes_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "seed_batch.json").write_text(dumps(_seed_trace()))
    base = tmp_path / "baseline.json"
    assert (
        main(
            [
                "baseline",
                "--out",
                str(base),
                "--policy",
                "lowest_salience",
                "--gate",
                "commit",
                "--corpus",
                str(corpus),
                *SUITE,
            ]
        )
        == 0
    )
    data = json.loads(base.read_text())
    assert data["complete"] and data["config"]["gate"] == "commit" and len(data["runs"]) == 3
    assert data["corpus"]["traces"] == [
        {"error": None, "path": "seed_batch.json", "violations": {}}
    ]
    capsys.readouterr()

    assert main(["regress", "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert "changed: nothing" in out and "verdict: no significant regression" in out

    assert main(["regress", "--baseline", str(base), "--gate", "none"]) == 1
    out = capsys.readouterr().out
    assert "changed: gate commit → none" in out
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "REGRESSION" in rows["orphaned result"] and "REGRESSION" in rows["any violation"]
    assert "corpus seed_batch.json: REGRESSION — now shows" in out


def test_regress_on_sessions_alone_exits_1_when_weakened_and_0_when_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No corpus: the verdict rests on session-level evidence only."""
    empty = tmp_path / "empty"
    empty.mkdir()
    base = tmp_path / "baseline.json"
    suite = ["--levels", "0.5,1", "--seeds", "1-2", "--horizon", "240"]
    assert (
        main(
            [
                "baseline",
                "--out",
                str(base),
                "--policy",
                "recency",
                "--gate",
                "commit",
                "--corpus",
                str(empty),
                *suite,
            ]
        )
        == 0
    )
    data = json.loads(base.read_text())
    assert data["version"] == 2 and all(run["sessions"] for run in data["runs"])
    capsys.readouterr()
    assert main(["regress", "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert "unit: sessions" in out and "verdict: no significant regression" in out
    assert "REGRESSION" not in out
    assert main(["regress", "--baseline", str(base), "--gate", "none"]) == 1
    out = capsys.readouterr().out
    rows = {line.split("  ")[0]: line for line in out.splitlines()}
    assert "REGRESSION" in rows["any violation"] and "corpus" not in out
    assert "log-rank" in out and "sooner: significant" in out


def test_a_version_1_baseline_is_refused_with_a_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.json"
    old.write_text(
        json.dumps(
            {
                "format": "prunecheck-baseline",
                "version": 1,
                "complete": True,
                "policy": "recency",
                "config": {},
                "suite": {},
                "runs": [],
            }
        )
    )
    assert main(["regress", "--baseline", str(old)]) == 2
    err = capsys.readouterr().err
    assert "version 1 baseline" in err and "sessions" in err and "re-create it" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_same_suite_gives_a_byte_identical_baseline(tmp_path: Path) -> None:
    for name in ("a.json", "b.json"):
        assert main(["baseline", "--out", str(tmp_path / name), "--policy", "recency", *SUITE]) == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def _failing_policy(tmp_path: Path) -> str:
    path = tmp_path / "flaky.py"
    path.write_text(
        "def select(view, need):\n"
        "    if view.turn > 12:\n"
        "        raise RuntimeError('context too long for me')\n"
        "    return [m.id for m in view.messages if m.role == 'tool'][:1]\n"
    )
    return f"{path}:select"


def test_policy_error_keeps_partial_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _failing_policy(tmp_path)
    partial = tmp_path / "partial.json"
    status = main(
        [
            "baseline",
            "--out",
            str(partial),
            "--policy",
            spec,
            "--levels",
            "0.1,1",
            "--seeds",
            "1",
            "--corpus",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and "context too long for me" in err and "at step" in err
    saved = read_baseline(partial)
    assert not saved.complete and len(saved.runs) == 2
    assert saved.runs[0].error is None and saved.runs[1].error is not None
    assert main(["regress", "--baseline", str(partial)]) == 2
    assert "is an incomplete baseline (2 of 2 runs)" in capsys.readouterr().err

    good = tmp_path / "good.json"
    assert (
        main(
            [
                "baseline",
                "--out",
                str(good),
                "--policy",
                "recency",
                "--levels",
                "0.1,1",
                "--seeds",
                "1",
            ]
        )
        == 0
    )
    current = tmp_path / "current.json"
    capsys.readouterr()
    status = main(["regress", "--baseline", str(good), "--policy", spec, "--out", str(current)])
    captured = capsys.readouterr()
    assert status == 2 and "context too long for me" in captured.err
    assert "1 suite runs compared" in captured.out  # the finished run is compared
    written = read_baseline(current)
    assert not written.complete and [r.error is None for r in written.runs] == [True, False]


def test_bad_baseline_files_are_one_paragraph_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="is not JSON"):
        read_baseline(bad)
    bad.write_text('{"format": "prunecheck-trace"}')
    assert main(["regress", "--baseline", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "is not a prunecheck baseline" in err and "Traceback" not in err
    assert main(["regress", "--baseline", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_difference_too_uncertain_to_call_is_not_significant_not_unchanged() -> None:
    # 0 -> 6 of 1000: p ≈ 0.016, above alpha 0.01 — a difference, but not a significant one.
    result = compare(_baseline(_run(0, 1000)), _baseline(_run(6, 1000)))
    changes = {c.kind: c for c in result.classes}
    assert 0.01 < changes["orphaned_result"].p_value < 0.05
    assert changes["orphaned_result"].change is Change.NOT_SIGNIFICANT
    assert "not significant" in result.table() and not result.regressed


POLICIES = Path(__file__).resolve().parent / "policies"


@pytest.mark.parametrize(
    ("seeds", "unchanged"),
    [
        # half the default seeds (76 sessions a run) still see the regression (make test);
        # the defaults, as a user runs them, and the unchanged file's own regress: make test-all
        pytest.param(("--seeds", "1-4"), False, id="False"),
        pytest.param((), False, id="False-default-seeds", marks=pytest.mark.slow),
        pytest.param((), True, id="True", marks=pytest.mark.slow),  # small suite: test_formats.py
    ],
)
def test_a_buggy_version_of_the_same_file_is_a_regression_with_the_default_seeds(
    seeds: tuple[str, ...], unchanged: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 20's scenario: a baseline of a correct policy, then the buggy
    version of the same file (about one session in ten breaks).  The default
    seeds are what a user runs (make test-all); make test runs half of them,
    which detect the regression as well, for half the CPU."""
    policy = tmp_path / "policy.py"
    policy.write_text((POLICIES / "regress_correct.py").read_text(), encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    assert main(["baseline", "--out", str(baseline), "--policy", f"{policy}:select", *seeds]) == 0
    capsys.readouterr()
    saved = read_baseline(baseline)
    assert saved.suite.seeds == (tuple(range(1, 5)) if seeds else tuple(range(1, 9)))  # default: 8
    assert saved.policy_digest is not None and saved.policy_digest.startswith("sha256:")
    assert saved.runtime_digest is not None
    if unchanged:  # exit 0, and says so with the digest
        assert main(["regress", "--baseline", str(baseline)]) == 0
        same = capsys.readouterr().out
        assert f"changed: nothing (same policy source {saved.policy_digest}" in same
    # the buggy version of the same file
    policy.write_text((POLICIES / "regress_buggy.py").read_text(), encoding="utf-8")
    assert main(["regress", "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert f"policy source changed ({saved.policy_digest} → sha256:" in out
    assert "verdict: REGRESSION — any violation" in out
    assert "sooner: significant, REGRESSION" in out
    sessions = sum(len(run.sessions) for run in saved.runs)  # the baseline's, a whole run
    assert sessions == 151 or seeds  # the default suite's
    assert f"power: with {sessions} sessions" in out  # the detectable effect, stated


def test_a_significantly_sooner_first_violation_alone_is_a_regression() -> None:
    """0/59 → 6/57 sessions: Fisher's p ≈ 0.012 is not below 0.01, but the
    log-rank test (p ≈ 0.005) is, and its verdict is the regression."""

    def session(first_turn: int | None) -> SessionRecord:
        first = (
            {}
            if first_turn is None
            else {
                ANY_VIOLATION: (10.0 * first_turn, first_turn),
                "invalid_prune": (10.0 * first_turn, first_turn),
            }
        )
        return SessionRecord(100.0, 10, SessionEnd.NATURAL, 10, {}, first)

    suite = Suite((0.5,), (1,), 100.0)
    config = RuntimeConfig()
    base = (session(None),) * 59
    cur = (session(3),) * 6 + (session(None),) * 51
    old = Baseline("p", config, suite, (SuiteRun(0.5, 1, 59, 590, {}, {}, None, base),))
    new = Baseline("p", config, suite, (SuiteRun(0.5, 1, 57, 570, {}, {}, None, cur),))
    result = compare(old, new)
    assert all(c.change is not Change.REGRESSION for c in result.classes)
    assert result.survival is not None and result.survival[1] < 0.01
    assert result.sooner and result.regressed
    assert "sooner: significant, REGRESSION" in result.table()
    assert not compare(old, old).regressed
    # the same shift on too small an effect is reported, not a regression
    tiny = compare(old, new, min_effect=200.0)
    assert not tiny.sooner and "below the 200 that count" in tiny.table()


def test_detectable_rate_is_the_smallest_significant_share_against_a_clean_baseline() -> None:
    from prunecheck.sim.api.compare import detectable_rate

    rate = detectable_rate(151, 0.01)
    assert rate is not None
    k = round(rate * 151 / 1000)
    assert fisher_greater(0, 151, k, 151) < 0.01 <= fisher_greater(0, 151, k - 1, 151)
    assert detectable_rate(3, 0.01) is None
