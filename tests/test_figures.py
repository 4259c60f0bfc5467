"""The report's figures (prunecheck.sim.reports.figures, .cost_figures):
no empty panels, per-point versus pooled bounds labelled, the turns axis
marking the stated session length, one unit per figure, readable legends
that say what differs.  Each figure is captured instead of saved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_rows import data, row

from prunecheck.model.config import CheckAt, RetryMode, RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.sim.drivers.workload import SESSION_TURNS, load_at
from prunecheck.sim.reports import cost_figures, figures
from prunecheck.sim.reports.figure_parts import CLASSES
from prunecheck.sim.reports.plotting import report_style
from prunecheck.sim.sweeps.runs import Row, RunSpec


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The figures drawn, kept open instead of written."""
    kept: list[Any] = []
    monkeypatch.setattr(figures, "save", lambda fig, path: kept.append(fig))
    monkeypatch.setattr(cost_figures, "save", lambda fig, path: kept.append(fig))
    yield kept
    from prunecheck.sim.reports.plotting import pyplot

    for fig in kept:
        pyplot().close(fig)


def _has_data(ax: Any) -> bool:
    """A panel shows data when one of its lines has a point above 0."""
    return any(any(y > 0 for y in line.get_ydata()) for line in ax.get_lines())


def test_the_rate_grid_draws_only_panels_with_data(drawn: list[Any], tmp_path: Path) -> None:
    with report_style():
        figures.rate_grid(
            data().main, tuple(CLASSES), lambda r: r.spec.level, "load", "T", tmp_path / "x.png"
        )
    (fig,) = drawn
    axes = fig.get_axes()
    # recency under gate none saw orphaned results (so: any violation,
    # orphaned-result 400s, orphaned results); gate commit saw nothing
    assert sorted(ax.get_title() for ax in axes) == sorted(
        f"{label} · gate none"
        for label in ("any violation", "orphaned-result 400s", "orphaned results")
    )
    assert all(_has_data(ax) for ax in axes)
    title = fig._suptitle.get_text().replace("\n", " ")
    assert (
        "Not drawn: gate commit — no session with an incident of any class plotted in 160 " in title
    )
    assert "below 22.8 per 1,000 (95%)" in title  # pooled: 1000 × (1 − 0.025^(1/160))
    assert "gate none: no session with duplicated side effects" in title
    legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
    assert "the 95% upper bound of that one point" in legend and "not pooled" in legend
    # unit_safe saw none at every point: its pooled bound is in the panel
    boxes = [t.get_text() for t in axes[0].texts]
    assert any("unit_safe: 0 of 80, below 45.1" in b for b in boxes)


def test_survival_marks_the_session_length_and_spans_every_turn(
    drawn: list[Any], tmp_path: Path
) -> None:
    rows = [*data().main, row("recency", Gate.NONE, 1.0, 5, 1, turns=(14,), length=17)]
    with report_style():
        figures.survival(rows, tmp_path / "s.png")
    (fig,) = drawn
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == [
        "gate none, against user turns",
        "gate none, against simulated time",
    ]
    turns = axes[0]
    assert turns.get_xlim() == (0.0, 17.0)  # the longest session's turns, past the 10th
    marks = [line.get_xdata()[0] for line in turns.get_lines() if line.get_linestyle() == "--"]
    assert SESSION_TURNS in marks
    assert any(f"{SESSION_TURNS}th user message" in t.get_text() for t in turns.texts)
    assert "Not drawn: gate commit — no violation in 160 sessions each" in fig._suptitle.get_text()


def test_costs_and_failures_are_separate_figures_with_one_unit_each(
    drawn: list[Any], tmp_path: Path
) -> None:
    with report_style():
        cost_figures.costs(data().main, tmp_path / "c.png", 1)
        cost_figures.failures(data().main, tmp_path / "f.png")
    cost, failure = drawn
    assert {ax.get_ylabel() for ax in cost.get_axes()} == {"invocations per 1,000 that saw it"}
    assert {ax.get_ylabel() for ax in failure.get_axes()} == {"sessions per 1,000"}
    assert "aborted sessions (rejected after the last retry)" in [
        ax.get_title() for ax in failure.get_axes()
    ]
    assert not any("aborted" in ax.get_title() for ax in cost.get_axes())


def _knob(check_at: CheckAt, retry: RetryMode, broken: int) -> Row:
    spec = RunSpec("recency", RuntimeConfig(check_at=check_at, retry=retry), 1.0, load_at(1.0), 1)
    base = row("recency", Gate.NONE, 1.0, 100, broken)
    return Row(
        spec.key,
        spec,
        *(
            getattr(base, f)
            for f in (
                "invocations",
                "events",
                "sim_time",
                "time_deferred",
                "incidents",
                "exposed",
                "counters",
                "error",
                "sessions",
            )
        ),
    )


def test_knob_panels_say_which_configurations_differ() -> None:
    pooled = {
        (Gate.NONE, CheckAt.AFTER_APPEND, RetryMode.RERUN_BATCH): list(
            _knob(CheckAt.AFTER_APPEND, RetryMode.RERUN_BATCH, 50).sessions
        ),
        (Gate.NONE, CheckAt.AFTER_BATCH, RetryMode.RERUN_BATCH): list(
            _knob(CheckAt.AFTER_BATCH, RetryMode.RERUN_BATCH, 48).sessions
        ),
        (Gate.NONE, CheckAt.BEFORE_INVOKE, RetryMode.RERUN_BATCH): list(
            _knob(CheckAt.BEFORE_INVOKE, RetryMode.RERUN_BATCH, 5).sessions
        ),
    }
    note = cost_figures.differences(pooled, "any_violation", False, 1)
    assert note.startswith("pooled over load; checks after_append, retry rerun_batch: 500")
    assert "differs: checks before_invoke, retry rerun_batch: 50 [16–113]" in note
    assert "after_batch" not in note  # 480 of 1,000 lies within the reference's interval
    alike = {k: v for k, v in pooled.items() if k[1] is not CheckAt.BEFORE_INVOKE}
    assert "the other 1 agree within their 95% intervals" in cost_figures.differences(
        alike, "any_violation", False, 1
    )


def test_the_knobs_legend_is_readable(drawn: list[Any], tmp_path: Path) -> None:
    rows = [_knob(c, RetryMode.RERUN_BATCH, b) for c, b in zip(CheckAt, (50, 48, 5), strict=True)]
    with report_style():
        cost_figures.knobs(rows, tmp_path / "k.png", 1)
    (fig,) = drawn
    (legend,) = [ax.get_legend() for ax in fig.get_axes() if ax.get_legend() is not None]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 10
    panel = next(ax for ax in fig.get_axes() if ax.get_title() == "any violation · gate none")
    assert any("differs: checks before_invoke" in t.get_text() for t in panel.texts)
