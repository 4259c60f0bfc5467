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

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.drivers.agents import SESSION_TURNS
from prunecheck.sim.reports.plotting import legend_line, pyplot, report_style, save
from prunecheck.sim.reports.summary import ReportData, group, pool, write_summary
from prunecheck.sim.stats.sessions import bootstrap_per_invocation, observations, rate_of
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.sweeps.sweep import Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CLASSES", "ReportData", "write_report"]

#: Incident classes of the plots: key -> label.
CLASSES: dict[str, str] = {
    ANY_VIOLATION: "any violation",
    ORPHAN_REJECTION: "orphaned-result 400s",
    IncidentKind.ORPHANED_RESULT: "orphaned results",
    IncidentKind.DUPLICATED_SIDE_EFFECT: "duplicated side effects",
    IncidentKind.TRUNCATED_PAYLOAD: "truncated payloads",
    IncidentKind.UNANSWERED_CALL: "unanswered calls",
}
#: The classes of the budget-tightness and runtime-knob plots, in order.
_TIGHT_CLASSES = (ANY_VIOLATION, ORPHAN_REJECTION, IncidentKind.DUPLICATED_SIDE_EFFECT,
                  IncidentKind.TRUNCATED_PAYLOAD, IncidentKind.HARD_CEILING_OVERRUN)
_GATE_STYLE: dict[Gate, tuple[str, Any, str]] = {
    Gate.NONE: ("#d62728", "-", "o"), Gate.REFERENCE: ("#ff7f0e", "--", "s"),
    Gate.COMMIT: ("#1f77b4", "-", "^"), Gate.SPILL: ("#2ca02c", "-.", "D"),
}
_PALETTE = ("#d62728", "#ff7f0e", "#8c564b", "#e377c2", "#9467bd", "#bcbd22", "#17becf",
            "#000000", "#7f7f7f", "#1f77b4", "#2ca02c")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">")
_LINTHRESH = 10.0
LOAD_AXIS = ("load level (0: 1 agent, a user message every 40 s, narrow batches; "
             "1: 4 agents, every 8 s, wide slow streamed batches)")
_SESSION_NOTE = (f"a session ends after {SESSION_TURNS} user messages, on a session abort, or at "
                 "the horizon")


def _policies(rows: Iterable[Row]) -> list[str]:
    names = list(dict.fromkeys(r.spec.policy for r in rows))
    return sorted(names, key=lambda n: (n not in BUILTINS, list(BUILTINS).index(n)
                                        if n in BUILTINS else 0, n))


def _gates(rows: Iterable[Row]) -> list[Gate]:
    present = {r.spec.config.gate for r in rows}
    return [g for g in Gate if g in present]


def _colors(policies: Sequence[str]) -> dict[str, str]:
    out = {}
    for i, name in enumerate(p for p in policies if p != "unit_safe"):
        out[name] = _PALETTE[i % len(_PALETTE)] if i < 7 else _PALETTE[8 + (i - 7) % 3]
    out["unit_safe"] = "#000000"
    return out


class _Point:
    """One plotted rate: value, interval and how many units it rests on."""

    __slots__ = ("count", "high", "low", "total", "value")

    def __init__(self, value: float, low: float, high: float, count: int, total: int) -> None:
        self.value, self.low, self.high, self.count, self.total = value, low, high, count, total


def _session_point(sessions: Sequence[Any], key: str) -> _Point:
    r = rate_of(sessions, key)
    return _Point(r.per_1000 if r.total else float("nan"), r.low, r.high, r.count, r.total)


def _invocation_point(sessions: Sequence[Any], key: str, seed: int) -> _Point:
    r = bootstrap_per_invocation(sessions, key, seed=seed)
    return _Point(r.per_1000, r.low, r.high, r.count, r.total)


def _symlog(ax: Axes) -> None:
    """Linear from 0 to 10 per 1,000, logarithmic above: zeros are points."""
    ax.set_yscale("symlog", linthresh=_LINTHRESH, linscale=0.6)
    ax.set_ylim(-0.5, 1300.0)
    ax.set_yticks([0, 5, 10, 30, 100, 300, 1000], ["0", "5", "10", "30", "100", "300", "1000"])
    ax.minorticks_off()


