"""``prunecheck check`` and ``search`` of a ``loop:`` spec (sim/cli/loop_runs.py), in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.loops.bundle import BUNDLE_FILES

FAKE = Path(__file__).resolve().parent / "loops_fake.py"


def test_check_prints_the_scenario_table_the_verdict_and_writes_bundles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", f"loop:{FAKE}:buggy", "--max-examples", "120", "--seed", "1",
                   "--out", str(tmp_path / "repro")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1
    assert "scenario class" in out and "crash then a new message" in out
    assert "verdict: UNSAFE" in out and "minimal reproduction (" in out
    assert sorted(p.name for p in (tmp_path / "repro").iterdir() if p.is_file()) == sorted(
        BUNDLE_FILES
    )


def test_check_of_the_careful_agent_with_crashes_left_out_is_safe_where_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["check", f"loop:{FAKE}:trimming_careful", "--max-examples", "150", "--quiet"])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # crashes lose what a commit-only store never wrote: unsafe there, safe elsewhere
    assert status == 1 and "safe under plain parallel batches" in line


def test_search_shrinks_one_scenario_class(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["search", f"loop:{FAKE}:buggy", "--scenario", "crash_new_message",
                   "--max-examples", "40", "--seed", "1"])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1 and "found: provider_rejection, unanswered_call" in out
    assert "shrunk from" in out and "VIOLATION" in out


def test_policies_lists_the_loop_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "loop:FILE.py:ATTR" in out and "crash_new_message" in out
