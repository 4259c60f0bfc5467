"""The search machine's cheap draws (issue 36): each strategy built once per
search, and a draw through the test case underneath that makes the very
choices ``data.draw`` makes."""

from __future__ import annotations

from hypothesis import given, seed, settings
from hypothesis import strategies as st

from prunecheck.sim.drivers.search_draws import Draws, draw


def test_each_strategy_is_built_once_by_its_arguments() -> None:
    made = Draws()
    assert made.integers(1, 3) is made.integers(1, 3)
    assert made.integers(1, 3) is not made.integers(1, 4)
    assert made.one_of(["c1", "c2"]) is made.one_of(["c1", "c2"])
    assert made.one_of(["c1", "c2"]) is not made.one_of(["c2", "c1"])
    assert made.some_of(["c1", "c2"]) is not made.order(["c1", "c2"])
    assert made.exactly(2, ("a", "b")) is made.exactly(2, ("a", "b"))


def _drawn(lean: bool) -> list[object]:
    made, got = Draws(), list[object]()

    @seed(3)
    @settings(max_examples=25, database=None, deadline=None)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        take = (lambda s: draw(data, s)) if lean else data.draw
        width = take(made.integers(1, 3))
        got.append(
            (
                width,
                take(made.exactly(width, ("a", "b", "c"))),
                take(made.some_of(["c1", "c2", "c3"])),
                take(made.order(["c1", "c2"])),
                take(made.one_of(["x", "y"])),
            )
        )

    run()
    return got


def test_a_lean_draw_makes_the_choices_data_draw_makes() -> None:
    plain = _drawn(lean=False)
    assert len(plain) == 25 and len(set(map(repr, plain))) > 1
    assert _drawn(lean=True) == plain