def _series(ax: Axes, points: Sequence[tuple[float, _Point]], color: str, style: str = "-",
            marker: str = "o", width: float = 1.5, zero_bars: bool = True) -> None:
    """One line with its 95% intervals as error bars.  A point with none
    seen sits at 0; its bar reaches the upper bound unless ``zero_bars`` is
    False (the panel then draws the bounds once, see :func:`_zero_bounds`)."""
    shown = [(x, p) for x, p in points if p.total]
    if not shown:
        return
    xs = [x for x, _ in shown]
    ys = [p.value for _, p in shown]
    highs = [max(0.0, p.high - p.value) if (p.count or zero_bars) else 0.0 for _, p in shown]
    ax.errorbar(xs, ys, yerr=[[max(0.0, p.value - p.low) for _, p in shown], highs],
                color=color, linestyle=style, marker=marker, markersize=4, linewidth=width,
                capsize=2, elinewidth=0.7, alpha=0.9)


def _zero_bounds(ax: Axes, bounds: dict[float, float]) -> None:
    """Where a policy saw none, the 95% upper bound, drawn once per load
    point as a grey bar (the largest such bound there)."""
    if bounds:
        xs = sorted(bounds)
        ax.vlines(xs, 0, [bounds[x] for x in xs], colors="#9a9a9a", linewidth=5, alpha=0.35,
                  zorder=0)


def _dodge(i: int, n: int, span: float) -> float:
    return (i - (n - 1) / 2) * 0.018 * span


def _rate_grid(rows: Sequence[Row], classes: Sequence[str], x_of: Callable[[Row], float],
               xlabel: str, title: str, path: Path, *, logx: bool = False,
               explain: str = "") -> None:
    """Rows = incident classes, columns = gates, a line per policy: sessions
    per 1,000 with at least one incident of the class."""
    policies, gates = _policies(rows), _gates(rows)
    colors = _colors(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate, x_of(r)))
    xs = sorted({x_of(r) for r in rows})
    fig, axes = pyplot().subplots(len(classes), len(gates), figsize=(3.6 * len(gates) + 0.8,
                             2.3 * len(classes) + 1.4), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
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
                    shift = x * (1.0 + _dodge(i, len(policies), 1.0)) if logx else \
                        x + _dodge(i, len(policies), span)
                    point = _session_point(sessions, kind)
                    points.append((shift, point))
                    if point.total and not point.count:
                        bounds[x] = max(bounds.get(x, 0.0), point.high)
                seen += sum(p.count for _, p in points)
                total += sum(p.total for _, p in points)
                _series(ax, points, colors[policy], marker=_MARKERS[i % len(_MARKERS)],
                        zero_bars=False)
            _zero_bounds(ax, bounds)
            if col == 0 and row_i == 0:
                _symlog(ax)  # shared by every panel
            if not seen and total:
                bound = 1000.0 * (1.0 - 0.025 ** (1.0 / total))
                ax.text(0.5, 0.93, f"none in {total:,} sessions:\nbelow {bound:.1f} per 1,000 "
                        "(95%)", transform=ax.transAxes,
                        ha="center", va="top", fontsize=8, color="#333333",
                        bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2})
            if logx:
                ax.set_xscale("log")
                ax.set_xticks(xs, [f"{x:g}" for x in xs])
                ax.minorticks_off()
            ax.grid(True, which="major", alpha=0.3)
            if row_i == 0:
                ax.set_title(f"gate {gate.value}", fontsize=11, fontweight="bold")
            if col == 0:
                ax.set_ylabel(f"{CLASSES.get(kind, kind.replace('_', ' '))}\nsessions per "
                              "1,000")
            if row_i == len(classes) - 1:
                ax.set_xlabel(xlabel)
    handles = [legend_line(color=colors[p], marker=_MARKERS[i % len(_MARKERS)], label=p)
               for i, p in enumerate(policies)]
    handles.append(legend_line(color="#9a9a9a", linewidth=5, alpha=0.35,
                          label="grey bar: none seen there,\nits 95% upper bound"))
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5),
               frameon=False, title=explain or None)
    fig.suptitle(title, fontsize=11)
    save(fig, path)


