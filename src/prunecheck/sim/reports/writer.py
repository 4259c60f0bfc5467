"""The failure-rate report: plots, ``summary.md`` and ``index.html`` from a
sweep's rows.

matplotlib is imported and styled only while plots are drawn
(:mod:`.plotting`: Agg backend, no display).  Every figure and every number in the summary is
computed from the rows given; nothing is hard-coded.  Plots are
deterministic for the same rows: PNGs carry no software version or date.

The unit is the session (:mod:`.sessions`): rate plots show sessions per
1,000 with at least one incident of a class, with exact 95% intervals; the
y axis is linear up to 10 and logarithmic above, so "none seen" is drawn
as a point at 0 with its interval reaching up to the 95% bound, not as a
marker that looks like data.  ``verdicts.png`` is the one-glance chart
(policy × gate × check placement), ``survival.png`` shows Kaplan–Meier
curves of the share of sessions still intact.  Per-invocation rates appear
only for costs (``cost-of-safety.png``), with bootstrap intervals over
sessions; what no gate costs is per session (``failures-by-gate.png``).
"""

from __future__ import annotations

from pathlib import Path

from prunecheck.sim.reports.cost_figures import costs, failures, knobs
from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.reports.figure_parts import (
    CLASSES,
    LOAD_AXIS,
    LOAD_LABEL,
    SESSION_NOTE,
    TIGHT_CLASSES,
    TIGHTNESS_LABEL,
)
from prunecheck.sim.reports.figures import rate_grid, survival
from prunecheck.sim.reports.html_report import write_index
from prunecheck.sim.reports.plotting import report_style
from prunecheck.sim.reports.summary import write_summary
from prunecheck.sim.reports.verdict_chart import draw_verdicts

__all__ = ["PLOTS", "write_report"]

#: Every plot a full report draws, in the order the summary and the page list them.
PLOTS = (
    "verdicts.png",
    "survival.png",
    "failure-vs-load.png",
    "failure-vs-tightness.png",
    "failures-by-gate.png",
    "cost-of-safety.png",
    "runtime-knobs.png",
)


def _plots(data: ReportData, out: Path) -> list[Path]:
    """Draw every plot ``data`` has rows for into ``out``; return the files."""
    seed = data.seeds[0] if data.seeds else 0
    files = {name: out / name for name in PLOTS}
    written: list[Path] = []
    if data.main or data.knobs:
        draw_verdicts(data, files["verdicts.png"])
        written.append(files["verdicts.png"])
    if data.main:
        survival(data.main, files["survival.png"])
        rate_grid(
            data.main,
            tuple(CLASSES),
            lambda r: r.spec.level,
            LOAD_LABEL,
            "Failure rate against load, policy by policy (a line each), a panel per gate × "
            "incident class\nsessions per 1,000 with at least one incident of the class (exact "
            "95% intervals; checks after every append; y linear to 10, log above)\n"
            f"{SESSION_NOTE}",
            files["failure-vs-load.png"],
            explain=LOAD_AXIS,
        )
        failures(data.main, files["failures-by-gate.png"])
        costs(data.main, files["cost-of-safety.png"], seed)
        written += [
            files[n] for n in ("survival.png", "failure-vs-load.png", "failures-by-gate.png")
        ]
        written.append(files["cost-of-safety.png"])
    if data.tightness:
        rate_grid(
            data.tightness,
            TIGHT_CLASSES,
            lambda r: r.spec.load.tightness,
            TIGHTNESS_LABEL,
            "Failure rate against budget tightness at load level "
            f"{data.tight_level:g}, policy by policy (a line each), a panel per gate × "
            "incident class\nsessions per 1,000 with at least one incident of the class (exact "
            "95% intervals; checks after every append; y linear to 10, log above)\n"
            f"{SESSION_NOTE}",
            files["failure-vs-tightness.png"],
            logx=True,
            explain="tightness: a typical turn's tokens against the working budget",
        )
        written.append(files["failure-vs-tightness.png"])
    if data.knobs:
        knobs(data.knobs, files["runtime-knobs.png"], seed)
        written.append(files["runtime-knobs.png"])
    return sorted(written, key=lambda f: PLOTS.index(f.name))


def write_report(data: ReportData, out: Path) -> list[Path]:
    """Write the plots, ``summary.md`` and ``index.html`` into ``out``;
    return the files written (the plots, then the summary, then the page)."""
    out.mkdir(parents=True, exist_ok=True)
    with report_style():
        written = _plots(data, out)
    summary = out / "summary.md"
    write_summary(data, summary, [f.name for f in written])
    index = write_index(data, out, [f.name for f in written])
    return [*written, summary, index]
