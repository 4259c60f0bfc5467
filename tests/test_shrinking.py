"""The one shrinker (sim/drivers/shrinking.py): what ddmin promises any
caller, on sequences of small integers and predicates Hypothesis draws.

* the result still fails (``attempt`` said so, or it is the input);
* at the fixpoint it is 1-minimal: no single item after ``keep`` can go;
* a monotone failure ("these items are all there") shrinks to exactly them;
* ``limit`` bounds the attempts, ``stop`` ends the pass, ``keep`` is kept;
* ``windows`` deletes a pair that only goes together (single deletions cannot);
* the same items and answers give the same result and the same attempts;
* both schedules ask exactly what the hand-written shrinkers they replaced
  asked, in the same order (oracles at the end of this file).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prunecheck.sim.drivers.shrinking import Reduction, ddmin, removing

ITEMS = st.lists(st.integers(0, 30), min_size=1, max_size=24)
WINDOWS = st.sampled_from([None, (1,), (2, 1), (4, 3, 2, 1)])


def _needs(required: frozenset[int]):  # type: ignore[no-untyped-def]
    """Fails while every value of ``required`` is present (monotone)."""
    return lambda xs: required <= set(xs)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[int], frozenset[int]]:
    items = draw(ITEMS)
    required = frozenset(draw(st.lists(st.sampled_from(items), min_size=1, max_size=4)))
    return items, required


def _one_minimal(result: Sequence[int], fails, keep: int = 0) -> bool:  # type: ignore[no-untyped-def]
    return not any(
        fails([x for q, x in enumerate(result) if q != p]) for p in range(keep, len(result))
    )


@given(cases(), WINDOWS)
def test_the_result_still_fails_and_is_one_minimal_at_the_fixpoint(
    case: tuple[list[int], frozenset[int]], windows: tuple[int, ...] | None
) -> None:
    items, required = case
    fails = _needs(required)
    done = ddmin(items, removing(fails), windows=windows)
    assert fails(done.items)
    assert done.fixpoint and done.stopped == "fixpoint"
    if not windows or 1 in windows:
        assert _one_minimal(done.items, fails)
    if not windows or 1 in windows:
        # a monotone failure keeps exactly one of each required value
        assert sorted(done.items) == sorted(required)


@given(cases(), WINDOWS, st.integers(0, 12))
def test_a_limit_bounds_the_attempts_and_the_same_input_shrinks_the_same(
    case: tuple[list[int], frozenset[int]], windows: tuple[int, ...] | None, limit: int
) -> None:
    items, required = case
    seen: list[tuple[tuple[int, ...], range]] = []
    fails = _needs(required)

    def attempt(xs: Sequence[int], drop: range) -> Sequence[int] | None:
        seen.append((tuple(xs), drop))
        return removing(fails)(xs, drop)

    first = ddmin(items, attempt, windows=windows, limit=limit)
    asked = list(seen)
    assert first.tries == len(asked) <= limit
    assert fails(first.items)
    if not first.fixpoint:
        assert first.stopped == "limit" and first.tries == limit
    seen.clear()
    assert ddmin(items, attempt, windows=windows, limit=limit) == first
    assert seen == asked


@given(cases(), st.integers(0, 5), WINDOWS)
def test_the_kept_head_stays_and_the_rest_is_one_minimal(
    case: tuple[list[int], frozenset[int]], keep: int, windows: tuple[int, ...] | None
) -> None:
    items, required = case
    fails = _needs(required)
    done = ddmin(items, removing(fails), keep=keep, windows=windows)
    assert list(done.items[:keep]) == items[:keep]
    if not windows or 1 in windows:
        assert _one_minimal(done.items, fails, keep)


@given(ITEMS)
def test_single_items_only_at_the_finest_granularity(items: list[int]) -> None:
    widths: set[int] = set()

    def attempt(xs: Sequence[int], drop: range) -> list[int] | None:
        widths.add(len(drop))
        return None

    ddmin(items, attempt, parts=len(items))
    assert widths <= {1}


def test_an_attempt_may_cut_more_than_asked_and_a_result_no_shorter_is_a_no() -> None:
    def cut_at_seven(xs: Sequence[int], drop: range) -> list[int] | None:
        kept = [x for p, x in enumerate(xs) if p not in drop]
        return kept[: kept.index(7) + 1] if 7 in kept else None

    assert ddmin(list(range(12)), cut_at_seven).items == (7,)
    same = ddmin([1, 2, 3], lambda xs, drop: list(xs))
    assert same.items == (1, 2, 3) and same.fixpoint and same.tries > 0


def test_stop_ends_the_pass_where_it_is() -> None:
    asked = iter([False, False, True])
    done = ddmin(list(range(8)), removing(lambda xs: 5 in xs), stop=lambda: next(asked))
    assert (done.fixpoint, done.stopped, done.tries) == (False, "stop", 2)
    assert 5 in done.items and len(done.items) < 8


def test_windows_delete_a_pair_that_only_goes_together() -> None:
    # 3 and 4 are a turn: either both stay or both go; 9 is the failure
    def fails(xs: Sequence[int]) -> bool:
        return 9 in xs and (3 in xs) == (4 in xs)

    items = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert ddmin(items, removing(fails), windows=(2, 1)).items == (9,)
    halved = ddmin(items, removing(fails), parts=len(items)).items
    assert halved == (3, 4, 9)  # single deletions alone cannot split the turn


@pytest.mark.parametrize("items", [[], [1]])
def test_nothing_to_delete(items: list[int]) -> None:
    done = ddmin(items, removing(lambda xs: True))
    assert done == Reduction(tuple(items), 0, True, "fixpoint")


# --------------------------------------- the schedules committed results depend on
#
# The two schedules as the shrinkers wrote them before they shared this module
# (sim/api/minimal.py's _ddmin, sim/subjects/loops/search.py's minimize), kept here as
# oracles: the same attempts in the same order, so the same shrunk traces, loop
# schedules and replay counts as the reports and bundles committed before.


def _zeller_as_it_was(items: list[int], attempt, spent) -> tuple[list[int], bool]:  # type: ignore[no-untyped-def]
    parts = 2
    while len(items) > 1:
        size = max(1, -(-len(items) // parts))
        removed = False
        for start in range(0, len(items), size):
            if spent():
                return items, False
            drop = range(start, min(start + size, len(items)))
            if len(drop) >= len(items):
                continue
            got = attempt(items, drop)
            if got is not None and len(got) < len(items):
                items, removed = list(got), True
                break
        if removed:
            parts = max(parts - 1, 2)
        elif size == 1:
            return items, True
        else:
            parts = min(parts * 2, len(items))
    return items, True


def _windows_as_they_were(items: list[int], attempt, budget: int) -> list[int]:  # type: ignore[no-untyped-def]
    changed = True
    while changed and budget > 0:
        changed = False
        for width in (4, 3, 2, 1):
            i = len(items) - width
            while i >= 0 and budget > 0:
                budget -= 1
                got = attempt(items, range(i, i + width))
                if got is not None:
                    items, changed = list(got), True
                i = min(i, len(items) - width) - 1
    return items


def _recorded(fails, log: list[tuple[tuple[int, ...], range]]):  # type: ignore[no-untyped-def]
    def attempt(xs: Sequence[int], drop: range) -> Sequence[int] | None:
        log.append((tuple(xs), drop))
        return removing(fails)(xs, drop)

    return attempt


@given(cases(), st.integers(1, 60))
def test_halving_asks_what_the_trace_shrinker_asked(
    case: tuple[list[int], frozenset[int]], replays: int
) -> None:
    items, required = case
    fails = _needs(required)
    old: list[tuple[tuple[int, ...], range]] = []
    new: list[tuple[tuple[int, ...], range]] = []
    then = _zeller_as_it_was(list(items), _recorded(fails, old), lambda: len(old) >= replays)
    now = ddmin(items, _recorded(fails, new), stop=lambda: len(new) >= replays)
    assert (list(now.items), now.fixpoint) == then and new == old


@given(cases(), st.integers(0, 60))
def test_windows_ask_what_the_loop_search_asked(
    case: tuple[list[int], frozenset[int]], budget: int
) -> None:
    items, required = case
    fails = _needs(required)
    old: list[tuple[tuple[int, ...], range]] = []
    new: list[tuple[tuple[int, ...], range]] = []
    then = _windows_as_they_were(list(items), _recorded(fails, old), budget)
    now = ddmin(items, _recorded(fails, new), windows=(4, 3, 2, 1), limit=budget)
    assert list(now.items) == then and new == old