def _survival(rows: Sequence[Row], path: Path) -> None:
    """Kaplan–Meier: share of sessions with no violation yet, against user
    turns (top) and simulated seconds (bottom), a column per gate."""
    policies, gates = _policies(rows), _gates(rows)
    colors = _colors(policies)
    grouped = group(rows, lambda r: (r.spec.policy, r.spec.config.gate))
    fig, axes = pyplot().subplots(2, len(gates), figsize=(3.8 * len(gates) + 0.8, 8.0),
                             sharey=True, squeeze=False, layout="constrained")
    for col, gate in enumerate(gates):
        for row_i, (axis, label) in enumerate((
                ("turns", "user messages into the session (turns)"),
                ("time", "simulated seconds since the session began"))):
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
                ax.fill_between(xs, lo, hi, step="post", color=colors[policy], alpha=0.12,
                                linewidth=0)
                ax.step(xs, ss, where="post", color=colors[policy], linewidth=1.4,
                        linestyle=("-", "--", "-.", ":")[i % 4])
            if not failed and total:
                ax.text(0.5, 0.5, f"no violation in {total:,} sessions:\nevery curve stays "
                        "at 1", transform=ax.transAxes, ha="center", va="center", fontsize=8,
                        bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 3})
            ax.set_ylim(-0.02, 1.04)
            ax.axhline(0.5, color="#999999", linewidth=0.6, linestyle=":")
            ax.grid(True, alpha=0.3)
            ax.set_xlabel(label)
            if row_i == 0:
                ax.set_title(f"gate {gate.value}", fontsize=11, fontweight="bold")
            if col == 0:
                ax.set_ylabel("share of sessions with no violation yet")
    handles = [legend_line(color=colors[p], linestyle=("-", "--", "-.", ":")[i % 4],
                      label=p) for i, p in enumerate(policies)]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 8),
               frameon=False)
    fig.suptitle("Time to the first violation: Kaplan–Meier share of sessions still intact, "
                 "with 95% log-log bands (shaded); every load level pooled, checks after every "
                 f"append;\n{_SESSION_NOTE} (an intact session is censored at its end); the "
                 "dotted line marks one half (the median)", fontsize=10)
    save(fig, path)


def _costs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """The cost of safety per gate against load, pooled over the built-ins."""
    built = [r for r in rows if r.spec.policy in BUILTINS]
    gates = _gates(built)
    grouped = group(built, lambda r: (r.spec.config.gate, r.spec.level))
    pooled = pool(built, lambda r: (r.spec.config.gate, r.spec.level))
    xs = sorted({r.spec.level for r in built})
    span = (xs[-1] - xs[0]) or 1.0
    overrun, abort = IncidentKind.HARD_CEILING_OVERRUN, IncidentKind.SESSION_ABORT
    panels = ((overrun, "hard-ceiling overruns\nper 1,000 invocations"),
              ("deferred", "share of agent time with\na deferred budget check (%)"),
              (IncidentKind.SPILL, "spills per 1,000 invocations"),
              (abort, "aborted sessions\nper 1,000 sessions"))
    fig, axes = pyplot().subplots(1, len(panels), figsize=(16, 4.8), squeeze=False,
                             layout="constrained")
    for ax, (kind, label) in zip(axes[0], panels, strict=True):
        flat: list[str] = []
        for i, gate in enumerate(gates):
            color, style, marker = _GATE_STYLE[gate]
            width = 3.2 - 0.7 * i  # lines drawn later are thinner: none hides another
            keys = [(x, (gate, x)) for x in xs if (gate, x) in grouped]
            shift = [x + _dodge(i, len(gates), span) for x, _ in keys]
            if kind == "deferred":
                values = [100.0 * pooled[k].deferred_share for _, k in keys]
                ax.plot(shift, values, color=color, linestyle=style, marker=marker,
                        markersize=4, linewidth=width)
            else:
                points = [(s, _session_point(grouped[k], kind) if kind == abort else
                           _invocation_point(grouped[k], kind, seed))
                          for s, (_, k) in zip(shift, keys, strict=True)]
                _series(ax, points, color, style, marker, width, zero_bars=False)
                values = [p.value for _, p in points]
            if not any(values):
                flat.append(gate.value)
        if len(flat) > 1:
            ax.text(0.03, 0.94, f"at 0 everywhere:\ngate {', '.join(flat)}", va="top",
                    transform=ax.transAxes, fontsize=8, color="#333333",
                    bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "pad": 2})
        ax.set_ylabel(label)
        ax.set_xlabel("load level (defined below)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles = [legend_line(color=_GATE_STYLE[g][0], linestyle=_GATE_STYLE[g][1],
                      marker=_GATE_STYLE[g][2], label=f"gate {g.value}") for g in gates]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False,
               title=LOAD_AXIS)
    fig.suptitle("The cost of safety, every built-in policy pooled, checks after every append\n"
                 "95% intervals: bootstrap over sessions for per-invocation rates, exact for "
                 "per-session ones; lines are dodged sideways and thinner when drawn later, so "
                 "equal lines stay visible", fontsize=10)
    save(fig, path)


