"""What makes a report figure readable at the size the report's page shows
it, checked on the drawn figure (tests/test_figures.py): every problem found
is one line naming the figure and the artist.

- The page (``reports/index.html``) shows a figure at full size in a window
  1,280 px wide (its content is then :data:`PAGE_WIDTH` px wide), so a figure
  is at most that wide and no text is smaller than ``MIN_FONT`` points.
- Every panel (an axes with its axis on) has a title, data (a line with a
  point above 0: a panel with nothing to show is dropped and said in the
  title), and each of its axes that shows numbers a label ending with its
  unit in parentheses.
- Nothing is cut off: every panel with its labels, notes and ticks, every
  legend and the title lie inside the figure.
- No note or legend covers data: no line of a panel passes through a text
  drawn inside that panel, and no legend overlaps a panel.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.reports import cost_figures, figures, plotting, verdict_chart
from prunecheck.sim.reports.plotting import DPI, MIN_FONT, pyplot, write_png

__all__ = ["PAGE_WIDTH", "panels", "problems", "recording"]

#: The report page's content width in a window 1,280 px wide (24 px padding).
PAGE_WIDTH = 1232
_UNIT = re.compile(r"\([^()]+\)$")
_SLACK = 1.0  # pixels of rounding


def panels(fig: Any) -> list[Any]:
    """The axes of ``fig`` that draw data with their axis on (not a
    legend's place, not the verdict chart's table)."""
    return [ax for ax in fig.get_axes() if ax.axison and ax.get_lines()]


def _inside(inner: Any, outer: Any) -> bool:
    return bool(
        inner.x0 >= outer.x0 - _SLACK
        and inner.y0 >= outer.y0 - _SLACK
        and inner.x1 <= outer.x1 + _SLACK
        and inner.y1 <= outer.y1 + _SLACK
    )


def _crosses(line: Any, box: Any) -> bool:
    """Whether the drawn line passes through ``box`` (display pixels),
    sampled along each segment."""
    xy = line.get_transform().transform(line.get_xydata())
    if not line.get_visible() or len(xy) == 0:
        return False
    steps = 12 if line.get_linestyle() not in ("None", "", " ") else 1
    for (x0, y0), (x1, y1) in zip(xy, [*xy[1:], xy[-1]], strict=True):
        for k in range(steps):
            t = k / steps
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            if box.x0 < x < box.x1 and box.y0 < y < box.y1:
                return True
    return False


def _has_data(ax: Any) -> bool:
    return any(any(y > 0 for y in line.get_ydata()) for line in ax.get_lines())


def problems(fig: Any, name: str) -> list[str]:
    """Every readability problem of the drawn figure ``fig`` (after it was
    saved: its layout is done), one line each."""
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    found = []
    width = fig.get_figwidth() * DPI
    if width > PAGE_WIDTH:
        found.append(f"{name}: {width:.0f} px wide, the page shows {PAGE_WIDTH} px")
    if not (fig._suptitle and fig._suptitle.get_text().strip()):
        found.append(f"{name}: no title saying what is compared")
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip() and text.get_fontsize() < MIN_FONT:
            found.append(f"{name}: {text.get_text()[:40]!r} at {text.get_fontsize()} pt")
    shown = [t for t in (fig._suptitle, *fig.texts) if t is not None and t.get_visible()]
    for text in shown:
        if not _inside(text.get_window_extent(renderer), page):
            found.append(f"{name}: {text.get_text()[:40]!r} runs off the figure")
    drawn = panels(fig)
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.get_axes())]:
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        if not _inside(box, page):
            found.append(f"{name}: a legend runs off the figure")
        if any(box.overlaps(ax.get_window_extent(renderer)) for ax in drawn):
            found.append(f"{name}: a legend covers a panel")
    for ax in fig.get_axes():
        if ax.get_visible() and not _inside(ax.get_tightbbox(renderer), page):
            found.append(f"{name}: panel {ax.get_title()!r} (or its labels) runs off the figure")
    for ax in drawn:
        where = f"{name}: panel {ax.get_title()!r}"
        if not ax.get_title().strip():
            found.append(f"{where} has no title")
        for axis, label, ticks in (
            ("x", ax.get_xlabel(), ax.get_xticklabels()),
            ("y", ax.get_ylabel(), ax.get_yticklabels()),
        ):
            numbered = any(t.get_visible() and t.get_text() for t in ticks)
            if numbered and not _UNIT.search(label.strip()):
                found.append(f"{where}: {axis} label {label!r} names no unit in parentheses")
        if not _has_data(ax):
            found.append(f"{where} shows no data")
        area = ax.get_window_extent(renderer)
        for text in ax.texts:
            box = text.get_window_extent(renderer)
            if box.overlaps(area) and any(_crosses(line, box) for line in ax.get_lines()):
                found.append(f"{where}: the note {text.get_text()[:40]!r} covers a line")
    return found


@contextmanager
def recording() -> Iterator[dict[str, list[str]]]:
    """While the block draws a report, check each figure as it is saved:
    the figure's file name -> its problems (none: an empty list)."""
    found: dict[str, list[str]] = {}

    def save(fig: Any, path: Path) -> None:
        write_png(fig, path)
        found[path.name] = problems(fig, path.name)
        pyplot().close(fig)

    with pytest.MonkeyPatch.context() as patch:
        for module in (figures, cost_figures, verdict_chart, plotting):
            patch.setattr(module, "save", save)
        yield found
