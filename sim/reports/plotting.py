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

__all__ = ["STYLE", "legend_line", "pyplot", "report_style", "save", "title"]

#: The report's rcParams, in force only inside :func:`report_style`.
STYLE: dict[str, Any] = {"svg.hashsalt": "prunecheck", "font.size": 9, "axes.titlesize": 9}


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


def save(fig: Any, path: Path) -> None:
    """Write ``fig`` as a PNG with no software version or date, and close it."""
    fig.savefig(path, dpi=90, metadata={"Software": None})
    pyplot().close(fig)


def title(fig: Any, text: str, fontsize: float = 10) -> None:
    """``fig``'s title, each line wrapped to the figure's width (no line runs off it)."""
    width = max(40, int(fig.get_figwidth() * 72 / (fontsize * 0.56)))
    lines = [textwrap.fill(line, width) for line in text.split("\n")]
    fig.suptitle("\n".join(lines), fontsize=fontsize)
