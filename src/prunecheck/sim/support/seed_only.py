"""Searches whose draws depend on the seed alone, not on what the process imported.

Hypothesis now and then draws a value from a pool of constants it collects
from every *local* module the process has loaded (files outside the
standard library and site-packages: the user's policy, a test file, and
prunecheck itself when installed in editable mode), re-reading the pool
whenever more modules are loaded.  The same seed then gives another
counterexample under pytest than from the command line, in a fresh folder
than in a checkout, in an editable install than from a wheel; and
Hypothesis writes its cache of those constants (``.hypothesis/constants/``)
into the user's working folder.

:func:`seed_only` empties that pool while prunecheck's own searches run, so
a seed alone decides every draw (Hypothesis's built-in constants stay: they
are the same in every process).  A Hypothesis without the pool: nothing to
do.  Reentrant and thread-safe: the pool comes back when the last search
running in the process ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["seed_only"]

_lock = threading.Lock()
_depth = 0
_saved: tuple[Callable[[], Any], Any] | None = None


def _providers() -> Any:
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the module
        return None
    wanted = ("_get_local_constants", "CONSTANTS_CACHE", "Constants")
    return providers if all(hasattr(providers, n) for n in wanted) else None


@contextmanager
def seed_only() -> Iterator[None]:
    """Run the block with Hypothesis's pool of local constants empty.

    Examples
    --------
    >>> with seed_only():
    ...     pass  # a search here draws the same values in any process
    """
    global _depth, _saved
    providers = _providers()
    if providers is None:  # pragma: no cover - a Hypothesis without the pool
        yield
        return
    with _lock:
        if _depth == 0:
            empty = providers.Constants()
            _saved = (providers._get_local_constants, providers.CONSTANTS_CACHE)
            providers._get_local_constants = lambda: empty
            # A fresh cache of the values each kind of draw permits: the old one
            # (one per thread) holds values computed from the full pool.
            providers.CONSTANTS_CACHE = type(_saved[1])(1024)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                providers._get_local_constants, providers.CONSTANTS_CACHE = _saved
                _saved = None
