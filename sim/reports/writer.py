"""The failure-rate report: plots and ``summary.md`` from a sweep's rows.

matplotlib is imported and styled only while plots are drawn
(:mod:`.plotting`: Agg backend, no display).  Every figure and every number in the summary is
computed from the rows given; nothing is hard-coded.  Plots are
deterministic for the same rows: PNGs carry no software version or date.

The unit is the session (:mod:`.sessions`): rate plots show sessions per
1,000 with at least one incident of a class, with exact 95% intervals; the
y axis is linear up to 10 and logarithmic above, so "none seen" is drawn
as a point at 0 with its interval reaching up to the 95% bound, not as a
marker that looks like data.  ``survival.png`` shows Kaplan–Meier curves of
the share of sessions still intact.  Per-invocation rates appear only for
costs, with bootstrap intervals over sessions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.reports.figure_parts import CLASSES, LOAD_AXIS, SESSION_NOTE, TIGHT_CLASSES
from prunecheck.sim.reports.figures import costs, knobs, rate_grid, survival
from prunecheck.sim.reports.plotting import report_style
from prunecheck.sim.reports.summary import write_summary

__all__ = ["write_report"]


def _plots(data: ReportData, files: Sequence[Path]) -> list[Path]:
    """Draw every plot ``data`` has rows for into its file of ``files``."""
    seed = data.seeds[0] if data.seeds else 0
    written: list[Path] = []
    if data.main:
        survival(data.main, files[0])
        rate_grid(
            data.main,
            tuple(CLASSES),
            lambda r: r.spec.level,
            "load level",
            "Failure rate against load: sessions per 1,000 with at least one incident of "
            "the class\n(exact 95% intervals; checks after every append; y linear to 10, "
            f"log above);\n{SESSION_NOTE}",
            files[1],
            explain=LOAD_AXIS,
        )
        costs(data.main, files[3], seed)
        written += [files[0], files[1], files[3]]
    if data.tightness:
        rate_grid(
            data.tightness,
            TIGHT_CLASSES,
            lambda r: r.spec.load.tightness,
            "tightness (turn tokens / budget)",
            f"Failure rate against budget tightness at load level {data.tight_level:g}:\n"
            "sessions per 1,000 with at least one incident (exact 95% intervals; checks "
            f"after every append);\n{SESSION_NOTE}",
            files[2],
            logx=True,
            explain="tightness: a typical turn's tokens against the working budget",
        )
        written.append(files[2])
    if data.knobs:
        knobs(data.knobs, files[4], seed)
        written.append(files[4])
    return written


def write_report(data: ReportData, out: Path) -> list[Path]:
    """Write the plots and ``summary.md`` into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    names = [
        "survival.png",
        "failure-vs-load.png",
        "failure-vs-tightness.png",
        "cost-of-safety.png",
        "runtime-knobs.png",
    ]
    files = [out / n for n in names]
    with report_style():
        written = _plots(data, files)
    written.sort(key=files.index)
    summary = out / "summary.md"
    write_summary(data, summary, [f.name for f in written])
    return [*written, summary]
