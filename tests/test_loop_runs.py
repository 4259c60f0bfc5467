"""``prunecheck check`` and ``search`` of a ``loop:`` spec (sim/cli/loop_runs.py), in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers import action_search
from prunecheck.sim.evidence.loop_bundle import BUNDLE_FILES

FAKE = Path(__file__).resolve().parent / "loops_fake.py"


@pytest.fixture
def short_shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every loop search of the test shrinks briefly (Hypothesis's 4 runs, 8
    of step deletion): these tests ask what a check or a search reports, not
    how short its schedules get (test_search_shrinks_one_scenario_class below
    and test_loops_search shrink in full)."""
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 4)  # every entry point's search
    monkeypatch.setattr(action_search, "POLISH_RUNS", 8)


@pytest.mark.usefixtures("short_shrink")
def test_check_prints_the_scenario_table_the_verdict_and_writes_bundles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["check", f"loop:{FAKE}:buggy", "--max-examples", "60", "--seed", "1",
                   "--out", str(tmp_path / "repro")])  # fmt: skip
    out = capsys.readouterr().out
    assert status == 1
    assert "scenario class" in out and "crash then a new message" in out
    assert "verdict: UNSAFE" in out and "minimal reproduction (" in out
    assert sorted(p.name for p in (tmp_path / "repro").iterdir() if p.is_file()) == sorted(
        BUNDLE_FILES
    )


@pytest.mark.usefixtures("short_shrink")
def test_check_of_the_careful_agent_with_crashes_left_out_is_safe_where_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["check", f"loop:{FAKE}:trimming_careful", "--max-examples", "42", "--quiet"])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    # crashes lose what a commit-only store never wrote: unsafe there, safe elsewhere; the
    # fake framework's own store does that for every configuration: framework findings,
    # which set the exit status only under --fail-on-framework
    assert status == 0 and "safe under plain parallel batches" in line
    assert line.startswith("verdict: UNSAFE (framework findings only)")
    argv = ["check", f"loop:{FAKE}:trimming_careful", "--max-examples", "42", "--quiet"]
    assert main([*argv, "--fail-on-framework"]) == 1


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


@pytest.mark.usefixtures("short_shrink")
def test_the_python_api_and_the_fixture_take_a_loop_spec(tmp_path: Path) -> None:
    import prunecheck
    from prunecheck.pytest_plugin import PrunecheckFixture

    result = prunecheck.check_loop(f"loop:{FAKE}:careful", max_examples=20,
                                   scenarios=["parallel", "cancel"])  # fmt: skip
    assert [c.verdict.value for c in result.cells] == ["safe", "safe"]
    found = prunecheck.search_loop(f"loop:{FAKE}:buggy", scenario="crash_new_message",
                                   max_examples=40, seed=1)  # fmt: skip
    assert found.found is not None
    fixture = PrunecheckFixture(tmp_path, "test_x")
    with pytest.raises(prunecheck.UnsafeLoop, match="minimal reproduction") as info:
        fixture.assert_loop_safe(f"loop:{FAKE}:buggy", scenarios=["crash_new_message"],
                                 max_examples=40, seed=1)  # fmt: skip
    assert info.value.bundle is not None and (info.value.bundle / "repro.py").is_file()
