"""The report's gate and runtime figures, one unit per figure: what the
gates cost (per 1,000 invocations), what no gate costs (per 1,000
sessions), and the runtime knobs (sessions per 1,000, with what differs
between the configurations said under each panel).

Each function draws one figure from a sweep's rows into a PNG; every
number drawn or written is computed from the rows.  A class nothing saw
gets no panel (the title names it); notes sit under their panel.
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
    GATE_STYLE,
    INVOCATION_RATE,
    LABELS,
    LOAD_AXIS,
    LOAD_LABEL,
    PLACEMENT_STYLE,
    SESSION_NOTE,
    SESSION_RATE,
    TIGHT_CLASSES,
    Point,
    dodge,
    gates_of,
    invocation_point,
    level_ticks,
    panel_note,
    series,
    session_point,
    symlog,
    zero_bounds,
)
from prunecheck.sim.reports.plotting import MAX_WIDTH, legend_line, pyplot, save, title
from prunecheck.sim.stats.sessions import SessionRecord
from prunecheck.sim.sweeps.runs import Row

__all__ = ["costs", "differences", "failures", "knobs"]

_PANEL = (MAX_WIDTH - 0.4) / 3  # inches: three panels to a row
_COSTS = (
    (IncidentKind.HARD_CEILING_OVERRUN, "hard-ceiling overruns"),
    (IncidentKind.SPILL, "spills (a closed unit moved to the side store)"),
    (IncidentKind.REINJECTION, "re-injections (a spilled unit brought back)"),
)
_FAILURES = (
    (ANY, "sessions with any violation"),
    (ORPHAN_400, "sessions with an orphaned-result 400"),
    (ABORT, "aborted sessions (rejected past retries)"),
)
Variant = tuple[Gate, CheckAt, RetryMode]
_DEFAULT: Variant = (Gate.NONE, CheckAt.AFTER_APPEND, RetryMode.RERUN_BATCH)


def _gate_lines(
    rows: Sequence[Row], panels: Sequence[tuple[str, str]], ylabel: str, seed: int | None
) -> tuple[Any, list[str]]:
    """One panel per class that any gate saw, a line per gate against load
    (built-ins pooled); per-invocation points when ``seed`` is given, else
    per-session ones.  Returns the figure and the headings of the classes
    no gate saw (not drawn)."""
    built = [r for r in rows if r.spec.policy in BUILTINS]
    gates = gates_of(built)
    grouped = group(built, lambda r: (r.spec.config.gate, r.spec.level))
    xs = sorted({r.spec.level for r in built})
    span = (xs[-1] - xs[0]) or 1.0
    lines = {
        (kind, gate): [
            (
                x + dodge(i, len(gates), span),
                invocation_point(grouped[(gate, x)], kind, seed)
                if seed is not None
                else session_point(grouped[(gate, x)], kind),
            )
            for x in xs
            if (gate, x) in grouped
        ]
        for kind, _ in panels
        for i, gate in enumerate(gates)
    }
    drawn = [(k, h) for k, h in panels if any(p.count for g in gates for _, p in lines[(k, g)])]
    unseen = [h for k, h in panels if (k, h) not in drawn]
    fig, axes = pyplot().subplots(
        1,
        max(1, len(drawn)),
        figsize=(_PANEL * max(1, len(drawn)) + 0.4, 5.4),
        squeeze=False,
        layout="constrained",
    )
    if not drawn:
        axes[0][0].remove()
    for ax, (kind, heading) in zip(axes[0], drawn, strict=False):
        flat: list[str] = []
        for i, gate in enumerate(gates):
            color, style, marker = GATE_STYLE[gate]
            points = lines[(kind, gate)]
            series(ax, points, color, style, marker, 3.2 - 0.7 * i, zero_bars=False)
            if not any(p.count for _, p in points):
                flat.append(gate.value)
        ax.set_title(heading, fontsize=11, fontweight="bold")
        ax.set_ylabel(ylabel)
        ax.set_xlabel(LOAD_LABEL)
        level_ticks(ax, xs)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if flat:
            panel_note(ax, f"0 at every load level: gate {', '.join(flat)}")
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
    if drawn:
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncol=len(handles),
            frameon=False,
            title=LOAD_AXIS,
            fontsize=10,
            title_fontsize=9,
        )
    return fig, unseen


def _unseen_note(unseen: Sequence[str], sessions: int, where: str = "under any gate") -> str:
    """The title's line for the classes nothing saw (not drawn)."""
    if not unseen:
        return ""
    return (
        f"\nNot drawn: {'; '.join(unseen)} — none {where} at any load level ({sessions:,} sessions)"
    )


def costs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """What the gates cost, per 1,000 model invocations, against load."""
    fig, unseen = _gate_lines(rows, _COSTS, INVOCATION_RATE, seed)
    title(
        fig,
        "The cost of safety: what each gate makes the runtime pay, per 1,000 model invocations, "
        "gate by gate (a line each)\nevery built-in policy pooled, checks after every append; "
        "95% intervals: bootstrap over sessions; lines are dodged sideways and thinner when "
        "drawn later,\nso equal lines stay visible. Time spent with a deferred check: "
        "summary.md, “The cost of safety”" + _unseen_note(unseen, _sessions(rows)),
    )
    save(fig, path)


def failures(rows: Sequence[Row], path: Path) -> None:
    """What no gate costs, per 1,000 sessions, against load."""
    fig, unseen = _gate_lines(rows, _FAILURES, SESSION_RATE, None)
    title(
        fig,
        "The cost of no safety: sessions per 1,000 that broke, gate by gate (a line each)\n"
        "every built-in policy pooled, checks after every append; exact 95% intervals; "
        f"an aborted session is one the provider kept rejecting: the error surfaced and the "
        f"agent started over; {SESSION_NOTE}" + _unseen_note(unseen, _sessions(rows)),
    )
    save(fig, path)


