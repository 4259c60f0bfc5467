"""What the search machine's rules draw, made cheap to draw again and again.

A search applies tens of thousands of events, and most rules draw a value
or two on the way: a pending call, how many chunks, which calls stream.
Two costs of Hypothesis's per-draw machinery were a sixth of a search's
time, and neither changes a choice:

- a strategy built anew at each draw is validated and has its properties
  (emptiness, reusable values) computed anew: :class:`Draws` builds each
  distinct strategy once per search and hands the same object back;
- ``data.draw`` records a label for printed notes (this search prints
  none) and compares the global random state before and after each draw
  (a check on strategies that use ``random``; ours do not): :func:`draw`
  asks the test case underneath directly, as Hypothesis's own stateful
  runner does.

The choices drawn, and so every run, counterexample and shrink of a given
seed, are the same either way.

 Hypothesis's pool of constants of the process's local modules is empty
while a search runs (:mod:`prunecheck.sim.support.seed_only`): the seed
alone decides the draws, and no process parses those modules for it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st

__all__ = ["Draws", "draw"]

T = TypeVar("T")


def draw(data: st.DataObject, strategy: st.SearchStrategy[T]) -> T:
    """``data.draw(strategy)``: the same choice, without the bookkeeping of
    printed notes (see the module's doc)."""
    underneath = getattr(data, "conjecture_data", None)
    if underneath is None:  # pragma: no cover - a Hypothesis without it
        return data.draw(strategy)
    value: T = underneath.draw(strategy)
    return value


class Draws:
    """The strategies of one search, each built once (by its arguments)."""

    __slots__ = ("_built",)

    def __init__(self) -> None:
        self._built: dict[Hashable, st.SearchStrategy[Any]] = {}

    def integers(self, low: int, high: int) -> st.SearchStrategy[int]:
        """``st.integers(low, high)``."""
        key = ("integers", low, high)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = st.integers(low, high)
        return found

    def one_of(self, ids: list[str]) -> st.SearchStrategy[str]:
        """``st.sampled_from(ids)``."""
        key = ("one_of", *ids)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = st.sampled_from(ids)
        return found

    def order(self, ids: list[str]) -> st.SearchStrategy[list[str]]:
        """``st.permutations(ids)``."""
        key = ("order", *ids)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = st.permutations(ids)
        return found

    def some_of(self, ids: list[str]) -> st.SearchStrategy[list[str]]:
        """One or more of ``ids``, each at most once (``st.lists`` of them)."""
        key = ("some_of", *ids)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = st.lists(
                st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True
            )
        return found

    def exactly(self, width: int, pool: Sequence[Any]) -> st.SearchStrategy[list[Any]]:
        """``width`` elements of ``pool``, repeats allowed (one ``pool`` per search)."""
        key = ("exactly", width)
        found = self._built.get(key)
        if found is None:
            found = self._built[key] = st.lists(
                st.sampled_from(pool), min_size=width, max_size=width
            )
        return found
