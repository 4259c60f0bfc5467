"""``prunecheck sweep loop:…``: an agent loop's session failure rates (issue 30:
the drivers of every subject include rates over sessions).

The fake framework (tests/loops_fake.py) stands for a real one: sessions run in
the SimPy simulator's time (sim/drivers/action_simulator.py), seeded (same seed,
same bytes), resumed from the results file, and the load is what changes the
rate: the careful agent never fails under cancellation, the buggy one fails
more often as cancels get more likely.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.action_simulator import session_rng, simulate_session
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.sweeps.loop_sweep import read_loop_rows, run_loop_sweep

ROOT = Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "loops_fake.py"


def _sweep(agent: str, out: Path, *args: str) -> int:
    return main(["sweep", f"loop:{FAKE}:{agent}", "--out", str(out), "--quiet", *args])


def test_a_loop_sweep_is_seeded_resumed_and_sorted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--levels", "0.5,1", "--sessions", "6", "--scenario", "cancel", "--seed", "4")
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert _sweep("buggy", first, *args) == 0
    table = capsys.readouterr().out
    assert "| cancel | 0.5 | 6 |" in table and "| cancel | 1 | 6 |" in table
    assert _sweep("buggy", second, *args) == 0
    assert first.read_bytes() == second.read_bytes()  # same seed, same bytes
    lines = first.read_text().splitlines()
    assert len(lines) == 12 and lines == sorted(lines, key=lambda ln: json.loads(ln)["key"])
    # an interrupted sweep: the last session lost, a torn line left; the rerun redoes it only
    first.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:30])
    assert _sweep("buggy", first, *args) == 0
    err = capsys.readouterr().err
    assert "12 sessions (1 run now, 11 reused)" in err
    assert first.read_bytes() == second.read_bytes()


def test_rows_of_the_earlier_driver_are_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from prunecheck.sim.support.ledger import seal

    out = tmp_path / "old.jsonl"
    args = ("--levels", "1", "--sessions", "2", "--scenario", "cancel", "--seed", "4")
    assert _sweep("buggy", out, *args) == 0
    fresh = out.read_bytes()
    # the seeded walk wrote rows without the session's simulated time
    old = [json.loads(line) for line in out.read_text().splitlines()]
    out.write_text("".join(json.dumps(seal({k: v for k, v in row.items() if k != "sim_time"}))
                           + "\n" for row in old))  # fmt: skip
    capsys.readouterr()
    assert _sweep("buggy", out, *args) == 0
    err = capsys.readouterr().err
    assert "2 sessions (2 run now, 0 reused)" in err and "is not a loop session row" in err
    assert out.read_bytes() == fresh


def test_the_load_changes_how_often_a_buggy_loop_fails() -> None:
    target = load_target(f"loop:{FAKE}:buggy")
    system = LoopSystem(target, SCENARIOS[ScenarioClass.CANCEL], 16)

    def failed(level: float) -> tuple[int, int]:
        runs = [simulate_session(system, session_rng(0, i), load=load_at(level), pressure=level)
                for i in range(40)]  # fmt: skip
        assert all(r.error is None for r in runs)
        return sum(r.violated for r in runs), sum(r.faults for r in runs)

    (calm, calm_faults), (stormy, stormy_faults) = failed(0.0), failed(1.0)
    assert calm_faults == 0 < stormy_faults  # at load 0 no fault happens at all
    assert calm < stormy


def test_a_loop_says_which_waiting_call_a_completion_concerns() -> None:
    from prunecheck.sim.drivers.action_simulator import Aimed
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.steps import Complete, Fail, ReplyStep, User

    system = LoopSystem(load_target(f"loop:{FAKE}:buggy"), SCENARIOS[ScenarioClass.CANCEL], 16)
    assert isinstance(system, Aimed)
    state = system.start(None)
    try:
        system.perform(state, User("hello"))
        assert system.targets(state, "complete") == []
        tool = state.tools[0].name
        calls = (ToolCall("c1", tool, "{}"), ToolCall("c2", tool, "{}"))
        system.perform(state, ReplyStep("", calls))
        assert system.targets(state, "complete") == ["c1", "c2"]
        assert system.targets(state, "reply") == [] and system.targets(state, "cancel") == []
        step = system.aimed(state, "complete", "c2", lambda n: 0)
        assert isinstance(step, Complete) and step.call == "c2"
        system.perform(state, step)
        assert system.targets(state, "fail") == ["c1"]
        failed = system.aimed(state, "fail", "c1", lambda n: 0)
        assert isinstance(failed, Fail) and failed.call == "c1"
    finally:
        system.close(state)


def test_the_careful_loop_has_no_violated_session_under_cancellation(tmp_path: Path) -> None:
    out = tmp_path / "careful.jsonl"
    # (check says the same: safe under cancellation; its crash class is a framework finding)
    swept = run_loop_sweep(f"loop:{FAKE}:careful", out, levels=[1.0], sessions=12, seed=2,
                           scenarios=[ScenarioClass.CANCEL])  # fmt: skip
    assert len(swept.rows) == 12 and not any(r.violations for r in swept.rows)
    assert sum(r.faults for r in swept.rows) > 0  # cancels happened: not vacuous
    assert set(read_loop_rows(out)) == {r.key for r in swept.rows}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--gate", "none"), "--gate"),
        (("--check-at", "after_batch"), "--check-at"),
        (("--levels", "1.5"), "--levels 1.5"),
        (("--plot", "rates.svg"), "--plot rates.svg"),
    ],
)
def test_a_loop_sweep_refuses_what_does_not_apply(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], named: str
) -> None:
    assert _sweep("buggy", tmp_path / "x.jsonl", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prunecheck sweep: {named}") and "Traceback" not in err
    assert not (tmp_path / "x.jsonl").exists()


def test_a_policy_sweep_refuses_the_loop_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for flag, value in (("--sessions", "5"), ("--plot", str(tmp_path / "p.png"))):
        status = main(["sweep", "lowest_salience", "--out", str(tmp_path / "p.jsonl"), flag, value])
        assert status == 2
        assert f"{flag}: applies to an agent loop" in capsys.readouterr().err
    assert not (tmp_path / "p.png").exists()


def test_a_loop_sweep_draws_its_rates_the_same_for_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--levels", "0,1", "--sessions", "4", "--scenario", "crash_new_message")
    plot, results = tmp_path / "a.png", tmp_path / "a.jsonl"
    assert _sweep("buggy", results, *args, "--plot", str(plot)) == 0
    drawn = plot.read_bytes()
    assert drawn[:8] == b"\x89PNG\r\n\x1a\n"
    # resumed (the sessions reused): the plot drawn before is drawn over, byte for byte
    assert _sweep("buggy", results, *args, "--plot", str(plot)) == 0
    assert plot.read_bytes() == drawn
    # any other file is kept and refused (exit 2)
    other = tmp_path / "notes.png"
    other.write_text("my notes")
    capsys.readouterr()
    assert _sweep("buggy", tmp_path / "a.jsonl", *args, "--plot", str(other)) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and "Traceback" not in err
    assert other.read_text() == "my notes"


def test_the_rates_drawn_are_the_table_s() -> None:
    from prunecheck.sim.reports.loop_rates import loop_rates
    from prunecheck.sim.sweeps.loop_sweep import LoopRow

    def row(scenario: str, level: float, index: int, broken: bool) -> LoopRow:
        kinds = ("orphaned_result",) if broken else ()
        return LoopRow("loop:a.py:agent", scenario, level, index, 0, 3, 2, 1, kinds, None, None,
                       12.5)  # fmt: skip

    rows = [row("trim", 1.0, i, i < 3) for i in range(10)] + [row("cancel", 0.0, 0, False)]
    rates = loop_rates(rows)
    assert list(rates) == ["cancel", "trim"]  # the scenario classes' order
    ((level, rate),) = rates["trim"]["loop:a.py:agent"]
    assert level == 1.0 and (rate.count, rate.total) == (3, 10) and rate.per_1000 == 300
    assert 0 < rate.low < 300 < rate.high < 1000  # the exact 95 % interval around it
