"""The report's figures (prunecheck.sim.reports.figures, .cost_figures):
no empty panels, per-point versus pooled bounds labelled, the turns axis
marking the stated session length, one unit per figure, readable legends
that say what differs.  Each figure is captured instead of saved."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from figure_facts import PAGE_WIDTH, panels, problems, recording
from report_rows import data, row

from prunecheck.model.config import CheckAt, RetryMode, RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.drivers.workload import SESSION_TURNS, load_at
from prunecheck.sim.reports import cost_figures, figures
from prunecheck.sim.reports.figure_parts import CLASSES, INVOCATION_RATE, SESSION_RATE
from prunecheck.sim.reports.plotting import (
    MIN_FONT,
    legend_line,
    pyplot,
    report_style,
)
from prunecheck.sim.reports.verdict_chart import draw_verdicts
from prunecheck.sim.stats.sessions import SessionEnd
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
    # unit_safe saw none at every point: its pooled bound is in the note under the panel
    boxes = [t.get_text().replace("\n", " ") for t in axes[0].texts]
    assert any("unit_safe 0 of 80, below 45.1" in b for b in boxes)


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
    main = [*data().main, _aborting("recency", 1.0, 40, 4), _aborting("recency", 0.0, 40, 0)]
    with report_style():
        cost_figures.costs(main, tmp_path / "c.png", 1)
        cost_figures.failures(main, tmp_path / "f.png")
    cost, failure = drawn
    assert {ax.get_ylabel() for ax in failure.get_axes()} == {SESSION_RATE}
    assert "aborted sessions (rejected past retries)" in [
        ax.get_title() for ax in failure.get_axes()
    ]
    # no gate paid a cost in these rows: no empty panel, the title says so
    assert cost.get_axes() == []
    heading = cost._suptitle.get_text().replace("\n", " ")
    assert "Not drawn: hard-ceiling overruns; spills" in heading
    total = sum(len(r.sessions) for r in main)  # every policy here is a built-in
    assert f"none under any gate at any load level ({total:,} sessions)" in heading
    cost_figures.costs([*main, _overrun(1.0, 40, 5)], tmp_path / "c.png", 1)
    (panel,) = drawn[-1].get_axes()
    assert panel.get_ylabel() == INVOCATION_RATE and panel.get_title() == "hard-ceiling overruns"


def _aborting(policy: str, level: float, n: int, aborted: int) -> Row:
    """A row of gate none whose first ``aborted`` sessions ended aborted."""
    base = row(policy, Gate.NONE, level, n)
    abort = {IncidentKind.SESSION_ABORT.value: (50.0, 3)}
    sessions = tuple(
        replace(s, end=SessionEnd.ABORT, first={**s.first, **abort}) if i < aborted else s
        for i, s in enumerate(base.sessions)
    )
    return replace(base, sessions=sessions)


def _overrun(level: float, n: int, each: int) -> Row:
    """A row of gate commit whose sessions each saw ``each`` overruns."""
    base = row("recency", Gate.COMMIT, level, n)
    key = IncidentKind.HARD_CEILING_OVERRUN.value
    return replace(
        base,
        sessions=tuple(
            replace(s, exposed={key: each}, first={key: (20.0, 2)}) for s in base.sessions
        ),
    )


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
    assert min(t.get_fontsize() for t in legend.get_texts()) >= MIN_FONT
    panel = next(ax for ax in fig.get_axes() if ax.get_title() == "any violation · gate none")
    assert any("differs: checks before_invoke" in t.get_text() for t in panel.texts)


def test_every_plot_of_the_report_is_readable_at_the_size_the_page_shows_it(
    rows_drawn: tuple[Path, list[Path], dict[str, list[str]]],
) -> None:
    """Checked as each plot was saved (tests/figure_facts.py): as wide as the
    page at most, no text below MIN_FONT, labels with units, no empty panel,
    nothing cut off, no note or legend over data."""
    _, files, found = rows_drawn
    plots = [f.name for f in files if f.suffix == ".png"]
    assert sorted(found) == sorted(plots) and "runtime-knobs.png" in plots
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_a_rate_grid_on_a_log_axis_is_readable(drawn: list[Any], tmp_path: Path) -> None:
    """The budget-tightness figure's path: a log x axis, a legend in the grid."""
    rows = [*data().main, *(_overrun(x, 40, 2) for x in (0.0, 1.0))]
    with report_style():
        figures.rate_grid(
            rows,
            (*CLASSES, IncidentKind.HARD_CEILING_OVERRUN.value),
            lambda r: 0.1 + r.spec.level,
            "budget tightness (turn tokens / budget)",
            "T",
            tmp_path / "t.png",
            logx=True,
            explain="tightness: a typical turn's tokens against the working budget",
        )
    (fig,) = drawn
    fig.draw_without_rendering()  # the layout, as saving does it
    assert problems(fig, "t.png") == []
    assert [t.get_text() for t in panels(fig)[0].get_xticklabels()] == ["0.1", "1.1"]
    assert any(ax.get_legend() is not None for ax in fig.get_axes())  # in the grid's free place


