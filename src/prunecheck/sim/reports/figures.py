"""The report's rate figures: failure rates against load and budget
tightness, and survival curves of the time to the first violation.

Each function draws one figure from a sweep's rows into a PNG (inside the
report's matplotlib style, :func:`prunecheck.sim.reports.plotting.report_style`).
Every number drawn is computed from the rows; nothing is hard-coded.  A
panel is drawn only where something was seen: a gate × class with no
incident in any session becomes one line of the figure's title, with its
bound pooled over every policy and x (the per-point grey bars of a drawn
panel are bounds of one point's sessions alone, and their legend says so);
the policies that saw none in a drawn panel are named under it, never over
its data.  Axis labels name their units (:mod:`.figure_parts`).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.model.gates import Gate
from prunecheck.sim.drivers.workload import SESSION_TURNS
from prunecheck.sim.reports.data import group
from prunecheck.sim.reports.figure_parts import (
    LABELS,
    MARKERS,
    SESSION_NOTE,
    SESSION_RATE,
    colors_for,
    dodge,
    gates_of,
    level_ticks,
    panel_note,
    policies_of,
    series,
    session_point,
    symlog,
    upper_bound,
    zero_bounds,
)
from prunecheck.sim.reports.plotting import MAX_WIDTH, legend_line, pyplot, save, title
from prunecheck.sim.stats.sessions import SessionRecord, observations
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.sweeps.runs import Row

__all__ = ["quiet_note", "rate_grid", "survival"]

_NOTE_BOX = {"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2}
_PANEL_WIDTH = (MAX_WIDTH - 0.4) / 3  # three panels to a row
_STYLES = ("-", "--", "-.", ":")


def _label(kind: str) -> str:
    return LABELS.get(kind, kind.replace("_", " "))


def _hits(sessions: Sequence[SessionRecord], kind: str) -> int:
    return sum(1 for s in sessions if kind in s.first)


def quiet_note(gates: Sequence[Gate], kinds: Sequence[str], total: int) -> str:
    """One line for gates whose classes ``kinds`` saw nothing in ``total`` sessions each.

    >>> quiet_note([Gate.COMMIT], ["any_violation"], 2800)[:53]
    'gate commit: no session with any violation in 2,800 ('
    """
    what = ", ".join(_label(k) for k in kinds)
    each = " each" if len(gates) > 1 else ""
    return (
        f"gate {', '.join(g.value for g in gates)}: no session with {what} in {total:,}{each} "
        f"(every policy and point pooled): below {upper_bound(total):.1f} per 1,000 (95%)"
    )


def _quiet_notes(
    gates: Sequence[Gate],
    classes: Sequence[str],
    shown: Sequence[tuple[Gate, str]],
    by_gate: dict[Gate, list[SessionRecord]],
) -> list[str]:
    """The note of every gate × class not drawn: gates with the same quiet
    classes and as many sessions share one line."""
    alike: dict[tuple[tuple[str, ...], int], list[Gate]] = {}
    for gate in gates:
        quiet = tuple(k for k in classes if (gate, k) not in shown)
        if quiet:
            alike.setdefault((quiet, len(by_gate.get(gate, []))), []).append(gate)
    notes = []
    for (quiet, total), same in alike.items():
        if len(quiet) == len(classes):
            what = "any class plotted"
            notes.append(
                f"Not drawn: gate {', '.join(g.value for g in same)} — no session with an "
                f"incident of {what} in {total:,}{' each' if len(same) > 1 else ''} (every "
                f"policy and point pooled): below {upper_bound(total):.1f} per 1,000 (95%)"
            )
        else:
            notes.append("Not drawn: " + quiet_note(same, quiet, total))
    return notes


_NOTE_WIDTH = 62  # characters of a note under a panel of a rate grid


def _never(
    grouped: dict[tuple[str, Gate, float], list[SessionRecord]],
    policies: Sequence[str],
    gate: Gate,
    xs: Sequence[float],
    kind: str,
) -> list[tuple[str, int]]:
    """The policies that saw no ``kind`` at any point under ``gate``, with
    their sessions pooled over the points."""
    never = []
    for policy in policies:
        sessions = [s for x in xs for s in grouped.get((policy, gate, x), [])]
        if sessions and not _hits(sessions, kind):
            never.append((policy, len(sessions)))
    return never


def _note_lines(never: Sequence[tuple[str, int]]) -> int:
    """About how many lines the note under a panel takes."""
    if not never:
        return 0
    chars = 70 + sum(len(p) + 24 for p, _ in never)
    return 1 + chars // _NOTE_WIDTH


def _grid(n: int) -> tuple[int, int]:
    cols = min(3, max(1, n))
    return math.ceil(max(1, n) / cols), cols


def rate_grid(
    rows: Sequence[Row],
    classes: Sequence[str],
    x_of: Callable[[Row], float],
    xlabel: str,
    heading: str,
    path: Path,
    *,
    logx: bool = False,
    explain: str = "",
) -> None:
    """A panel per gate × incident class that saw at least one incident, a
    line per policy: sessions per 1,000 with at least one incident of the
    class.  Gate × class pairs with none are listed in the title; the
    policies that saw none in a panel, in the note under it.  A free place of
    the grid holds the legend, else it sits under the panels."""
    policies, gates = policies_of(rows), gates_of(rows)
    colors = colors_for(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate, x_of(r)))
    by_gate = group(rows, lambda r: r.spec.config.gate)
    xs = sorted({x_of(r) for r in rows})
    shown = [(g, k) for g in gates for k in classes if _hits(by_gate.get(g, []), k)]
    notes = _quiet_notes(gates, classes, shown, by_gate)
    nevers = {panel: _never(grouped, policies, gate, xs, kind) for panel, (gate, kind) in
              enumerate(shown)}  # fmt: skip
    n_rows, n_cols = _grid(len(shown))
    note_lines = [
        max((_note_lines(nevers.get(r * n_cols + c, [])) for c in range(n_cols)), default=0)
        for r in range(n_rows)
    ]
    fig, axes = pyplot().subplots(
        n_rows,
        n_cols,
        figsize=(_PANEL_WIDTH * n_cols + 0.4, sum(3.2 + 0.16 * n for n in note_lines) + 2.6),
        sharex=True,
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    flat = [ax for line in axes for ax in line]
    for ax in flat[len(shown) + 1 :]:
        ax.remove()
    span = (xs[-1] - xs[0]) or 1.0
    point_sizes: list[int] = []
    for panel, (ax, (gate, kind)) in enumerate(zip(flat, shown, strict=False)):
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
                    point_sizes.append(point.total)
            series(ax, points, colors[policy], marker=MARKERS[i % len(MARKERS)], zero_bars=False)
        zero_bounds(ax, bounds)
        if panel == 0:
            symlog(ax)  # shared by every panel
        if logx:
            ax.set_xscale("log")
        level_ticks(ax, xs)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_title(f"{_label(kind)} · gate {gate.value}", fontsize=11, fontweight="bold")
        ax.set_ylabel(SESSION_RATE)
        ax.set_xlabel(xlabel)
        ax.tick_params(labelbottom=True, labelleft=True)
        if nevers[panel]:
            panel_note(
                ax,
                "none at any point (pooled; 95% upper bound per 1,000):\n"
                + "; ".join(
                    f"{p} 0 of {n:,}, below {upper_bound(n):.1f}" for p, n in nevers[panel]
                ),
                _NOTE_WIDTH,
            )
    handles = [
        legend_line(color=colors[p], marker=MARKERS[i % len(MARKERS)], label=p)
        for i, p in enumerate(policies)
    ]
    if point_sizes:
        lo, hi = min(point_sizes), max(point_sizes)
        size = f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"
        handles.append(
            legend_line(
                color="#9a9a9a",
                linewidth=6,
                alpha=0.35,
                label=f"grey bar: a policy saw none at that point;\nthe 95% upper bound of "
                f"that one point\n({size} sessions), not pooled",
            )
        )
    free = flat[len(shown) :]
    if not shown:  # nothing to draw: the title says so
        free[0].remove()
    elif free:  # the first free place of the grid holds the legend
        free[0].set_axis_off()
        free[0].legend(
            handles=handles,
            loc="center",
            frameon=False,
            title=textwrap.fill(explain, 40) if explain else None,
            fontsize=10,
            title_fontsize=10,
        )
    else:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncol=min(len(handles), 5),
            frameon=False,
            title=explain or None,
            fontsize=10,
            title_fontsize=10,
        )
    if not shown:
        notes.insert(0, "no incident of any plotted class in any session")
    title(fig, heading + ("\n" + "\n".join(notes) if notes else ""), 10)
    save(fig, path)


def _turn_limit(sessions: Sequence[SessionRecord]) -> int:
    return max([SESSION_TURNS, *(s.turns for s in sessions)])


def survival(rows: Sequence[Row], path: Path) -> None:
    """Kaplan–Meier: share of sessions with no violation yet, against user
    turns (left) and simulated seconds (right), a row per gate that saw a
    violation; the gates that saw none are named in the title."""
    policies, gates = policies_of(rows), gates_of(rows)
    colors = colors_for(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate))
    by_gate = group(rows, lambda r: r.spec.config.gate)
    failing = [g for g in gates if _hits(by_gate[g], ANY_VIOLATION)]
    quiet = [g for g in gates if g not in failing]
    drawn = failing or gates[:1]
    fig, axes = pyplot().subplots(
        len(drawn),
        2,
        figsize=(MAX_WIDTH, 4.4 * len(drawn) + 1.8),
        sharey=True,
        squeeze=False,
        layout="constrained",
    )
    for row_i, gate in enumerate(drawn):
        limit = _turn_limit(by_gate[gate])
        for col, (axis, label) in enumerate(
            (
                ("turns", "user turns (messages the session had received)"),
                ("time", "time since the session began (simulated s)"),
            )
        ):
            ax = axes[row_i][col]
            for i, policy in enumerate(policies):
                sessions = grouped.get((policy, gate), [])
                if not sessions:
                    continue
                km = kaplan_meier(observations(sessions, ANY_VIOLATION, axis))
                xs, ss, lo, hi = km.steps()
                ax.fill_between(
                    xs, lo, hi, step="post", color=colors[policy], alpha=0.12, linewidth=0
                )
                ax.step(
                    xs,
                    ss,
                    where="post",
                    color=colors[policy],
                    linewidth=1.6,
                    linestyle=_STYLES[i % 4],
                )
            if axis == "turns":
                _mark_session_length(ax, limit, len(by_gate[gate]))
            if gate not in failing:
                ax.text(
                    0.5,
                    0.5,
                    f"no violation in {len(by_gate[gate]):,} sessions:\nevery curve stays at 1",
                    transform=ax.transAxes,
                    ha="center",
                    va="center",
                    fontsize=9,
                    bbox=_NOTE_BOX,
                )
            ax.set_ylim(-0.02, 1.04)
            ax.axhline(0.5, color="#999999", linewidth=0.6, linestyle=":")
            ax.grid(True, alpha=0.3)
            ax.set_xlabel(label)
            against = "user turns" if axis == "turns" else "simulated time"
            ax.set_title(f"gate {gate.value}, against {against}", fontsize=11, fontweight="bold")
            if col == 0:
                ax.set_ylabel("sessions with no violation yet (share, 0–1)")
    handles = [
        legend_line(color=colors[p], linestyle=_STYLES[i % 4], linewidth=2, label=p)
        for i, p in enumerate(policies)
    ]
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=min(len(handles), 4),
        frameon=False,
        fontsize=10,
    )
    silent = [g for g in quiet if g not in drawn]
    sizes = sorted({len(by_gate[g]) for g in silent})
    note = (
        f"\nNot drawn: gate {', '.join(g.value for g in silent)} — no violation in "
        + ("/".join(f"{n:,}" for n in sizes))
        + " sessions each (below "
        + "/".join(f"{upper_bound(n):.1f}" for n in sizes)
        + " per 1,000, 95%): every curve stays at 1"
        if silent
        else ""
    )
    title(
        fig,
        "Time to the first violation: Kaplan–Meier share of sessions still intact, with 95% "
        "log-log bands (shaded); every load level pooled, checks after every append\n"
        f"{SESSION_NOTE}; an intact session is censored at its end; the dotted line marks "
        "one half (the median)" + note,
    )
    save(fig, path)


def _mark_session_length(ax: Any, limit: int, total: int) -> None:
    """The stated session length on the turns axis, and what lies past it."""
    ax.axvline(SESSION_TURNS, color="#444444", linewidth=1.0, linestyle="--")
    ax.axvspan(SESSION_TURNS, limit, color="#888888", alpha=0.08, linewidth=0)
    ax.text(
        SESSION_TURNS + 0.3,
        0.97,
        f"{SESSION_TURNS}th user message: the session ends when\nthe turn then running "
        f"finishes; messages\nthat arrive meanwhile (shaded) still count",
        fontsize=8,
        color="#333333",
        va="top",
    )
    ax.set_xlim(0, limit)