def _knobs(rows: Sequence[Row], path: Path, seed: int) -> None:
    """Sessions with violations per runtime configuration against load (gate
    none), and the overruns each check time costs under the commit gate."""
    blind = [r for r in rows if r.spec.policy in BUILTINS and r.spec.policy != "unit_safe"]
    xs = sorted({r.spec.level for r in blind})
    span = (xs[-1] - xs[0]) or 1.0
    grouped = group(blind, lambda r: (r.spec.config.gate, r.spec.config.check_at,
                                      r.spec.config.retry, r.spec.level))
    variants = sorted({k[:3] for k in grouped}, key=lambda k: (list(Gate).index(k[0]), k[1:]))
    kinds = _TIGHT_CLASSES
    fig, axes = pyplot().subplots(1, len(kinds), figsize=(18, 5.0), squeeze=False,
                             layout="constrained")
    from matplotlib.colors import to_hex

    cmap = pyplot().get_cmap("tab10")
    color = {v: to_hex(cmap(i % 10)) for i, v in enumerate(variants)}
    marker = {v: _MARKERS[i % len(_MARKERS)] for i, v in enumerate(variants)}
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
                point = _invocation_point(sessions, kind, seed) if ceiling else \
                    _session_point(sessions, kind)
                points.append((x + _dodge(i, len(shown), span), point))
                if not ceiling and point.total and not point.count:
                    bounds[x] = max(bounds.get(x, 0.0), point.high)
            _series(ax, points, color[v], "--" if v[0] is Gate.COMMIT else "-", marker[v],
                    3.0 - 0.5 * i, zero_bars=ceiling)
        if not ceiling:
            _zero_bounds(ax, bounds)
            _symlog(ax)
        ax.set_title(CLASSES.get(kind, "hard-ceiling overruns") + (
            " (gate commit)" if ceiling else " (gate none)"))
        ax.set_xlabel("load level (defined below)")
        ax.set_ylabel("overruns per 1,000 invocations" if ceiling else "sessions per 1,000")
        ax.grid(True, alpha=0.3)
        if ceiling:
            ax.set_ylim(bottom=0)
    handles = [legend_line(color=color[v], linestyle="--" if v[0] is Gate.COMMIT else "-",
                      marker=marker[v], label=f"gate {v[0].value}, checks {v[1].value}, "
                      f"retry {v[2].value}") for v in variants]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, frameon=False,
               title=LOAD_AXIS)
    fig.suptitle("Runtime knobs: when the budget check fires and what a retry does. The 7 "
                 "structure-blind built-ins (all but unit_safe) pooled; sessions per 1,000 with "
                 "at least one incident, exact 95% intervals;\ngrey bars: the 95% upper bound "
                 "where none was seen. Under the commit gate every violation class is zero, so "
                 "its panel shows overruns per 1,000 invocations (bootstrap over sessions)",
                 fontsize=10)
    save(fig, path)


def _plots(data: ReportData, files: Sequence[Path]) -> list[Path]:
    """Draw every plot ``data`` has rows for into its file of ``files``."""
    seed = data.seeds[0] if data.seeds else 0
    written: list[Path] = []
    if data.main:
        _survival(data.main, files[0])
        _rate_grid(data.main, tuple(CLASSES), lambda r: r.spec.level, "load level",
                   "Failure rate against load: sessions per 1,000 with at least one incident of "
                   "the class\n(exact 95% intervals; checks after every append; y linear to 10, "
                   f"log above);\n{_SESSION_NOTE}", files[1], explain=LOAD_AXIS)
        _costs(data.main, files[3], seed)
        written += [files[0], files[1], files[3]]
    if data.tightness:
        _rate_grid(data.tightness, _TIGHT_CLASSES, lambda r: r.spec.load.tightness,
                   "tightness (turn tokens / budget)",
                   f"Failure rate against budget tightness at load level {data.tight_level:g}:\n"
                   "sessions per 1,000 with at least one incident (exact 95% intervals; checks "
                   f"after every append);\n{_SESSION_NOTE}", files[2], logx=True,
                   explain="tightness: a typical turn's tokens against the working budget")
        written.append(files[2])
    if data.knobs:
        _knobs(data.knobs, files[4], seed)
        written.append(files[4])
    return written


def write_report(data: ReportData, out: Path) -> list[Path]:
    """Write the plots and ``summary.md`` into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    names = ["survival.png", "failure-vs-load.png", "failure-vs-tightness.png",
             "cost-of-safety.png", "runtime-knobs.png"]
    files = [out / n for n in names]
    with report_style():
        written = _plots(data, files)
    written.sort(key=files.index)
    summary = out / "summary.md"
    write_summary(data, summary, [f.name for f in written])
    return [*written, summary]
