"""Tests of sweeps: plans, parallel runs, the results file, resuming
(prunecheck.sim.sweeps.sweep)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.sweeps.runs import Row, RunSpec
from prunecheck.sim.sweeps.sweep import configs, plan, read_rows, run_sweep

HORIZON = 60.0

BAD_POLICIES = """
def raises(view, need):
    raise ValueError("salience table is empty")

def unknown(view, need):
    return ["m999"]

def wrong_type(view, need):
    return 42

def evict_oldest(view, need):
    return [m.id for m in view.messages if m.role != "system"][:1]
"""


def _specs(policies: tuple[str, ...] = ("recency", "unit_safe"), seeds: int = 2) -> list[RunSpec]:
    runtime = configs(RuntimeConfig(), gates=(Gate.NONE, Gate.COMMIT))
    return plan(policies, runtime, [0.5, 1.0], list(range(1, seeds + 1)), horizon=HORIZON)


def test_plan_is_the_full_product_with_unique_readable_keys() -> None:
    runtime = configs(
        RuntimeConfig(),
        gates=(Gate.NONE, Gate.SPILL),
        check_at=(CheckAt.AFTER_APPEND, CheckAt.BEFORE_INVOKE),
    )
    specs = plan(
        ["recency", "token_span"],
        runtime,
        [0.0, 1.0],
        [1, 2, 3],
        tightness=(None, 0.9),
        horizon=HORIZON,
    )
    assert len(specs) == 2 * 4 * 2 * 2 * 3
    assert len({s.key for s in specs}) == len(specs)
    spec = specs[0]
    assert spec.key.startswith("recency|none|after_append|rerun_batch|L0.00|t0.2|s1#")
    assert {s.load.tightness for s in specs if s.level == 1.0} == {load_at(1.0).tightness, 0.9}


def test_a_sweep_writes_one_sorted_row_per_run_and_reuses_them(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    specs = _specs()
    first = run_sweep(specs, out, jobs=1, quiet=True)
    assert (first.ran, first.reused) == (len(specs), 0)
    lines = out.read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert keys == sorted(s.key for s in specs)
    assert [r.key for r in first.rows] == keys
    text = out.read_text()
    again = run_sweep(specs, out, jobs=1, quiet=True)
    assert (again.ran, again.reused) == (0, len(specs))
    assert again.rows == first.rows
    assert out.read_text() == text
    row = first.rows[0]
    assert Row.from_json(json.loads(lines[0])) == row
    assert row.invocations > 0 and row.error is None


def test_parallel_and_serial_sweeps_write_byte_identical_files(tmp_path: Path) -> None:
    specs = _specs()
    run_sweep(specs, tmp_path / "serial.jsonl", jobs=1, quiet=True)
    run_sweep(list(reversed(specs)), tmp_path / "parallel.jsonl", jobs=2, quiet=True)
    assert (tmp_path / "serial.jsonl").read_bytes() == (tmp_path / "parallel.jsonl").read_bytes()


def test_an_interrupted_sweep_resumes_and_drops_a_torn_line(tmp_path: Path) -> None:
    specs = _specs()
    whole = tmp_path / "whole.jsonl"
    run_sweep(specs, whole, jobs=1, quiet=True)
    lines = whole.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # killed mid-write
    warnings: list[str] = []
    outcome = run_sweep(specs, cut, jobs=1, quiet=True, warn=warnings.append)
    assert (outcome.ran, outcome.reused) == (len(specs) - 3, 3)
    assert len(warnings) == 1 and "torn last line" in warnings[0]
    assert cut.read_bytes() == whole.read_bytes()


def test_a_damaged_line_is_reported_and_discarded(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    out.write_text('{"key": "x"}\nnot json at all\n')
    warnings: list[str] = []
    assert read_rows(out, warnings.append) == {}
    assert len(warnings) == 2
    assert "line 1 is not a result row (ValueError: its checksum does not match" in warnings[0]
    assert "line 2 is not a result row" in warnings[1]


def test_policy_errors_are_recorded_per_run_and_the_sweep_goes_on(tmp_path: Path) -> None:
    policy_file = tmp_path / "bad_policies.py"
    policy_file.write_text(BAD_POLICIES)
    names = {
        name: f"{policy_file}:{name}"
        for name in ("raises", "unknown", "wrong_type", "evict_oldest")
    }
    runtime = configs(RuntimeConfig(budget=3000, hard_ceiling=4000), gates=(Gate.NONE,))
    specs = plan([*names.values(), "recency"], runtime, [1.0], [1], horizon=HORIZON)
    outcome = run_sweep(specs, tmp_path / "runs.jsonl", jobs=2, quiet=True)
    errors = {r.spec.policy: r.error for r in outcome.rows}
    assert "raised ValueError: salience table is empty" in (errors[names["raises"]] or "")
    assert "unknown message id 'm999'" in (errors[names["unknown"]] or "")
    assert "got int" in (errors[names["wrong_type"]] or "")
    assert errors[names["evict_oldest"]] is None  # a user policy, run next to the built-ins
    assert errors["recency"] is None
    failed = next(r for r in outcome.rows if r.spec.policy == names["raises"])
    assert failed.events > 0  # the run stopped cleanly at the error, keeping its counts
    stored = read_rows(tmp_path / "runs.jsonl")
    assert stored[failed.key].error == failed.error


def test_an_unloadable_policy_is_a_row_error_not_a_crash(tmp_path: Path) -> None:
    runtime = configs(RuntimeConfig(), gates=(Gate.NONE,))
    specs = plan(["no_such_policy", "recency"], runtime, [0.0], [1], horizon=HORIZON)
    outcome = run_sweep(specs, tmp_path / "runs.jsonl", jobs=1, quiet=True)
    errors = {r.spec.policy: r.error for r in outcome.rows}
    assert "no_such_policy" in (errors["no_such_policy"] or "")
    assert errors["recency"] is None


@pytest.mark.slow
def test_a_larger_sweep_is_deterministic_across_job_counts(tmp_path: Path) -> None:
    specs = plan(
        ["lowest_salience", "similarity", "unit_safe"],
        configs(RuntimeConfig()),
        [0.0, 0.5, 1.0],
        [1, 2],
        horizon=300.0,
    )
    run_sweep(specs, tmp_path / "a.jsonl", jobs=1, quiet=True)
    run_sweep(specs, tmp_path / "b.jsonl", jobs=2, quiet=True)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_an_exclusive_sweep_keeps_only_its_own_rows(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    specs = _specs()
    run_sweep(specs, out, jobs=1, quiet=True)
    fewer = specs[:3]
    kept = run_sweep(fewer, out, jobs=1, quiet=True)
    assert kept.ran == 0 and len(out.read_text().splitlines()) == len(specs)
    run_sweep(fewer, out, jobs=1, quiet=True, exclusive=True)
    assert [json.loads(line)["key"] for line in out.read_text().splitlines()] == sorted(
        s.key for s in fewer
    )


def test_a_file_of_stale_rows_warns_a_few_times_then_counts(tmp_path: Path) -> None:
    # An upgrade makes every stored row stale; 1,221 warning lines (one a row) buried the
    # report's own output. The first few are named, the rest counted in one line.
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps({"key": f"k{i}"}) + "\n" for i in range(10)))
    said: list[str] = []
    assert read_rows(path, warn=said.append) == {}
    assert len(said) == 4
    assert all("line" in s for s in said[:3])
    assert "7 more lines discarded" in said[3] and "(10 in all)" in said[3]