def _sessions(rows: Sequence[Row]) -> int:
    return sum(len(r.sessions) for r in rows if r.spec.policy in BUILTINS)


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


_IDEMPOTENT = ("#999933", "-.", "v")  # a retry that does not re-run the batch


def _style(v: Variant) -> tuple[str, str, str]:
    """A configuration's colour, line style and marker: its check placement's
    (the same under every gate), or the idempotent retry's."""
    return _IDEMPOTENT if v[2] is RetryMode.IDEMPOTENT else PLACEMENT_STYLE[v[1]]


def knobs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """Sessions with violations per runtime configuration against load (gate
    none), and the overruns each check time costs under the commit gate;
    the note under each panel says which configurations differ.  A class no configuration
    saw is not drawn; the title says so."""
    blind = [r for r in rows if r.spec.policy in BUILTINS and r.spec.policy != "unit_safe"]
    xs = sorted({r.spec.level for r in blind})
    span = (xs[-1] - xs[0]) or 1.0

    def variant(r: Row) -> Variant:
        return (r.spec.config.gate, r.spec.config.check_at, r.spec.config.retry)

    grouped = group(blind, lambda r: (*variant(r), r.spec.level))
    everywhere = group(blind, variant)
    variants = sorted(everywhere, key=lambda k: (list(Gate).index(k[0]), _name(k)))
    panels = []
    unseen = []
    for kind in TIGHT_CLASSES:
        ceiling = kind == IncidentKind.HARD_CEILING_OVERRUN
        shown = [v for v in variants if (v[0] is Gate.COMMIT) == ceiling]
        lines = {
            v: [
                (x + dodge(i, len(shown), span), _pooled(grouped[(*v, x)], kind, ceiling, seed))
                for x in xs
                if (*v, x) in grouped
            ]
            for i, v in enumerate(shown)
        }
        if any(p.count for points in lines.values() for _, p in points):
            panels.append((kind, ceiling, shown, lines))
        elif shown:
            gate = "commit" if ceiling else "none"
            unseen.append(f"{LABELS.get(kind, kind)} (gate {gate})")
    notes = {
        kind: differences({v: everywhere[v] for v in shown}, kind, ceiling, seed)
        for kind, ceiling, shown, _ in panels
    }
    n_rows = max(1, -(-(len(panels) + 1) // 3))
    height = sum(
        3.6 + 0.16 * max((notes[k].count("\n") + 1 for k, *_ in panels[r * 3 : r * 3 + 3]),
                         default=0)
        for r in range(n_rows)
    )  # fmt: skip
    fig, axes = pyplot().subplots(
        n_rows, 3, figsize=(_PANEL * 3 + 0.4, height + 1.4), squeeze=False, layout="constrained"
    )
    flat = [a for line in axes for a in line]
    for ax, (kind, ceiling, shown, lines) in zip(flat, panels, strict=False):
        bounds: dict[float, float] = {}
        for i, v in enumerate(shown):
            color, style, marker = _style(v)
            if not ceiling:
                for (_, point), x in zip(lines[v], xs, strict=False):
                    if point.total and not point.count:
                        bounds[x] = max(bounds.get(x, 0.0), point.high)
            series(ax, lines[v], color, style, marker, 2.6 - 0.4 * i, zero_bars=ceiling)
        if ceiling:
            ax.set_ylim(bottom=0)
        else:
            zero_bounds(ax, bounds)
            symlog(ax)
        ax.set_title(
            f"{LABELS.get(kind, kind)} · gate {'commit' if ceiling else 'none'}",
            fontsize=11,
            fontweight="bold",
        )
        ax.set_xlabel(LOAD_LABEL)
        level_ticks(ax, xs)
        ax.set_ylabel("hard-ceiling overruns (per 1,000 invocations)" if ceiling else SESSION_RATE)
        ax.grid(True, alpha=0.3)
        if notes[kind]:
            panel_note(ax, notes[kind])
    legend_ax = flat[len(panels)]
    legend_ax.axis("off")
    for ax in flat[len(panels) + 1 :]:
        ax.remove()
    handles = [
        legend_line(
            color=_style(v)[0],
            linestyle=_style(v)[1],
            marker=_style(v)[2],
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
        fontsize=9.5,
        title="runtime configuration\n(the structure-blind built-ins pooled;\ncolour: where "
        "the check fires)",
        title_fontsize=10,
    )
    legend_ax.text(
        0.5,
        0.0,
        LOAD_AXIS.replace("; ", ";\n"),
        ha="center",
        va="top",
        fontsize=8.5,
        transform=legend_ax.transAxes,
    )
    commit = [s for v in variants if v[0] is Gate.COMMIT for s in everywhere[v]]
    commit_line = (
        "\nUnder the commit gate no session saw a violation "
        f"({len(commit):,} sessions), so its panel shows overruns per 1,000 invocations "
        "(bootstrap over sessions)"
        if commit and not any(ANY in s.first for s in commit)
        else ""
    )
    title(
        fig,
        "Runtime knobs: when the budget check fires and what a retry does, configuration by "
        "configuration (a line each)\nthe structure-blind built-ins (all but unit_safe) pooled: "
        "sessions per 1,000 with at least one incident (exact 95% intervals)\nthe note under "
        "each panel says which configurations differ beyond their intervals; lines that agree "
        "overlap"
        + commit_line
        + _unseen_note(unseen, sum(len(r.sessions) for r in blind), "in any configuration"),
        10,
    )
    save(fig, path)
