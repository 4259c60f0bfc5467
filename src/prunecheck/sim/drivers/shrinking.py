"""The one shrinker: delta debugging over any failing sequence.

Every subject's counterexample is a sequence — a trace's events, a search
run's events, a loop's schedule of steps — and Hypothesis has shrunk the
choices that made it.  :func:`ddmin` is the one pass after that, for every
subject: delete chunks of the sequence while it still fails the same way
(Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing
Input", TSE 2002).  Chunks start at halves; when no chunk can go they
halve again, down to single items; after a deletion the chunks grow back
one step.  Nothing here knows what an item is: the caller's ``attempt``
says whether a candidate still fails.

What a caller may say:

* ``attempt(items, drop)`` returns the sequence without the positions in
  ``drop`` if it still fails the same way, else None.  It may delete more
  than ``drop`` (what must go with it: a batch's results), change what it
  keeps (tokens moved onto a kept message), or cut the run at its first
  failure; a result no shorter than ``items`` counts as a no.
  :func:`removing` makes one from a plain predicate.
* ``keep``: leading items never deleted (a session's opening).
* ``parts``: the first granularity (2: halves; ``len(items)``: single
  items only, as a polish does).
* ``windows``: instead of halving, windows of these widths, each width's
  from the last window to the first, again while any deletion helped (a
  loop's turn — a user message and its reply — goes in one window).
* ``limit``: attempts at most, a count so that a seed always gives the same
  answer; ``stop``: a callable asked before each attempt (a replay count a
  caller keeps, a deadline).

:class:`Reduction` says which bound was reached: ``fixpoint`` (no chunk,
down to single items, can go: 1-minimal), ``"limit"`` or ``"stop"``.

Examples
--------
>>> fails = lambda xs: 3 in xs and 7 in xs
>>> ddmin(list(range(10)), removing(fails)).items
(3, 7)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["Attempt", "Reduction", "ddmin", "removing"]

T = TypeVar("T")

#: The caller's trial: the sequence without ``drop`` if it still fails, else None.
Attempt = Callable[[Sequence[T], range], Sequence[T] | None]


@dataclass(frozen=True, slots=True)
class Reduction(Generic[T]):
    """What :func:`ddmin` reached.

    Attributes
    ----------
    items : tuple
        The shortest failing sequence found.
    tries : int
        Attempts made.
    fixpoint : bool
        No chunk tried, down to single items, could go: 1-minimal.
    stopped : str
        ``"fixpoint"``, ``"limit"`` (``limit`` attempts made) or ``"stop"``
        (the caller's ``stop`` said so).
    """

    items: tuple[T, ...]
    tries: int
    fixpoint: bool
    stopped: str


def removing(fails: Callable[[Sequence[T]], bool]) -> Attempt[T]:
    """An ``attempt`` that deletes exactly ``drop`` and asks ``fails``."""

    def attempt(items: Sequence[T], drop: range) -> Sequence[T] | None:
        candidate = [item for p, item in enumerate(items) if p not in drop]
        return candidate if fails(candidate) else None

    return attempt


class _Pass(Generic[T]):
    """One pass's state: the current items and the bounds spent."""

    def __init__(
        self,
        items: Sequence[T],
        attempt: Attempt[T],
        limit: int | None,
        stop: Callable[[], bool] | None,
    ) -> None:
        self.items, self.attempt, self.limit, self.stop = tuple(items), attempt, limit, stop
        self.tries = 0
        self.stopped = ""

    def spent(self) -> bool:
        if self.limit is not None and self.tries >= self.limit:
            self.stopped = "limit"
        elif self.stop is not None and self.stop():
            self.stopped = "stop"
        return bool(self.stopped)

    def delete(self, start: int, width: int) -> bool:
        """Try deleting ``width`` items from ``start``; keep the result if shorter."""
        self.tries += 1
        got = self.attempt(self.items, range(start, start + width))
        if got is None or len(got) >= len(self.items):
            return False
        self.items = tuple(got)
        return True

    def done(self, fixpoint: bool) -> Reduction[T]:
        return Reduction(self.items, self.tries, fixpoint, self.stopped or "fixpoint")


def ddmin(
    items: Sequence[T],
    attempt: Attempt[T],
    *,
    keep: int = 0,
    parts: int = 2,
    windows: Sequence[int] | None = None,
    limit: int | None = None,
    stop: Callable[[], bool] | None = None,
) -> Reduction[T]:
    """Delete chunks of ``items`` while ``attempt`` says it still fails.

    ``items`` is taken to fail already (the caller ran it).  See the
    module's doc for the parameters; the same items and answers always give
    the same result.
    """
    run = _Pass(items, attempt, limit, stop)
    if windows is not None:
        return _windows(run, tuple(windows), keep)
    return _halving(run, keep, parts)


def _halving(run: _Pass[T], keep: int, parts: int) -> Reduction[T]:
    """Zeller's schedule: chunks of ``1/parts`` of the deletable items."""
    while len(run.items) > max(keep, 1):
        free = len(run.items) - keep
        size = max(1, -(-free // parts))
        removed = False
        for start in range(keep, len(run.items), size):
            if run.spent():
                return run.done(False)
            width = min(size, len(run.items) - start)
            if width >= len(run.items):
                continue  # never everything
            if run.delete(start, width):
                removed = True
                break
        if removed:
            parts = max(parts - 1, 2)
        elif size == 1:
            return run.done(True)
        else:
            parts = min(parts * 2, free)
    return run.done(True)


def _windows(run: _Pass[T], widths: tuple[int, ...], keep: int) -> Reduction[T]:
    """Each width's windows from the last to the first, again while any helped."""
    changed = True
    while changed:
        changed = False
        for width in widths:
            start = len(run.items) - width
            while start >= keep:
                if run.spent():
                    return run.done(False)
                if run.delete(start, width):
                    changed = True
                start = min(start, len(run.items) - width) - 1
    return run.done(True)
