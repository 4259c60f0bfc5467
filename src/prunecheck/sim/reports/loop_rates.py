"""The failure-rate plot of a loop sweep: sessions broken per 1,000, by load level.

``prunecheck sweep loop:… --plot FILE`` draws what :func:`loop_rate_table`
prints, as a picture for a design review: one panel per scenario class,
the load level on the x axis (the workload's latencies and the faults'
rate), sessions that ended in a violation per 1,000 on the y axis with
their exact 95 % interval (the session is the unit of
statistics: :mod:`prunecheck.sim.stats.sessions`), one line per agent when
several sweeps' rows are drawn together.  A point at 0 keeps its interval,
so "none seen in 50 sessions" reads as "below 71 per 1,000", not as "never".
The axis is linear: loop rates are counted in tens of sessions, not in the
millions the model runtime's sweeps reach.

The same rows give the same bytes (:func:`~.plotting.write_png` stores no
date or software version).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from prunecheck.sim.reports.plotting import MAX_WIDTH, pyplot, report_style, save, title
from prunecheck.sim.stats.sessions import SessionRate, session_rate
from prunecheck.sim.subjects.policy_spec import parse_spec_or_none
from prunecheck.sim.sweeps.loop_sweep import LoopRow, class_rank, loop_groups

__all__ = ["loop_rate_plot", "loop_rates"]

#: Panels per row of the figure.
COLUMNS = 3


def loop_rates(rows: Iterable[LoopRow]) -> dict[str, dict[str, list[tuple[float, SessionRate]]]]:
    """Per scenario class, per agent: ``(load level, sessions violated)`` points,
    classes in the scenario classes' order, levels ascending."""
    rates: dict[str, dict[str, list[tuple[float, SessionRate]]]] = {}
    for (spec, scenario, level), group in loop_groups(rows):
        violated = sum(1 for r in group if r.violations)
        rates.setdefault(scenario, {}).setdefault(spec, []).append(
            (level, session_rate(violated, len(group)))
        )
    rates = dict(sorted(rates.items(), key=lambda kv: (class_rank(kv[0]), kv[0])))
    return rates


def _label(spec: str) -> str:
    """``loop:examples/loops/x.py:agent`` -> ``x.py:agent`` (the legend's width)."""
    parsed = parse_spec_or_none(spec)
    if parsed is None or not parsed.where:
        return spec
    name = Path(parsed.where).name
    return f"{name}:{parsed.attr}" if parsed.attr else name


def loop_rate_plot(rows: Sequence[LoopRow], path: Path, heading: str | None = None) -> None:
    """Draw the rows' failure rates into the PNG ``path`` (see the module's docs).

    Raises
    ------
    ValueError
        When ``rows`` is empty (there is nothing to draw).
    """
    rates = loop_rates(rows)
    if not rates:
        raise ValueError("a loop sweep with no sessions has no failure rates to draw")
    agents = sorted({r.spec for r in rows})
    classes = list(rates)
    columns = min(COLUMNS, len(classes))
    lines = -(-len(classes) // columns)
    plt = pyplot()
    with report_style():
        fig, axes = plt.subplots(
            lines, columns, figsize=(min(MAX_WIDTH, 4.4 * columns), 3.0 * lines + 0.9),
            squeeze=False, sharey=True,
        )  # fmt: skip
        markers = "osD^v<>p"
        highest = max(rate.high for by in rates.values() for pts in by.values() for _, rate in pts)
        top = min(1000.0, max(50.0, 1.15 * highest))  # the widest interval, whole
        for ax, scenario in zip(axes.flat, classes, strict=False):
            for n, spec in enumerate(agents):
                points = rates[scenario].get(spec)
                if not points:
                    continue
                x = [level for level, _ in points]
                y = [rate.per_1000 for _, rate in points]
                low = [rate.per_1000 - rate.low for _, rate in points]
                high = [rate.high - rate.per_1000 for _, rate in points]
                ax.errorbar(x, y, yerr=[low, high], marker=markers[n % len(markers)],
                            capsize=3, label=_label(spec))  # fmt: skip
            total = sum(rate.total for points in rates[scenario].values() for _, rate in points)
            ax.set_title(f"{scenario} ({total:,} sessions)")
            ax.set_xlabel("load (latency spread, fault rate)")
            ax.set_xlim(-0.05, 1.05)
            ax.set_ylim(0, top)
            ax.grid(alpha=0.3)
        for ax in axes.flat[len(classes) :]:
            ax.set_visible(False)
        for ax in axes[:, 0]:
            ax.set_ylabel("sessions violated per 1,000 (95 %)")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), frameon=False)
        title(fig, heading or "Agent loop sessions that ended in a violation, by load")
        fig.tight_layout(rect=(0, 0.08, 1, 0.94))
        save(fig, path)
