"""The search's tripwire: its time limit drops after a hang, told by the
error's type (PolicyTimeout), not by its words."""

from __future__ import annotations

import pytest

from prunecheck.model.context import Context, Message, Role
from prunecheck.model.errors import PolicyError, PolicyTimeout
from prunecheck.model.policies import ContextView, FunctionPolicy
from prunecheck.sim.subjects.tripwire import AFTER_HANG, Tripwire, search_error


def _view() -> ContextView:
    ctx = Context()
    ctx.append(Message("m1", Role.USER, 5, 1, 0.0, unit_id="m1"))
    return ContextView(ctx, pending_calls=frozenset(), budget=1, now=0.0, turn=1)


def _sleeps(view: ContextView, need: int) -> list[str]:
    import time

    time.sleep(30)
    return []


def test_after_a_hang_the_limit_drops_to_after_hang() -> None:
    wire = Tripwire(FunctionPolicy(_sleeps, "sleepy"), 0.2)
    with pytest.raises(PolicyTimeout) as first:
        wire.select(_view(), 1)
    assert "within 0.2 s" in first.value.rule and wire.first is first.value
    with pytest.raises(PolicyTimeout) as second:
        wire.select(_view(), 1)
    assert f"within {AFTER_HANG:g} s" in second.value.rule
    assert wire.first is first.value  # the first error, with the user's limit, is kept


def test_words_that_look_like_a_hang_do_not_trip_the_wire() -> None:
    calls: list[int] = []

    def words_then_sleep(view: ContextView, need: int) -> list[str]:
        calls.append(1)
        if len(calls) == 1:
            raise PolicyError("policy 'p'", "did not return within reason.")
        return _sleeps(view, need)

    wire = Tripwire(FunctionPolicy(words_then_sleep, "p"), 0.2)
    with pytest.raises(PolicyError) as first:
        wire.select(_view(), 1)
    assert not isinstance(first.value, PolicyTimeout)
    with pytest.raises(PolicyTimeout) as second:
        wire.select(_view(), 1)
    assert "within 0.2 s" in second.value.rule  # the full limit: no hang was seen


def test_search_error_names_the_shrunk_step_with_the_first_hangs_words() -> None:
    wire = Tripwire(FunctionPolicy(_sleeps, "sleepy"), 0.2)
    wire.first = PolicyTimeout("policy 'sleepy'", "did not return within 0.2 s.", "raise it.")
    shrunk = PolicyTimeout(
        "policy 'sleepy'", f"did not return within {AFTER_HANG:g} s.", "raise it.", 3
    )
    told = search_error(shrunk, wire)
    assert type(told) is PolicyTimeout and told.step == 3
    assert told.paragraph() == (
        "policy 'sleepy' at step 3: did not return within 0.2 s. Hint: raise it."
    )


def test_search_error_without_a_hang() -> None:
    wire = Tripwire(FunctionPolicy(_sleeps, "p"), 0.2)
    placed = PolicyError("policy 'p'", "raised KeyError.", "", 2)
    assert search_error(placed, wire) is placed  # no first error: the search's own
    wire.first = PolicyError("policy 'p'", "raised ValueError.")
    assert search_error(placed, wire) is placed  # placed, not a hang: the search's own
    unplaced = PolicyError("policy 'p'", "gave different answers.")
    assert search_error(unplaced, wire) is wire.first  # unplaced: the first error
