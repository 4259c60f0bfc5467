"""The verdict chart (prunecheck.sim.reports.verdict_chart): a cell per
policy × gate × check placement, computed from the rows."""

from __future__ import annotations

from pathlib import Path

from report_rows import data

from prunecheck.model.config import CheckAt
from prunecheck.model.gates import Gate
from prunecheck.sim.reports.plotting import report_style
from prunecheck.sim.reports.verdict_chart import Cell, Verdict, draw_verdicts, verdict_cells


def _cells() -> dict[tuple[str, Gate, CheckAt], Cell]:
    return {(c.policy, c.gate, c.check_at): c for line in verdict_cells(data()) for c in line}


def test_cells_are_policy_by_gate_and_placement_from_the_rows() -> None:
    lines = verdict_cells(data())
    assert [line[0].policy for line in lines] == ["recency", "unit_safe"]
    assert [(c.gate, c.check_at) for c in lines[0]] == [
        (Gate.NONE, CheckAt.AFTER_APPEND),
        (Gate.NONE, CheckAt.BEFORE_INVOKE),
        (Gate.COMMIT, CheckAt.AFTER_APPEND),
    ]
    cells = _cells()
    broken = cells["recency", Gate.NONE, CheckAt.AFTER_APPEND]
    # 6 + 12 of 80 sessions broke at turns 2, 4, 6: the curve falls below one
    # half only if more than half broke, so the median is not reached
    assert (broken.verdict, broken.broken, broken.sessions) == (Verdict.UNSAFE, 18, 80)
    assert broken.median_turns is None and "median not reached" in broken.text()
    safe = cells["unit_safe", Gate.COMMIT, CheckAt.AFTER_APPEND]
    assert (safe.verdict, safe.sessions) == (Verdict.SAFE, 80)
    assert "below 45.1 per 1,000" in safe.text()  # 1000 × (1 − 0.025^(1/80))
    missing = cells["unit_safe", Gate.NONE, CheckAt.BEFORE_INVOKE]
    assert missing.verdict is Verdict.NOT_RUN and missing.text() == "not run"


def test_an_unsafe_cell_shows_the_median_turns_to_the_first_violation() -> None:
    from report_rows import row

    from prunecheck.sim.reports.data import ReportData

    rows = (row("recency", Gate.NONE, 1.0, 10, 8, turns=(5, 7)),)
    report = ReportData(rows, (), (), 0.5, (1,), 600.0, "x")
    (cell,) = verdict_cells(report)[0]
    # 8 of 10 broke, half of them at turn 5: the share intact is 0.6 after
    # turn 5 and 0.2 after turn 7, so the median is turn 7
    assert cell.median_turns == 7 and "median 7 turns" in cell.text()


def test_the_chart_is_drawn_and_byte_identical(tmp_path: Path) -> None:
    with report_style():
        draw_verdicts(data(), tmp_path / "a.png")
        draw_verdicts(data(), tmp_path / "b.png")
    first = (tmp_path / "a.png").read_bytes()
    assert first.startswith(b"\x89PNG") and first == (tmp_path / "b.png").read_bytes()
