"""The report's gate and runtime figures, one unit per figure: what the
gates cost (per 1,000 invocations), what no gate costs (per 1,000
sessions), and the runtime knobs (sessions per 1,000, with what differs
between the configurations said in each panel).

Each function draws one figure from a sweep's rows into a PNG; every
number drawn or written is computed from the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.config import CheckAt, RetryMode
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.reports.data import ABORT, ANY, ORPHAN_400, group
from prunecheck.sim.reports.figure_parts import (
    CLASSES,
    GATE_STYLE,
    LOAD_AXIS,
    MARKERS,
    SESSION_NOTE,
    TIGHT_CLASSES,
    Point,
    dodge,
    gates_of,
    invocation_point,
    series,
    session_point,
    symlog,
    zero_bounds,
)
from prunecheck.sim.reports.plotting import legend_line, pyplot, save, title
from prunecheck.sim.stats.sessions import SessionRecord
from prunecheck.sim.sweeps.runs import Row

__all__ = ["costs", "differences", "failures", "knobs"]

_BOX = {"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2}
_COSTS = (
    (IncidentKind.HARD_CEILING_OVERRUN, "hard-ceiling overruns"),
    (IncidentKind.SPILL, "spills (a closed unit moved to the side store)"),
    (IncidentKind.REINJECTION, "re-injections (a spilled unit brought back)"),
)
_FAILURES = (
    (ANY, "sessions with any violation"),
    (ORPHAN_400, "sessions with an orphaned-result 400"),
    (ABORT, "aborted sessions (rejected after the last retry)"),
)
Variant = tuple[Gate, CheckAt, RetryMode]
_DEFAULT: Variant = (Gate.NONE, CheckAt.AFTER_APPEND, RetryMode.RERUN_BATCH)


def _gate_lines(
    rows: Sequence[Row], panels: Sequence[tuple[str, str]], ylabel: str, seed: int | None
) -> tuple[Any, list[Gate]]:
    """One panel per class, a line per gate against load (built-ins pooled);
    per-invocation points when ``seed`` is given, else per-session ones."""
    built = [r for r in rows if r.spec.policy in BUILTINS]
    gates = gates_of(built)
    grouped = group(built, lambda r: (r.spec.config.gate, r.spec.level))
    xs = sorted({r.spec.level for r in built})
    span = (xs[-1] - xs[0]) or 1.0
    fig, axes = pyplot().subplots(
        1, len(panels), figsize=(5.2 * len(panels), 5.2), squeeze=False, layout="constrained"
    )
    for ax, (kind, heading) in zip(axes[0], panels, strict=True):
        flat: list[str] = []
        for i, gate in enumerate(gates):
            color, style, marker = GATE_STYLE[gate]
            keys = [x for x in xs if (gate, x) in grouped]
            points = [
                (
                    x + dodge(i, len(gates), span),
                    invocation_point(grouped[(gate, x)], kind, seed)
                    if seed is not None
                    else session_point(grouped[(gate, x)], kind),
                )
                for x in keys
            ]
            series(ax, points, color, style, marker, 3.2 - 0.7 * i, zero_bars=False)
            if not any(p.value for _, p in points):
                flat.append(gate.value)
        if flat:
            ax.text(
                0.03,
                0.95,
                f"0 at every load: gate {', '.join(flat)}",
                va="top",
                transform=ax.transAxes,
                fontsize=9,
                color="#333333",
                bbox=_BOX,
            )
        ax.set_title(heading, fontsize=11, fontweight="bold")
        ax.set_ylabel(ylabel)
        ax.set_xlabel("load level (defined below)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles = [
        legend_line(
            color=GATE_STYLE[g][0],
            linestyle=GATE_STYLE[g][1],
            marker=GATE_STYLE[g][2],
            linewidth=2.5,
            label=f"gate {g.value}",
        )
        for g in gates
    ]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=len(handles),
        frameon=False,
        title=LOAD_AXIS,
        fontsize=10,
        title_fontsize=9,
    )
    return fig, gates


def costs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """What the gates cost, per 1,000 model invocations, against load."""
    fig, _ = _gate_lines(rows, _COSTS, "invocations per 1,000 that saw it", seed)
    title(
        fig,
        "The cost of safety: what each gate makes the runtime pay, per 1,000 model invocations "
        "(every built-in policy pooled, checks after every append)\n95% intervals: bootstrap "
        "over sessions; lines are dodged sideways and thinner when drawn later, so equal lines "
        "stay visible. Time spent with a deferred check: summary.md, “The cost of safety”",
    )
    save(fig, path)


def failures(rows: Sequence[Row], path: Path) -> None:
    """What no gate costs, per 1,000 sessions, against load."""
    fig, _ = _gate_lines(rows, _FAILURES, "sessions per 1,000", None)
    title(
        fig,
        "The cost of no safety: sessions per 1,000 that broke, by gate (every built-in policy "
        "pooled, checks after every append; exact 95% intervals)\n"
        f"an aborted session is one the provider kept rejecting: the error surfaced and the "
        f"agent started over; {SESSION_NOTE}",
    )
    save(fig, path)


def _pooled(sessions: Sequence[SessionRecord], kind: str, ceiling: bool, seed: int) -> Point:
    return invocation_point(sessions, kind, seed) if ceiling else session_point(sessions, kind)


def _fmt(p: Point) -> str:
    digits = 1 if p.high < 100 else 0
    return f"{p.value:.{digits}f} [{p.low:.{digits}f}–{p.high:.{digits}f}]"


def _name(v: Variant) -> str:
    return f"checks {v[1].value}, retry {v[2].value}"


def differences(
    pooled: dict[Variant, list[SessionRecord]], kind: str, ceiling: bool, seed: int
) -> str:
    """What differs between runtime configurations for ``kind``, pooled over
    load: the configurations whose 95% interval does not overlap the
    reference's (checks after every append, retry re-runs the batch)."""
    if not pooled:
        return ""
    reference = next((v for v in pooled if v[1:] == _DEFAULT[1:]), sorted(pooled, key=_name)[0])
    base = _pooled(pooled[reference], kind, ceiling, seed)
    apart = []
    for v in sorted(pooled, key=_name):
        if v == reference:
            continue
        p = _pooled(pooled[v], kind, ceiling, seed)
        if p.high < base.low or p.low > base.high:
            apart.append(f"{_name(v)}: {_fmt(p)}")
    head = f"pooled over load; {_name(reference)}: {_fmt(base)}"
    if not apart:
        return f"{head}\nthe other {len(pooled) - 1} agree within their 95% intervals"
    return head + "\ndiffers: " + "\ndiffers: ".join(apart)


