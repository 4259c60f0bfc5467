"""Pieces every report figure shares: the incident classes plotted, colours
and markers, rate points with their intervals, and the linear-then-log axis.

A rate point rests on sessions (:mod:`prunecheck.sim.stats.sessions`): the
value is sessions per 1,000 with at least one incident of a class, with an
exact 95% interval; per-invocation points carry bootstrap intervals over
sessions.  The y axis is linear up to ``LINTHRESH`` and logarithmic above, so
"none seen" is a point at 0 with its interval reaching up to the 95% bound.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from prunecheck.model.config import CheckAt
from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.drivers.workload import SESSION_TURNS
from prunecheck.sim.stats.sessions import bootstrap_per_invocation, rate_of
from prunecheck.sim.sweeps.runs import Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CLASSES",
    "GATE_STYLE",
    "INVOCATION_RATE",
    "LABELS",
    "LINTHRESH",
    "LOAD_AXIS",
    "LOAD_LABEL",
    "MARKERS",
    "PALETTE",
    "PLACEMENT_STYLE",
    "SESSION_NOTE",
    "SESSION_RATE",
    "TIGHTNESS_LABEL",
    "TIGHT_CLASSES",
    "Point",
    "colors_for",
    "dodge",
    "gates_of",
    "invocation_point",
    "level_ticks",
    "panel_note",
    "policies_of",
    "series",
    "session_point",
    "symlog",
    "upper_bound",
    "zero_bounds",
]

#: Incident classes of the plots: key -> label.
CLASSES: dict[str, str] = {
    ANY_VIOLATION: "any violation",
    ORPHAN_REJECTION: "orphaned-result 400s",
    IncidentKind.ORPHANED_RESULT: "orphaned results",
    IncidentKind.DUPLICATED_SIDE_EFFECT: "duplicated side effects",
    IncidentKind.TRUNCATED_PAYLOAD: "truncated payloads",
    IncidentKind.UNANSWERED_CALL: "unanswered calls",
}
#: Every class a figure names: the plotted ones and the costs.
LABELS: dict[str, str] = {**CLASSES, IncidentKind.HARD_CEILING_OVERRUN: "hard-ceiling overruns"}
#: The classes of the budget-tightness and runtime-knob plots, in order.
TIGHT_CLASSES = (
    ANY_VIOLATION,
    ORPHAN_REJECTION,
    IncidentKind.DUPLICATED_SIDE_EFFECT,
    IncidentKind.TRUNCATED_PAYLOAD,
    IncidentKind.HARD_CEILING_OVERRUN,
)
GATE_STYLE: dict[Gate, tuple[str, Any, str]] = {
    Gate.NONE: ("#d62728", "-", "o"),
    Gate.REFERENCE: ("#ff7f0e", "--", "s"),
    Gate.COMMIT: ("#1f77b4", "-", "^"),
    Gate.SPILL: ("#2ca02c", "-.", "D"),
}
PALETTE = (
    "#d62728",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#9467bd",
    "#bcbd22",
    "#17becf",
    "#000000",
    "#7f7f7f",
    "#1f77b4",
    "#2ca02c",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
LINTHRESH = 10.0
#: Axis labels: what is measured, and its unit in parentheses.
SESSION_RATE = "rate (sessions per 1,000)"
INVOCATION_RATE = "rate (invocations per 1,000)"
LOAD_LABEL = "load level (0–1 scale, defined below)"
TIGHTNESS_LABEL = "budget tightness (turn tokens / budget)"
#: Where the budget check fires: its colour, line style and marker in every
#: figure that compares placements (the gate is named by the panel).
PLACEMENT_STYLE: dict[CheckAt, tuple[str, str, str]] = {
    CheckAt.AFTER_APPEND: ("#332288", "-", "o"),
    CheckAt.AFTER_BATCH: ("#117733", "--", "s"),
    CheckAt.BEFORE_INVOKE: ("#cc6677", ":", "D"),
}
LOAD_AXIS = (
    "load level (0: 1 agent, a user message every 40 s, narrow batches; "
    "1: 4 agents, every 8 s, wide slow streamed batches)"
)
SESSION_NOTE = (
    f"a session ends when the agent finishes the turn during which its {SESSION_TURNS}th user "
    "message arrived (under load more arrive meanwhile), on a session abort, or at the horizon"
)


def policies_of(rows: Iterable[Row]) -> list[str]:
    names = list(dict.fromkeys(r.spec.policy for r in rows))
    return sorted(
        names, key=lambda n: (n not in BUILTINS, list(BUILTINS).index(n) if n in BUILTINS else 0, n)
    )


def gates_of(rows: Iterable[Row]) -> list[Gate]:
    present = {r.spec.config.gate for r in rows}
    return [g for g in Gate if g in present]


def colors_for(policies: Sequence[str]) -> dict[str, str]:
    out = {}
    for i, name in enumerate(p for p in policies if p != "unit_safe"):
        out[name] = PALETTE[i % len(PALETTE)] if i < 7 else PALETTE[8 + (i - 7) % 3]
    out["unit_safe"] = "#000000"
    return out


class Point:
    """One plotted rate: value, interval and how many units it rests on."""

    __slots__ = ("count", "high", "low", "total", "value")

    def __init__(self, value: float, low: float, high: float, count: int, total: int) -> None:
        self.value, self.low, self.high, self.count, self.total = value, low, high, count, total


def session_point(sessions: Sequence[Any], key: str) -> Point:
    r = rate_of(sessions, key)
    return Point(r.per_1000 if r.total else float("nan"), r.low, r.high, r.count, r.total)


def invocation_point(sessions: Sequence[Any], key: str, seed: int) -> Point:
    r = bootstrap_per_invocation(sessions, key, seed=seed)
    return Point(r.per_1000, r.low, r.high, r.count, r.total)


def symlog(ax: Axes) -> None:
    """Linear from 0 to 10 per 1,000, logarithmic above: zeros are points."""
    ax.set_yscale("symlog", linthresh=LINTHRESH, linscale=0.6)
    ax.set_ylim(-0.5, 1300.0)
    ax.set_yticks([0, 5, 10, 30, 100, 300, 1000], ["0", "5", "10", "30", "100", "300", "1000"])
    ax.minorticks_off()


def series(
    ax: Axes,
    points: Sequence[tuple[float, Point]],
    color: str,
    style: str = "-",
    marker: str = "o",
    width: float = 1.5,
    zero_bars: bool = True,
) -> None:
    """One line with its 95% intervals as error bars.  A point with none
    seen sits at 0; its bar reaches the upper bound unless ``zero_bars`` is
    False (the panel then draws the bounds once, see :func:`zero_bounds`)."""
    shown = [(x, p) for x, p in points if p.total]
    if not shown:
        return
    xs = [x for x, _ in shown]
    ys = [p.value for _, p in shown]
    highs = [max(0.0, p.high - p.value) if (p.count or zero_bars) else 0.0 for _, p in shown]
    ax.errorbar(
        xs,
        ys,
        yerr=[[max(0.0, p.value - p.low) for _, p in shown], highs],
        color=color,
        linestyle=style,
        marker=marker,
        markersize=4,
        linewidth=width,
        capsize=2,
        elinewidth=0.7,
        alpha=0.9,
    )


def zero_bounds(ax: Axes, bounds: dict[float, float]) -> None:
    """Where a policy saw none, the 95% upper bound, drawn once per load
    point as a grey bar (the largest such bound there)."""
    if bounds:
        xs = sorted(bounds)
        ax.vlines(
            xs, 0, [bounds[x] for x in xs], colors="#9a9a9a", linewidth=5, alpha=0.35, zorder=0
        )


def upper_bound(total: int) -> float:
    """The exact 95% upper bound per 1,000 when none of ``total`` sessions had it.

    >>> round(upper_bound(2800), 2)
    1.32
    """
    return 1000.0 * (1.0 - 0.025 ** (1.0 / total)) if total else float("nan")


def panel_note(ax: Axes, text: str, width: int = 70) -> None:
    """``text`` under the panel ``ax``, below its x-axis label, each line
    wrapped to about ``width`` characters: a note never covers data, and the
    figure's layout makes room for it."""
    import textwrap

    lines = [textwrap.fill(line, width, subsequent_indent="  ") for line in text.split("\n")]
    ax.annotate(
        "\n".join(lines),
        xy=(0.5, 0.0),
        xycoords=ax.xaxis.label,
        xytext=(0, -4),
        textcoords="offset points",
        ha="center",
        va="top",
        multialignment="left",
        fontsize=8.5,
        color="#333333",
    )


def level_ticks(ax: Axes, xs: Sequence[float]) -> None:
    """An x tick at each load level (or tightness) drawn, and no others."""
    ax.set_xticks(list(xs), [f"{x:g}" for x in xs])
    ax.minorticks_off()


def dodge(i: int, n: int, span: float) -> float:
    return (i - (n - 1) / 2) * 0.018 * span