def test_the_readability_check_finds_each_kind_of_problem(tmp_path: Path) -> None:
    plt = pyplot()
    fig, (good, empty, unlabelled) = plt.subplots(1, 3, figsize=(15, 3))
    fig.suptitle("what is compared")
    for ax in (good, empty, unlabelled):
        ax.set_title("panel")
    good.plot([0, 1, 2], [1, 5, 1])
    good.set_xlabel("load level (0–1 scale)")
    good.set_ylabel("rate (sessions per 1,000)")
    good.text(1, 5, "a note on the data", ha="center", va="center", fontsize=7)
    empty.plot([0, 1], [0, 0])
    empty.set_xlabel("load (0–1)")
    empty.set_ylabel("rate (per 1,000)")
    unlabelled.plot([0, 1], [1, 2])
    unlabelled.set_xlabel("load level")
    fig.legend(handles=[legend_line(label="a policy")], loc="upper left", bbox_to_anchor=(0.98, 1))
    fig.draw_without_rendering()
    found = "\n".join(problems(fig, "bad.png"))
    plt.close(fig)
    assert f"bad.png: 1350 px wide, the page shows {PAGE_WIDTH} px" in found
    assert "'a note on the data' at 7.0 pt" in found
    assert "the note 'a note on the data' covers a line" in found
    assert "panel 'panel' shows no data" in found
    assert "x label 'load level' names no unit in parentheses" in found
    assert "y label '' names no unit" in found
    assert "a legend runs off the figure" in found


def test_the_committed_plots_fit_the_page() -> None:
    """Each PNG of reports/ is at most as wide as the page shows a plot."""
    pngs = sorted((Path(__file__).resolve().parent.parent / "reports").glob("*.png"))
    assert len(pngs) >= 7
    for png in pngs:
        head = png.read_bytes()[:24]
        assert head.startswith(b"\x89PNG")
        assert int.from_bytes(head[16:20], "big") <= PAGE_WIDTH, png.name


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """A PNG's chunks: (type, data)."""
    out, at = [], 8
    while at < len(png):
        size = int.from_bytes(png[at : at + 4], "big")
        out.append((png[at + 4 : at + 8], png[at + 8 : at + 8 + size]))
        at += 12 + size
    return out


def test_a_plot_is_the_same_bytes_for_the_same_rows(tmp_path: Path) -> None:
    """Fast twin of test_report.py's byte-identity test: one plot drawn twice
    is the same file, with no date and no software version in it."""
    with report_style():
        for name in ("a.png", "b.png"):
            draw_verdicts(data(), tmp_path / name)
    first, second = ((tmp_path / n).read_bytes() for n in ("a.png", "b.png"))
    assert first == second
    kinds = [kind for kind, _ in _chunks(first)]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"tIME" not in kinds
    assert all(b"Software" not in body for kind, body in _chunks(first) if kind == b"tEXt")


def _files(folder: Path) -> dict[Path, bytes]:
    """Every file under ``folder`` but hidden ones (the folder's lock)."""
    return {
        p.relative_to(folder): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.mark.slow
def test_make_report_redraws_the_committed_report_byte_for_byte_and_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make report`` on a clean clone: it reuses every committed run, every
    plot it draws is readable (tests/figure_facts.py), and no file of
    reports/ changes (a copy of it is redrawn)."""
    from prunecheck.sim.cli.app import main

    committed = Path(__file__).resolve().parent.parent / "reports"
    shutil.copytree(committed, tmp_path / "reports")
    before = _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    with recording() as found:
        assert main(["report", "--out", "reports", "--seed", "1"]) == 0
    err = capsys.readouterr().err
    assert " run now, " in err and "(0 run now, " in err, err
    assert len(found) == 7 and {n: lines for n, lines in found.items() if lines} == {}
    after = _files(tmp_path)
    assert sorted(after) == sorted(before)
    assert [str(p) for p in before if before[p] != after[p]] == []
