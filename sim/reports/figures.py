"""The report's figures: failure rates against load and budget tightness,
survival curves, the cost of safety and the runtime knobs.

Each function draws one figure from a sweep's rows into a PNG (inside the
report's matplotlib style, :func:`prunecheck.sim.reports.plotting.report_style`).
Every number drawn is computed from the rows; nothing is hard-coded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.reports.data import group, pool
from prunecheck.sim.reports.figure_parts import (
    CLASSES,
    GATE_STYLE,
    LOAD_AXIS,
    MARKERS,
    SESSION_NOTE,
    TIGHT_CLASSES,
    colors_for,
    dodge,
    gates_of,
    invocation_point,
    policies_of,
    series,
    session_point,
    symlog,
    zero_bounds,
)
from prunecheck.sim.reports.plotting import legend_line, pyplot, save
from prunecheck.sim.stats.sessions import observations
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.sweeps.runs import Row

__all__ = ["costs", "knobs", "rate_grid", "survival"]


def rate_grid(
    rows: Sequence[Row],
    classes: Sequence[str],
    x_of: Callable[[Row], float],
    xlabel: str,
    title: str,
    path: Path,
    *,
    logx: bool = False,
    explain: str = "",
) -> None:
    """Rows = incident classes, columns = gates, a line per policy: sessions
    per 1,000 with at least one incident of the class."""
    policies, gates = policies_of(rows), gates_of(rows)
    colors = colors_for(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate, x_of(r)))
    xs = sorted({x_of(r) for r in rows})
    fig, axes = pyplot().subplots(
        len(classes),
        len(gates),
        figsize=(3.6 * len(gates) + 0.8, 2.3 * len(classes) + 1.4),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    span = (xs[-1] - xs[0]) or 1.0
    for col, gate in enumerate(gates):
        for row_i, kind in enumerate(classes):
            ax = axes[row_i][col]
            seen = total = 0
            bounds: dict[float, float] = {}
            for i, policy in enumerate(policies):
                points = []
                for x in xs:
                    sessions = grouped.get((policy, gate, x))
                    if sessions is None:
                        continue
                    shift = (
                        x * (1.0 + dodge(i, len(policies), 1.0))
                        if logx
                        else x + dodge(i, len(policies), span)
                    )
                    point = session_point(sessions, kind)
                    points.append((shift, point))
                    if point.total and not point.count:
                        bounds[x] = max(bounds.get(x, 0.0), point.high)
                seen += sum(p.count for _, p in points)
                total += sum(p.total for _, p in points)
                series(
                    ax, points, colors[policy], marker=MARKERS[i % len(MARKERS)], zero_bars=False
                )
            zero_bounds(ax, bounds)
            if col == 0 and row_i == 0:
                symlog(ax)  # shared by every panel
            if not seen and total:
                bound = 1000.0 * (1.0 - 0.025 ** (1.0 / total))
                ax.text(
                    0.5,
                    0.93,
                    f"none in {total:,} sessions:\nbelow {bound:.1f} per 1,000 (95%)",
                    transform=ax.transAxes,
                    ha="center",
                    va="top",
                    fontsize=8,
                    color="#333333",
                    bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2},
                )
            if logx:
                ax.set_xscale("log")
                ax.set_xticks(xs, [f"{x:g}" for x in xs])
                ax.minorticks_off()
            ax.grid(True, which="major", alpha=0.3)
            if row_i == 0:
                ax.set_title(f"gate {gate.value}", fontsize=11, fontweight="bold")
            if col == 0:
                ax.set_ylabel(f"{CLASSES.get(kind, kind.replace('_', ' '))}\nsessions per 1,000")
            if row_i == len(classes) - 1:
                ax.set_xlabel(xlabel)
    handles = [
        legend_line(color=colors[p], marker=MARKERS[i % len(MARKERS)], label=p)
        for i, p in enumerate(policies)
    ]
    handles.append(
        legend_line(
            color="#9a9a9a",
            linewidth=5,
            alpha=0.35,
            label="grey bar: none seen there,\nits 95% upper bound",
        )
    )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=min(len(handles), 5),
        frameon=False,
        title=explain or None,
    )
    fig.suptitle(title, fontsize=11)
    save(fig, path)


def survival(rows: Sequence[Row], path: Path) -> None:
    """Kaplan–Meier: share of sessions with no violation yet, against user
    turns (top) and simulated seconds (bottom), a column per gate."""
    policies, gates = policies_of(rows), gates_of(rows)
    colors = colors_for(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate))
    fig, axes = pyplot().subplots(
        2,
        len(gates),
        figsize=(3.8 * len(gates) + 0.8, 8.0),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for col, gate in enumerate(gates):
        for row_i, (axis, label) in enumerate(
            (
                ("turns", "user messages into the session (turns)"),
                ("time", "simulated seconds since the session began"),
            )
        ):
            ax = axes[row_i][col]
            failed = total = 0
            for i, policy in enumerate(policies):
                sessions = grouped.get((policy, gate), [])
                if not sessions:
                    continue
                km = kaplan_meier(observations(sessions, ANY_VIOLATION, axis))
                failed += sum(km.events)
                total += km.subjects
                xs, ss, lo, hi = km.steps()
                ax.fill_between(
                    xs, lo, hi, step="post", color=colors[policy], alpha=0.12, linewidth=0
                )
                ax.step(
                    xs,
                    ss,
                    where="post",
                    color=colors[policy],
                    linewidth=1.4,
                    linestyle=("-", "--", "-.", ":")[i % 4],
                )
            if not failed and total:
                ax.text(
                    0.5,
                    0.5,
                    f"no violation in {total:,} sessions:\nevery curve stays at 1",
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    fontsize=8,
                    bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 3},
                )
            ax.set_ylim(-0.02, 1.04)
            ax.axhline(0.5, color="#999999", linewidth=0.6, linestyle=":")
            ax.grid(True, alpha=0.3)
            ax.set_xlabel(label)
            if row_i == 0:
                ax.set_title(f"gate {gate.value}", fontsize=11, fontweight="bold")
            if col == 0:
                ax.set_ylabel("share of sessions with no violation yet")
    handles = [
        legend_line(color=colors[p], linestyle=("-", "--", "-.", ":")[i % 4], label=p)
        for i, p in enumerate(policies)
    ]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=min(len(handles), 8), frameon=False
    )
    fig.suptitle(
        "Time to the first violation: Kaplan–Meier share of sessions still intact, "
        "with 95% log-log bands (shaded); every load level pooled, checks after every "
        f"append;\n{SESSION_NOTE} (an intact session is censored at its end); the "
        "dotted line marks one half (the median)",
        fontsize=10,
    )
    save(fig, path)


def costs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """The cost of safety per gate against load, pooled over the built-ins."""
    built = [r for r in rows if r.spec.policy in BUILTINS]
    gates = gates_of(built)
    grouped = group(built, lambda r: (r.spec.config.gate, r.spec.level))
    pooled = pool(built, lambda r: (r.spec.config.gate, r.spec.level))
    xs = sorted({r.spec.level for r in built})
    span = (xs[-1] - xs[0]) or 1.0
    overrun, abort = IncidentKind.HARD_CEILING_OVERRUN, IncidentKind.SESSION_ABORT
    panels = (
        (overrun, "hard-ceiling overruns\nper 1,000 invocations"),
        ("deferred", "share of agent time with\na deferred budget check (%)"),
        (IncidentKind.SPILL, "spills per 1,000 invocations"),
        (abort, "aborted sessions\nper 1,000 sessions"),
    )
    fig, axes = pyplot().subplots(
        1, len(panels), figsize=(16, 4.8), squeeze=False, layout="constrained"
    )
    for ax, (kind, label) in zip(axes[0], panels, strict=True):
        flat: list[str] = []
        for i, gate in enumerate(gates):
            color, style, marker = GATE_STYLE[gate]
            width = 3.2 - 0.7 * i  # lines drawn later are thinner: none hides another
            keys = [(x, (gate, x)) for x in xs if (gate, x) in grouped]
            shift = [x + dodge(i, len(gates), span) for x, _ in keys]
            if kind == "deferred":
                values = [100.0 * pooled[k].deferred_share for _, k in keys]
                ax.plot(
                    shift,
                    values,
                    color=color,
                    linestyle=style,
                    marker=marker,
                    markersize=4,
                    linewidth=width,
                )
            else:
                points = [
                    (
                        s,
                        session_point(grouped[k], kind)
                        if kind == abort
                        else invocation_point(grouped[k], kind, seed),
                    )
                    for s, (_, k) in zip(shift, keys, strict=True)
                ]
                series(ax, points, color, style, marker, width, zero_bars=False)
                values = [p.value for _, p in points]
            if not any(values):
                flat.append(gate.value)
        if len(flat) > 1:
            ax.text(
                0.03,
                0.94,
                f"at 0 everywhere:\ngate {', '.join(flat)}",
                va="top",
                transform=ax.transAxes,
                fontsize=8,
                color="#333333",
                bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2},
            )
        ax.set_ylabel(label)
        ax.set_xlabel("load level (defined below)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles = [
        legend_line(
            color=GATE_STYLE[g][0],
            linestyle=GATE_STYLE[g][1],
            marker=GATE_STYLE[g][2],
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
    )
    fig.suptitle(
        "The cost of safety, every built-in policy pooled, checks after every append\n"
        "95% intervals: bootstrap over sessions for per-invocation rates, exact for "
        "per-session ones; lines are dodged sideways and thinner when drawn later, so "
        "equal lines stay visible",
        fontsize=10,
    )
    save(fig, path)


def knobs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """Sessions with violations per runtime configuration against load (gate
    none), and the overruns each check time costs under the commit gate."""
    blind = [r for r in rows if r.spec.policy in BUILTINS and r.spec.policy != "unit_safe"]
    xs = sorted({r.spec.level for r in blind})
    span = (xs[-1] - xs[0]) or 1.0
    grouped = group(
        blind,
        lambda r: (r.spec.config.gate, r.spec.config.check_at, r.spec.config.retry, r.spec.level),
    )
    variants = sorted({k[:3] for k in grouped}, key=lambda k: (list(Gate).index(k[0]), k[1:]))
    kinds = TIGHT_CLASSES
    fig, axes = pyplot().subplots(
        1, len(kinds), figsize=(18, 5.0), squeeze=False, layout="constrained"
    )
    from matplotlib.colors import to_hex

    cmap = pyplot().get_cmap("tab10")
    color = {v: to_hex(cmap(i % 10)) for i, v in enumerate(variants)}
    marker = {v: MARKERS[i % len(MARKERS)] for i, v in enumerate(variants)}
    for ax, kind in zip(axes[0], kinds, strict=True):
        ceiling = kind == IncidentKind.HARD_CEILING_OVERRUN
        shown = [v for v in variants if (v[0] is Gate.COMMIT) == ceiling]
        bounds: dict[float, float] = {}
        for i, v in enumerate(shown):
            points = []
            for x in xs:
                sessions = grouped.get((*v, x))
                if sessions is None:
                    continue
                point = (
                    invocation_point(sessions, kind, seed)
                    if ceiling
                    else session_point(sessions, kind)
                )
                points.append((x + dodge(i, len(shown), span), point))
                if not ceiling and point.total and not point.count:
                    bounds[x] = max(bounds.get(x, 0.0), point.high)
            series(
                ax,
                points,
                color[v],
                "--" if v[0] is Gate.COMMIT else "-",
                marker[v],
                3.0 - 0.5 * i,
                zero_bars=ceiling,
            )
        if not ceiling:
            zero_bounds(ax, bounds)
            symlog(ax)
        ax.set_title(
            CLASSES.get(kind, "hard-ceiling overruns")
            + (" (gate commit)" if ceiling else " (gate none)")
        )
        ax.set_xlabel("load level (defined below)")
        ax.set_ylabel("overruns per 1,000 invocations" if ceiling else "sessions per 1,000")
        ax.grid(True, alpha=0.3)
        if ceiling:
            ax.set_ylim(bottom=0)
    handles = [
        legend_line(
            color=color[v],
            linestyle="--" if v[0] is Gate.COMMIT else "-",
            marker=marker[v],
            label=f"gate {v[0].value}, checks {v[1].value}, retry {v[2].value}",
        )
        for v in variants
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False, title=LOAD_AXIS)
    fig.suptitle(
        "Runtime knobs: when the budget check fires and what a retry does. The 7 "
        "structure-blind built-ins (all but unit_safe) pooled; sessions per 1,000 with "
        "at least one incident, exact 95% intervals;\ngrey bars: the 95% upper bound "
        "where none was seen. Under the commit gate every violation class is zero, so "
        "its panel shows overruns per 1,000 invocations (bootstrap over sessions)",
        fontsize=10,
    )
    save(fig, path)
