"""Malformed events are refused with a GuardError naming the input and the
rule, and a refused event changes nothing."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from prunecheck.guard import CommitGuard, GuardError, ListGuard
from prunecheck.guard.errors import GuardConfigError
from prunecheck.model.policies import builtin_policy


def _guard() -> CommitGuard:
    """A context with a live batch (c1 pending, c2 complete), an evicted
    batch (c9, its unit gone) and a closed stream."""
    guard = CommitGuard(builtin_policy("unit_safe"), budget=1000)
    guard.message("u1", "user", 10)
    guard.calls("m2", ["c1", "c2"], 5, resources=["a.txt"])
    guard.result_complete("c2", 7)
    guard.calls("m9", ["c9"], 5)
    guard.removed(["m9"])
    guard.stream_opened("a3", "assistant", 3)
    guard.stream_closed("a3", 1)
    return guard


Event = Callable[[CommitGuard], object]

CASES: list[tuple[str, Event, str | None]] = [
    ("NaN tokens", lambda g: g.message("u5", "user", math.nan), "finite number"),
    ("infinite tokens", lambda g: g.result_chunk("c1", math.inf), "finite number"),
    ("negative tokens", lambda g: g.message("u5", "user", -1), "finite number"),
    ("tokens as text", lambda g: g.message("u5", "user", "12"), "finite number"),  # type: ignore[arg-type]
    ("bool tokens", lambda g: g.message("u5", "user", True), "finite number"),
    ("a None id", lambda g: g.message(None, "user", 1), "non-empty string"),  # type: ignore[arg-type]
    ("an empty id", lambda g: g.message("", "user", 1), "non-empty string"),
    ("an int call id", lambda g: g.calls("m5", [5], 1), "non-empty string"),  # type: ignore[list-item]
    ("a bare string of calls", lambda g: g.calls("m5", "c12", 1), "list of strings"),
    (
        "a bare string of resources",
        lambda g: g.calls("m5", ["c5"], 1, resources="a.txt"),
        "list of strings",
    ),
    ("one call twice in a batch", lambda g: g.calls("m5", ["c5", "c5"], 1), "more than once"),
    ("a call already live", lambda g: g.calls("m5", ["c1"], 1), "already issued"),
    ("an unknown role", lambda g: g.message("u5", "robot", 1), "is not one of"),
    ("a message id twice", lambda g: g.message("u1", "user", 1), "already in the context"),
    ("a result for a call never issued", lambda g: g.result_chunk("c7", 1), "never issued"),
    ("a chunk after the result completed", lambda g: g.result_chunk("c2", 1), "already complete"),
    ("completing a result twice", lambda g: g.result_complete("c2", 1), "already complete"),
    ("a chunk after its unit was evicted", lambda g: g.result_chunk("c9", 1), "left the context"),
    ("a stream chunk after the stream closed", lambda g: g.stream_chunk("a3", 1), "closed"),
    ("a stream chunk to a result", lambda g: g.stream_chunk("result:c2", 1), "closed"),
    ("a result under a second id", lambda g: g.result_chunk("c1", 1, "other"), None),
    ("removed() given a bare string", lambda g: g.removed("u1"), "list of message ids"),
]


@pytest.mark.parametrize(
    ("event", "rule"), [(e, r) for _, e, r in CASES], ids=[n for n, _, _ in CASES]
)
def test_a_malformed_event_is_refused_and_changes_nothing(event: Event, rule: str | None) -> None:
    guard = _guard()
    if rule is None:  # the first chunk fixes the id; a second id is refused
        guard.result_chunk("c1", 1, "r1")
        rule = "tracked as 'r1'"
    before = (guard.tracker.ctx.ids(), guard.used, guard.pending, guard.tracker.clock)
    with pytest.raises(GuardError, match=rule):
        event(guard)
    assert (guard.tracker.ctx.ids(), guard.used, guard.pending, guard.tracker.clock) == before


def test_a_result_for_a_removed_batch_is_no_longer_pending() -> None:
    guard = _guard()
    assert "c9" not in guard.pending  # the runtime removed m9: its call cannot land


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"budget": math.nan}, "positive, finite"),
        ({"budget": math.inf}, "positive, finite"),
        ({"budget": 0}, "positive"),
        ({"budget": 100, "hard_ceiling": math.nan}, "positive, finite"),
        ({"budget": 100, "hard_ceiling": 50}, "at least the budget"),
    ],
)
def test_bad_budgets_are_refused(kwargs: dict[str, float], rule: str) -> None:
    with pytest.raises(GuardConfigError, match=rule):
        CommitGuard(builtin_policy("recency"), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rule):  # still a ValueError, as before
        ListGuard(lambda m: m, format="openai", **kwargs)  # type: ignore[arg-type]


def test_float_token_counts_are_rounded_up() -> None:
    guard = CommitGuard(builtin_policy("recency"), budget=100)
    guard.message("u1", "user", 2.5)
    assert guard.used == 3
