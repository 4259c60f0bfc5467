"""The one-glance verdict chart: policy × gate × check placement, each
cell safe or unsafe, and for an unsafe cell the median number of user
turns to the first violation (Kaplan–Meier).

Its cells come from the report's rows: the main sweep (checks after every
append, every gate) and the runtime-knob sweep (the other placements,
gates none and commit), with retry re-running the batch; every load level
pooled.  A combination the sweep did not run is drawn as "not run", never
guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from prunecheck.model.config import CheckAt, RetryMode
from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.model.gates import Gate
from prunecheck.sim.reports.data import ReportData, group
from prunecheck.sim.reports.figure_parts import policies_of, upper_bound
from prunecheck.sim.reports.plotting import MAX_WIDTH, legend_line, pyplot, save, title
from prunecheck.sim.stats.sessions import SessionRecord, observations
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.sweeps.runs import Row

__all__ = ["Cell", "Verdict", "draw_verdicts", "verdict_cells"]


class Verdict(StrEnum):
    """What one cell of the chart says."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class Cell:
    """One policy under one gate and check placement, every load pooled.

    Attributes
    ----------
    policy, gate, check_at : str, Gate, CheckAt
        The combination.
    verdict : Verdict
        Unsafe when any session saw a violation.
    broken, sessions : int
        Sessions with a violation, of all sessions.
    median_turns : float | None
        Kaplan–Meier median of the user turns to the first violation; None
        when the curve stays above one half (or the cell is safe).
    """

    policy: str
    gate: Gate
    check_at: CheckAt
    verdict: Verdict
    broken: int
    sessions: int
    median_turns: float | None

    def text(self) -> str:
        """The words in the cell."""
        if self.verdict is Verdict.NOT_RUN:
            return "not run"
        if self.verdict is Verdict.SAFE:
            return (
                f"safe\n0 of {self.sessions:,} sessions\n"
                f"below {upper_bound(self.sessions):.1f} per 1,000"
            )
        median = (
            f"median {self.median_turns:g} turns"
            if self.median_turns is not None
            else "median not reached"
        )
        return f"UNSAFE\n{median}\n{self.broken:,} of {self.sessions:,} sessions"


def _columns(rows: Sequence[Row]) -> list[tuple[Gate, CheckAt]]:
    present = {(r.spec.config.gate, r.spec.config.check_at) for r in rows}
    return [(g, c) for g in Gate for c in CheckAt if (g, c) in present]


def _cell(policy: str, gate: Gate, at: CheckAt, sessions: Sequence[SessionRecord] | None) -> Cell:
    if not sessions:
        return Cell(policy, gate, at, Verdict.NOT_RUN, 0, 0, None)
    broken = sum(1 for s in sessions if ANY_VIOLATION in s.first)
    if not broken:
        return Cell(policy, gate, at, Verdict.SAFE, 0, len(sessions), None)
    median = kaplan_meier(observations(sessions, ANY_VIOLATION, "turns")).median()
    return Cell(policy, gate, at, Verdict.UNSAFE, broken, len(sessions), median)


def verdict_cells(data: ReportData) -> list[list[Cell]]:
    """The chart's cells: a row per policy, a column per (gate, placement)
    that any row ran; retry re-runs the batch, every load level pooled."""
    rows = [
        r
        for r in (*data.main, *data.knobs)
        if r.spec.config.retry is RetryMode.RERUN_BATCH and r.error is None
    ]
    unique = list({r.key: r for r in rows}.values())
    by = group(unique, lambda r: (r.spec.policy, r.spec.config.gate, r.spec.config.check_at))
    return [
        [_cell(p, g, c, by.get((p, g, c))) for g, c in _columns(unique)]
        for p in policies_of(unique)
    ]


_COLOURS = {Verdict.SAFE: "#cfe8cf", Verdict.UNSAFE: "#f2b8b5", Verdict.NOT_RUN: "#f2f2f2"}
_PLACE = {
    CheckAt.AFTER_APPEND: "after every append",
    CheckAt.AFTER_BATCH: "after a batch",
    CheckAt.BEFORE_INVOKE: "before model calls",
}


def draw_verdicts(data: ReportData, path: Path) -> list[list[Cell]]:
    """Draw the verdict chart into the PNG ``path``; return its cells."""
    from matplotlib.patches import Rectangle

    cells = verdict_cells(data)
    if not cells:
        return cells
    n_rows, n_cols = len(cells), len(cells[0])
    fig, ax = pyplot().subplots(
        figsize=(min(MAX_WIDTH, 1.45 * n_cols + 2.0), 0.72 * n_rows + 2.4), layout="constrained"
    )
    for i, line in enumerate(cells):
        for j, cell in enumerate(line):
            ax.add_patch(
                Rectangle(
                    (j, i),
                    1,
                    1,
                    facecolor=_COLOURS[cell.verdict],
                    edgecolor="white",
                    linewidth=2,
                    hatch="//" if cell.verdict is Verdict.NOT_RUN else None,
                )
            )
            ax.text(
                j + 0.5,
                i + 0.5,
                cell.text(),
                ha="center",
                va="center",
                fontsize=8.5,
                fontweight="bold" if cell.verdict is Verdict.UNSAFE else "normal",
                color="#7a1010" if cell.verdict is Verdict.UNSAFE else "#1f3d1f",
            )
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    heads = [f"gate {c.gate.value}\n{_PLACE[c.check_at]}" for c in cells[0]]
    ax.set_xticks([j + 0.5 for j in range(n_cols)], heads, fontsize=9)
    ax.xaxis.tick_top()
    ax.set_yticks([i + 0.5 for i in range(n_rows)], [line[0].policy for line in cells])
    ax.tick_params(length=0, labelsize=10)
    for side in ax.spines.values():
        side.set_visible(False)
    handles = [
        legend_line(color=_COLOURS[v], marker="s", linestyle="", markersize=12, label=v.value)
        for v in Verdict
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False, fontsize=10)
    title(
        fig,
        "Verdicts at a glance: is the policy safe under this gate when the budget check fires "
        "here?\nUNSAFE: a session saw a violation; the median counts user turns to the first "
        "one (Kaplan–Meier).\nsafe: no violation in that many sessions; below: the 95% upper "
        "bound of the rate (sessions per 1,000). "
        "Every load level pooled; retry re-runs the batch",
    )
    save(fig, path)
    return cells