def knobs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """Sessions with violations per runtime configuration against load (gate
    none), and the overruns each check time costs under the commit gate;
    each panel says which configurations differ."""
    blind = [r for r in rows if r.spec.policy in BUILTINS and r.spec.policy != "unit_safe"]
    xs = sorted({r.spec.level for r in blind})
    span = (xs[-1] - xs[0]) or 1.0

    def variant(r: Row) -> Variant:
        return (r.spec.config.gate, r.spec.config.check_at, r.spec.config.retry)

    grouped = group(blind, lambda r: (*variant(r), r.spec.level))
    everywhere = group(blind, variant)
    variants = sorted(everywhere, key=lambda k: (list(Gate).index(k[0]), _name(k)))
    styles = ("-", "--", "-.", ":")
    cmap = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
    color = {v: cmap[i % len(cmap)] for i, v in enumerate(variants)}
    marker = {v: MARKERS[i % len(MARKERS)] for i, v in enumerate(variants)}
    style = {v: styles[i % len(styles)] for i, v in enumerate(variants)}
    fig, axes = pyplot().subplots(2, 3, figsize=(17, 10.5), squeeze=False, layout="constrained")
    for ax, kind in zip([a for line in axes for a in line], TIGHT_CLASSES, strict=False):
        ceiling = kind == IncidentKind.HARD_CEILING_OVERRUN
        shown = [v for v in variants if (v[0] is Gate.COMMIT) == ceiling]
        bounds: dict[float, float] = {}
        for i, v in enumerate(shown):
            points = []
            for x in xs:
                sessions = grouped.get((*v, x))
                if sessions is None:
                    continue
                point = _pooled(sessions, kind, ceiling, seed)
                points.append((x + dodge(i, len(shown), span), point))
                if not ceiling and point.total and not point.count:
                    bounds[x] = max(bounds.get(x, 0.0), point.high)
            series(ax, points, color[v], style[v], marker[v], 2.6 - 0.4 * i, zero_bars=ceiling)
        note = differences({v: everywhere[v] for v in shown}, kind, ceiling, seed)
        if note:
            ax.text(0.02, 0.98, note, transform=ax.transAxes, va="top", fontsize=8.5, bbox=_BOX)
        if ceiling:
            ax.set_ylim(bottom=0)
        else:
            zero_bounds(ax, bounds)
            symlog(ax)
            ax.set_ylim(-0.5, 8000.0)  # room for the note above the data
        ax.set_title(
            CLASSES.get(kind, "hard-ceiling overruns")
            + (" · gate commit" if ceiling else " · gate none"),
            fontsize=11,
            fontweight="bold",
        )
        ax.set_xlabel("load level (defined below)")
        ax.set_ylabel("overruns per 1,000 invocations" if ceiling else "sessions per 1,000")
        ax.grid(True, alpha=0.3)
    legend_ax = axes[1][2]
    legend_ax.axis("off")
    handles = [
        legend_line(
            color=color[v],
            linestyle=style[v],
            marker=marker[v],
            linewidth=2.5,
            markersize=7,
            label=f"gate {v[0].value}: {_name(v)}",
        )
        for v in variants
    ]
    handles.append(
        legend_line(
            color="#9a9a9a",
            linewidth=6,
            alpha=0.35,
            label="grey bar: none seen at that point;\nits 95% upper bound (that point alone)",
        )
    )
    legend_ax.legend(
        handles=handles,
        loc="center",
        frameon=False,
        fontsize=11,
        title="runtime configuration\n(the structure-blind built-ins pooled)",
        title_fontsize=11,
    )
    legend_ax.text(
        0.5,
        0.02,
        LOAD_AXIS.replace("; ", ";\n"),
        ha="center",
        fontsize=9,
        transform=legend_ax.transAxes,
    )
    title(
        fig,
        "Runtime knobs: when the budget check fires and what a retry does, for the 7 "
        "structure-blind built-ins (all but unit_safe) pooled.\nSessions per 1,000 with at "
        "least one incident, exact 95% intervals. Each panel's box says which configurations "
        "differ beyond their intervals; lines that agree overlap.\nUnder the commit gate every "
        "violation class is zero, so its panel shows overruns per 1,000 invocations "
        "(bootstrap over sessions)",
        11,
    )
    save(fig, path)
