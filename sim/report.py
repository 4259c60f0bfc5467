"""The failure-rate report: plots and ``summary.md`` from a sweep's rows.

This is the only module besides timelines that imports matplotlib (Agg
backend, no display).  Every figure and every number in the summary is
computed from the rows given; nothing is hard-coded.  Plots are
deterministic for the same rows: PNGs carry no software version or date.

Rates are model invocations that saw at least one incident of a class
since the invocation before, per 1,000 invocations, pooled over seeds,
with 95% Wilson intervals.  On the log-scale plots a class with no
incident at a point is drawn as a hollow down-triangle at the interval's
upper bound: "none seen; the rate is below this with 95% confidence".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS

from .stats import Rate
from .summary import ReportData, pool, write_summary
from .sweep import Row

__all__ = ["CLASSES", "ReportData", "write_report"]

plt.rcParams.update({"svg.hashsalt": "prunecheck", "font.size": 9, "axes.titlesize": 9})

#: Incident classes of the plots: exposure key -> label.
CLASSES: dict[str, str] = {
    "any_violation": "any violation",
    "provider_rejection:result_without_call": "orphaned-result 400s",
    "orphaned_result": "orphaned results",
    "duplicated_side_effect": "duplicated side effects",
    "truncated_payload": "truncated payloads",
    "unanswered_call": "unanswered calls",
}
_TIGHT_CLASSES = ("any_violation", "provider_rejection:result_without_call",
                  "duplicated_side_effect", "truncated_payload", "hard_ceiling_overrun")
_GATE_STYLE: dict[Gate, tuple[str, Any]] = {
    Gate.NONE: ("#d62728", "-"), Gate.REFERENCE: ("#ff7f0e", "--"),
    Gate.COMMIT: ("#1f77b4", "-"), Gate.SPILL: ("#2ca02c", "-."),
}
_PALETTE = ("#d62728", "#ff7f0e", "#8c564b", "#e377c2", "#9467bd", "#bcbd22", "#17becf",
            "#000000", "#7f7f7f", "#1f77b4", "#2ca02c")
_YMIN, _YMAX = 0.3, 1600.0


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


def _series(ax: Axes, points: Sequence[tuple[float, Rate]], color: str, style: str = "-",
            log: bool = True) -> None:
    """One line with Wilson error bars; zero counts as hollow triangles at
    their upper bound, nonzero points joined by the line."""
    xs = [x for x, r in points if r.total]
    ys = [r.per_1000 if r.count else math.nan for x, r in points if r.total]
    lows = [r.per_1000 - r.low if r.count else 0.0 for _, r in points if r.total]
    highs = [r.high - r.per_1000 if r.count else 0.0 for _, r in points if r.total]
    if any(not math.isnan(y) for y in ys):
        ax.errorbar(xs, ys, yerr=[lows, highs], color=color, linestyle=style, marker="o",
                    markersize=3.5, linewidth=1.5, capsize=2, elinewidth=0.8)
    zeros = [(x, r.high) for x, r in points if r.total and not r.count]
    if zeros:
        ax.plot([z[0] for z in zeros], [z[1] for z in zeros], linestyle="none", marker="v",
                markersize=5, markerfacecolor="none", markeredgecolor=color, alpha=0.8)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(_YMIN, _YMAX)


def _zero_handle() -> Line2D:
    return Line2D([], [], linestyle="none", marker="v", markerfacecolor="none",
                  markeredgecolor="#444444", label="none seen: 95% upper bound")


def _save(fig: Any, path: Path) -> None:
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)


def _rate_grid(rows: Sequence[Row], classes: Sequence[str], x_of: Callable[[Row], float],
               xlabel: str, title: str, path: Path, *, logx: bool = False) -> None:
    """Rows = incident classes, columns = gates, a line per policy."""
    policies, gates = _policies(rows), _gates(rows)
    colors = _colors(policies)
    pooled = pool(rows, lambda r: (r.spec.policy, r.spec.config.gate, x_of(r)))
    xs = sorted({x_of(r) for r in rows})
    fig, axes = plt.subplots(len(classes), len(gates), figsize=(3.6 * len(gates) + 0.8,
                             2.3 * len(classes) + 1.2), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    span = (xs[-1] - xs[0]) or 1.0
    for col, gate in enumerate(gates):
        for row_i, kind in enumerate(classes):
            ax = axes[row_i][col]
            seen = total = 0
            for i, policy in enumerate(policies):
                offset = (i - (len(policies) - 1) / 2) * 0.006
                points = [(x * (1.0 + 2 * offset) if logx else x + offset * span,
                           pooled[(policy, gate, x)].rate(kind))
                          for x in xs if (policy, gate, x) in pooled]
                seen += sum(r.count for _, r in points)
                total += sum(r.total for _, r in points)
                _series(ax, points, colors[policy])
            if not seen and total:
                ax.text(0.5, 0.93, f"none in {total:,} invocations", transform=ax.transAxes,
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
                ax.set_ylabel(f"{CLASSES.get(kind, kind.replace('_', ' '))}\nper 1,000 "
                              "invocations")
            if row_i == len(classes) - 1:
                ax.set_xlabel(xlabel)
    handles = [Line2D([], [], color=colors[p], marker="o", label=p) for p in policies]
    fig.legend(handles=[*handles, _zero_handle()], loc="outside lower center",
               ncol=min(len(handles) + 1, 5), frameon=False)
    fig.suptitle(title, fontsize=11)
    _save(fig, path)


def _costs(rows: Sequence[Row], path: Path) -> None:
    """The cost of safety per gate against load, pooled over the built-ins."""
    built = [r for r in rows if r.spec.policy in BUILTINS]
    gates = _gates(built)
    pooled = pool(built, lambda r: (r.spec.config.gate, r.spec.level))
    xs = sorted({r.spec.level for r in built})
    panels = (("hard_ceiling_overrun", "hard-ceiling overruns\nper 1,000 invocations"),
              ("deferred", "share of agent time with\na deferred budget check (%)"),
              ("spill", "spills per 1,000 invocations"),
              ("reinjection", "re-injections per 1,000 invocations"))
    fig, axes = plt.subplots(1, len(panels), figsize=(16, 4.4), squeeze=False,
                             layout="constrained")
    for ax, (kind, label) in zip(axes[0], panels, strict=True):
        for gate in gates:
            color, style = _GATE_STYLE[gate]
            points = [(x, pooled[(gate, x)]) for x in xs if (gate, x) in pooled]
            if kind == "deferred":
                ax.plot([x for x, _ in points], [100.0 * p.deferred_share for _, p in points],
                        color=color, linestyle=style, marker="o", markersize=3.5)
            else:
                _series(ax, [(x, p.rate(kind)) for x, p in points], color, style, log=False)
        ax.set_ylabel(label)
        ax.set_xlabel("load level")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], color=_GATE_STYLE[g][0], linestyle=_GATE_STYLE[g][1],
                      marker="o", label=f"gate {g.value}") for g in gates]
    fig.legend(handles=[*handles, _zero_handle()], loc="outside lower center",
               ncol=len(handles) + 1, frameon=False)
    fig.suptitle("The cost of safety, pooled over the built-in policies (checks after every "
                 "append; 95% Wilson intervals)", fontsize=11)
    _save(fig, path)


def _knobs(rows: Sequence[Row], path: Path) -> None:
    """Violations per runtime configuration against load (gate none), and the
    overruns each check time costs under the commit gate; raw built-ins pooled."""
    raw = [r for r in rows if r.spec.policy in BUILTINS and r.spec.policy != "unit_safe"]
    xs = sorted({r.spec.level for r in raw})
    pooled = pool(raw, lambda r: (r.spec.config.gate, r.spec.config.check_at,
                                  r.spec.config.retry, r.spec.level))
    variants = sorted({k[:3] for k in pooled}, key=lambda k: (list(Gate).index(k[0]), k[1:]))
    kinds = ("any_violation", "provider_rejection:result_without_call",
             "duplicated_side_effect", "truncated_payload", "hard_ceiling_overrun")
    fig, axes = plt.subplots(1, len(kinds), figsize=(18, 4.6), squeeze=False,
                             layout="constrained")
    cmap = plt.get_cmap("tab10")
    color = {v: matplotlib.colors.to_hex(cmap(i % 10)) for i, v in enumerate(variants)}
    for ax, kind in zip(axes[0], kinds, strict=True):
        ceiling = kind == "hard_ceiling_overrun"
        shown = [v for v in variants if (v[0] is Gate.COMMIT) == ceiling]
        for i, v in enumerate(shown):
            points = [(x + (i - len(shown) / 2) * 0.006, pooled[(*v, x)].rate(kind))
                      for x in xs if (*v, x) in pooled]
            _series(ax, points, color[v], "--" if v[0] is Gate.COMMIT else "-", log=not ceiling)
        ax.set_title(CLASSES.get(kind, "hard-ceiling overruns") + (
            " (gate commit)" if ceiling else " (gate none)"))
        ax.set_xlabel("load level")
        ax.grid(True, alpha=0.3)
        if ceiling:
            ax.set_ylim(bottom=0)
    axes[0][0].set_ylabel("per 1,000 invocations")
    handles = [Line2D([], [], color=color[v], linestyle="--" if v[0] is Gate.COMMIT else "-",
                      marker="o", label=f"gate {v[0].value}, checks {v[1].value}, "
                      f"retry {v[2].value}") for v in variants]
    fig.legend(handles=[*handles, _zero_handle()], loc="outside lower center", ncol=4,
               frameon=False)
    fig.suptitle("Runtime knobs: when the budget check fires and what a retry does (raw "
                 "built-in policies pooled; under the commit gate every violation class is "
                 "zero, so its panel shows the overruns)", fontsize=11)
    _save(fig, path)


def write_report(data: ReportData, out: Path) -> list[Path]:
    """Write the plots and ``summary.md`` into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "failure-vs-load.png", out / "failure-vs-tightness.png",
             out / "cost-of-safety.png", out / "runtime-knobs.png", out / "summary.md"]
    _rate_grid(data.main, tuple(CLASSES), lambda r: r.spec.level, "load level",
               "Failure rate against load: model invocations per 1,000 that saw the incident "
               "(checks after every append; 95% Wilson intervals; log scale)", files[0])
    _rate_grid(data.tightness, _TIGHT_CLASSES, lambda r: r.spec.load.tightness,
               "tightness (turn tokens / budget)",
               f"Failure rate against budget tightness at load level {data.tight_level:g} "
               "(checks after every append; log scales)", files[1], logx=True)
    _costs(data.main, files[2])
    _knobs(data.knobs, files[3])
    write_summary(data, files[4], [f.name for f in files[:4]])
    return files
