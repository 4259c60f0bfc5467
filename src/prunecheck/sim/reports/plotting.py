"""matplotlib for the report's plots, set up only while a plot is drawn.

Importing a report module touches no matplotlib state: :func:`pyplot`
imports matplotlib on first use with the Agg backend (no display), and
:func:`report_style` applies the report's fonts as an ``rc_context`` that
ends with the drawing, so other pictures drawn in the same process (the
timeline of a bundle) keep matplotlib's defaults.
"""

from __future__ import annotations

import textwrap
from contextlib import AbstractContextManager
from pathlib import Path
from types import ModuleType
from typing import Any

from prunecheck.sim.support.outputs import replacing

__all__ = [
    "DPI",
    "MAX_WIDTH",
    "MIN_FONT",
    "STYLE",
    "legend_line",
    "pyplot",
    "report_style",
    "save",
    "title",
    "write_png",
]

#: The report's rcParams, in force only inside :func:`report_style`.
STYLE: dict[str, Any] = {"svg.hashsalt": "prunecheck", "font.size": 9, "axes.titlesize": 9}
#: Pixels per inch of the PNGs.
DPI = 90
#: The widest figure, in inches: 1,224 px at :data:`DPI`, so that the report's
#: page shows every plot at its full size in a window 1,280 px wide (the
#: page's content is then 1,232 px wide), where no text is below 10 px.
MAX_WIDTH = 13.6
#: The smallest text of a figure, in points (10 px at :data:`DPI`).
MIN_FONT = 8.0


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def report_style() -> AbstractContextManager[Any]:
    """The report's fonts (:data:`STYLE`) while the ``with`` block draws."""
    style: AbstractContextManager[Any] = pyplot().rc_context(STYLE)
    return style


def legend_line(**style: Any) -> Any:
    """A line with no data, drawn only in a legend (``matplotlib.lines.Line2D``)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **style)


def write_png(fig: Any, path: Path) -> None:
    """Write ``fig`` as a PNG with no software version or date: the same
    figure drawn by the same matplotlib gives the same bytes."""
    with replacing(path) as tmp:  # atomic: a reader never sees half a plot
        fig.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})


def save(fig: Any, path: Path) -> None:
    """:func:`write_png`, then close ``fig``."""
    write_png(fig, path)
    pyplot().close(fig)


def title(fig: Any, text: str, fontsize: float = 10) -> None:
    """``fig``'s title, each line wrapped to the figure's width (no line runs off it)."""
    width = max(40, int(fig.get_figwidth() * 72 / (fontsize * 0.56)))
    lines = [textwrap.fill(line, width) for line in text.split("\n")]
    fig.suptitle("\n".join(lines), fontsize=fontsize)
