"""Tests of the failure-rate report (prunecheck.sim.report, .summary, .cmd_report)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS
from prunecheck.model.runtime import RuntimeConfig
from prunecheck.sim.cli import main
from prunecheck.sim.cmd_report import LEVELS, TIGHTNESS, default_parts
from prunecheck.sim.load import load_at
from prunecheck.sim.report import write_report
from prunecheck.sim.summary import ReportData, summary_text
from prunecheck.sim.sweep import Row, RunSpec, configs, plan, run_sweep

ORPHAN_400 = "provider_rejection:result_without_call"
PNG = b"\x89PNG\r\n\x1a\n"


def _data(rows: list[Row], knobs: tuple[Row, ...] = ()) -> ReportData:
    return ReportData(main=tuple(rows), tightness=(), knobs=knobs, tight_level=0.5, seeds=(1,),
                      horizon=60.0, command="prunecheck report --test")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    """A real (small) sweep: two policies, three gates, two loads, one seed."""
    out = tmp_path_factory.mktemp("sweep") / "results.jsonl"
    base = RuntimeConfig()
    gates = (Gate.NONE, Gate.COMMIT, Gate.SPILL)
    main = plan(["lowest_salience", "unit_safe"], configs(base, gates=gates), [0.25, 1.0], [1],
                horizon=150.0)
    tight = plan(["lowest_salience"], configs(base, gates=gates), [0.5], [1],
                 tightness=(0.2, 0.8), horizon=150.0)
    outcome = run_sweep([*main, *tight], out, jobs=1, quiet=True)
    rows = {r.key: r for r in outcome.rows}
    return ReportData(main=tuple(rows[s.key] for s in main),
                      tightness=tuple(rows[s.key] for s in tight), knobs=(),
                      tight_level=0.5, seeds=(1,), horizon=150.0, command="prunecheck test")


def test_the_report_writes_plots_and_a_summary_from_the_rows(small: ReportData,
                                                             tmp_path: Path) -> None:
    files = write_report(small, tmp_path / "a")
    assert [f.name for f in files] == ["failure-vs-load.png", "failure-vs-tightness.png",
                                       "cost-of-safety.png", "runtime-knobs.png", "summary.md"]
    for png in files[:4]:
        assert png.read_bytes().startswith(PNG) and png.stat().st_size > 20_000
    summary = files[4].read_text()
    commit = [r for r in small.main if r.spec.config.gate is Gate.COMMIT]
    invocations = sum(r.invocations for r in commit)
    assert f"| under the commit gate those are zero | 0 of {invocations:,} invocations" in summary
    none_raw = [r for r in small.main if r.spec.config.gate is Gate.NONE
                and r.spec.policy == "lowest_salience"]
    k = sum(r.exposed.get(ORPHAN_400, 0) for r in none_raw)
    n = sum(r.invocations for r in none_raw)
    assert f"{1000 * k / n:.1f} [" in summary  # the pooled rate of the one raw policy
    assert "- [failure-vs-load.png](failure-vs-load.png)" in summary


def test_plots_and_summary_are_byte_identical_for_the_same_rows(small: ReportData,
                                                                tmp_path: Path) -> None:
    first = write_report(small, tmp_path / "a")
    second = write_report(small, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert b"Matplotlib" not in first[0].read_bytes()


def _row(policy: str, gate: Gate, level: float, invocations: int,
         exposed: dict[str, int] | None = None, error: str | None = None) -> Row:
    spec = RunSpec(policy, RuntimeConfig(gate=gate), level, load_at(level), 1, 60.0)
    exposed = exposed or {}
    return Row(spec.key, spec, invocations, invocations * 10, 120.0, 0.0, dict(exposed),
               exposed, {}, error)


def test_verdicts_are_worded_from_the_numbers_when_they_disagree() -> None:
    rows = [
        # Raw policy: orphan 400s fall with load; no truncation at all.
        _row("recency", Gate.NONE, 0.0, 1000, {ORPHAN_400: 300, "any_violation": 300}),
        _row("recency", Gate.NONE, 1.0, 1000, {ORPHAN_400: 100, "any_violation": 100,
                                               "duplicated_side_effect": 50}),
        # The commit gate lets violations through and overruns less than none.
        _row("recency", Gate.COMMIT, 1.0, 1000, {ORPHAN_400: 2, "any_violation": 2}),
        _row("recency", Gate.SPILL, 1.0, 1000, {"hard_ceiling_overrun": 40}),
        _row("recency", Gate.NONE, 0.5, 1000, {"hard_ceiling_overrun": 30},
             error="policy 'x' at step 3: boom"),
    ]
    text = summary_text(_data(rows), [])
    assert "| raw policies with per-append checks produce truncated payloads | 0 [0.0–1.3]" \
        in text and "does not hold: none seen" in text
    assert re.search(r"grow with load \(orphaned-result rejections \(HTTP 400\)\) \| load 0: "
                     r"300\.0 \[[^]]+\] → load 1: 100\.0 .*\| does not hold: not higher", text)
    assert "| under the commit gate those are zero | 2 of 1,000 invocations" in text
    assert "does not hold: provider_rejection:result_without_call 2, any_violation 2" in text
    assert "| … at the price of more hard-ceiling overruns | gate none: 10.0" in text
    assert "gate commit: 0 [0.0–3.8] per 1,000 invocations | does not hold" in text
    assert "does not hold: spill is not below commit beyond the intervals" in text
    assert "policy 'x' at step 3: boom" in text


def test_verdicts_hold_when_the_numbers_agree() -> None:
    rows = [
        _row("recency", Gate.NONE, 0.0, 1000, {ORPHAN_400: 10, "duplicated_side_effect": 5,
                                               "truncated_payload": 1, "any_violation": 12}),
        _row("recency", Gate.NONE, 1.0, 1000, {ORPHAN_400: 500, "duplicated_side_effect": 200,
                                               "truncated_payload": 60, "any_violation": 600,
                                               "hard_ceiling_overrun": 1}),
        _row("recency", Gate.COMMIT, 1.0, 1000, {"hard_ceiling_overrun": 100}),
        _row("recency", Gate.SPILL, 1.0, 1000, {"hard_ceiling_overrun": 5}),
    ]
    text = summary_text(_data(rows), [])
    assert text.count("| holds, rising at every level |") == 3
    assert "| under the commit gate those are zero | 0 of 1,000 invocations" in text
    assert "gate none: 0.5 [0.1–2.8] → gate commit: 100.0 [82.9–120.2] per 1,000 invocations" \
        " | holds |" in text
    assert "holds: spill absorbs 95% of them; the rest are contexts over the ceiling" in text
    assert "No run ended with a policy error." in text


def test_the_default_sweep_covers_every_policy_gate_knob_and_load() -> None:
    main, tight, knobs = default_parts([1, 2], ["mine.py:select"])
    policies = {*BUILTINS, "mine.py:select"}
    assert {s.policy for s in main} == policies == {s.policy for s in tight}
    assert {s.policy for s in knobs} == policies - {"unit_safe"}
    assert len(main) == len(policies) * len(Gate) * len(LEVELS) * 2
    assert {s.load.tightness for s in tight} == set(TIGHTNESS)
    assert {(s.config.check_at.value, s.config.retry.value) for s in knobs} == {
        ("after_append", "rerun_batch"), ("after_batch", "rerun_batch"),
        ("before_invoke", "rerun_batch"), ("after_append", "idempotent")}
    keys = [s.key for s in (*main, *tight, *knobs)]
    assert len(set(keys)) < len(keys)  # shared runs (e.g. the main grid's) are run once


def test_report_rejects_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--seeds", "0"]) == 2
    assert "--seeds: must be at least 1" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path), "--policy", "nope.py:select"]) == 2
    assert "file nope.py does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "prunecheck report --out reports --seed 1" in capsys.readouterr().out


@pytest.mark.slow
def test_report_command_end_to_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--quick", "--seeds", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "run now, 0 reused" in err
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["cost-of-safety.png", "failure-vs-load.png", "failure-vs-tightness.png",
                     "results.jsonl", "runtime-knobs.png", "summary.md"]
    assert main(["report", "--out", str(tmp_path), "--quick", "--seeds", "1", "--quiet"]) == 0
    assert "(0 run now," in capsys.readouterr().err


def test_the_summary_says_where_the_documents_mechanism_disagrees() -> None:
    rows = [
        _row("lowest_salience", Gate.NONE, 0.0, 2000, {"truncated_payload": 1}),
        _row("clear_old_results", Gate.NONE, 0.0, 2000, {"truncated_payload": 400}),
    ]
    text = summary_text(_data(rows), [])
    assert "Where this disagrees with the document" in text
    assert "lowest_salience truncates 0.5 [0.1–2.8] per 1,000 invocations" in text
    assert "Most truncation comes from clear_old_results (200.0 [" in text
