"""Fewer full garbage collections while a check runs.

A check allocates millions of short-lived objects (Hypothesis's choice
sequences, the model's states and events) beside a few long-lived ones
that keep growing (Hypothesis's tree of the runs it tried, the policy's
answer memo).  With CPython's default thresholds (700, 10, 10) the oldest
generation is collected every ~70,000 net allocations, and each such
collection walks every live container: in a default ``check`` that was
about a twentieth of its CPU time for nothing (the young generations free
the cycles a check makes).  :func:`fewer_full_collections` raises the third
threshold while a block runs and puts the thresholds back after it.  It
changes when memory is freed, never what is computed.

>>> import gc
>>> before = gc.get_threshold()
>>> with fewer_full_collections():
...     gc.get_threshold()[2] >= FULL_EVERY
True
>>> gc.get_threshold() == before
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FULL_EVERY", "fewer_full_collections"]

#: Collections of the middle generation between two of the oldest.
FULL_EVERY = 1000


@contextmanager
def fewer_full_collections() -> Iterator[None]:
    """Collect the oldest generation at most every ``FULL_EVERY`` collections
    of the middle one inside the block (thresholds restored after it)."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], max(before[2], FULL_EVERY))
    try:
        yield
    finally:
        gc.set_threshold(*before)
