"""Bundles without their timeline's pixels, for tests that read a bundle's
other files.

Drawing ``timeline.png`` (matplotlib) is most of what writing a bundle
costs, about 0.3 s of CPU.  A test that reads a bundle's trace, narrative or
request, not its picture, can write its bundles with :func:`lanes_only` in
place of :func:`~prunecheck.sim.evidence.timeline.draw_timeline`: the
timeline's lanes are still computed from the trace (what a trace could
break), the PNG is a header alone.  The pixels are tests/test_bundle.py's,
and every docs page's bundle (tests/test_docs_examples.py) is drawn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # not at import: conftest.py imports this through check_runs, tests watch imports
    from prunecheck.model.system import System
    from prunecheck.model.trace import Trace

__all__ = ["PNG_HEADER", "lanes_only", "timeline_sketched"]

PNG_HEADER = b"\x89PNG\r\n\x1a\n"


def lanes_only(trace: Trace, system: System[Any], path: Path) -> Path:
    """Stands for ``draw_timeline``: computes the lanes, writes a PNG header."""
    from prunecheck.sim.evidence.timeline import lanes_of

    assert lanes_of(trace, system).ticks
    path.write_bytes(PNG_HEADER)
    return path


@contextlib.contextmanager
def timeline_sketched() -> Iterator[None]:
    """Bundles written inside get :func:`lanes_only` for their timeline."""
    from prunecheck.sim.evidence import bundle  # not at import: tests watch imports

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bundle, "draw_timeline", lanes_only)
        yield
