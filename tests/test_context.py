"""The context and its unit index: order by unit block, O(1) bookkeeping
(used tokens, open messages, pending calls per unit) held equal to a
recount on every generated runtime."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from strategies import Scenario, scenarios

from prunecheck.model.context import Context, Message, Role
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState


def msg(
    mid: str, role: Role = Role.USER, tokens: int = 10, unit: str | None = None, **kw: Any
) -> Message:
    return Message(mid, role, tokens, 1, 0.0, unit_id=unit or mid, **kw)


def batch_ctx() -> Context:
    ctx = Context()
    ctx.append(msg("m1"))
    ctx.append(msg("m2", Role.ASSISTANT, 5, tool_calls=("c1", "c2")))
    ctx.append(msg("m3", Role.USER, 7))
    ctx.append(msg("m4", Role.TOOL, 9, "m2", call_id="c1"))
    ctx.append(msg("m5", Role.TOOL, 4, "m2", call_id="c2", closed=False))
    ctx.mark_pending("m2", "c2")
    return ctx


def test_results_join_their_batch_block_even_after_a_user_message() -> None:
    ctx = batch_ctx()
    assert ctx.ids() == ["m1", "m2", "m4", "m5", "m3"]
    assert [m.id for m in ctx] == ctx.ids()
    assert [m.id for m in reversed(ctx)] == ["m3", "m5", "m4", "m2", "m1"]
    assert list(ctx.units()) == [("m1", ("m1",)), ("m2", ("m2", "m4", "m5")), ("m3", ("m3",))]
    assert ctx.used == 35 and len(ctx) == 5 and "m4" in ctx and "m9" not in ctx
    assert ctx.open_ids() == ("m5",) and ctx.has_open()
    assert ctx.pending_in("m2") == {"c2"} and ctx.pending_units() == ("m2",)
    assert ctx.get("m9") is None and ctx["m3"].tokens == 7


def test_update_closes_and_resizes() -> None:
    ctx = batch_ctx()
    ctx.update(msg("m5", Role.TOOL, 14, "m2", call_id="c2"))
    assert ctx.used == 45 and not ctx.has_open()
    ctx.resolve("m2", "c2")
    assert not ctx.has_pending() and ctx.pending_in("m2") == frozenset()
    ctx.resolve("m2", "c2")  # resolving twice is harmless
    with pytest.raises(ValueError, match="cannot change unit"):
        ctx.update(msg("m5", Role.TOOL, 14, "m1"))


def test_remove_keeps_the_rest_of_a_unit_in_place() -> None:
    ctx = batch_ctx()
    removed = ctx.remove(["m2", "m1"])
    assert [m.id for m in removed] == ["m2", "m1"]
    assert ctx.ids() == ["m4", "m5", "m3"] and ctx.used == 20
    assert ctx.members("m2") == ("m4", "m5") and ctx.has_unit("m2")
    assert not ctx.has_unit("m1") and ctx.members("m1") == ()
    ctx.remove(["m5"])
    assert ctx.open_ids() == ()
    ctx.append(msg("m6", Role.TOOL, 3, "m2", call_id="c2"))  # re-appended into its block
    assert ctx.ids() == ["m4", "m6", "m3"]
    with pytest.raises(KeyError):
        ctx.remove(["m1"])


def test_append_rejects_a_duplicate_id() -> None:
    ctx = batch_ctx()
    with pytest.raises(ValueError, match="already in the context"):
        ctx.append(msg("m3"))


def test_summarize_whole_units_takes_the_place_of_the_first() -> None:
    ctx = batch_ctx()
    ctx.update(msg("m5", Role.TOOL, 4, "m2", call_id="c2"))
    removed = ctx.summarize(["m4", "m2", "m5"], msg("m9", tokens=2, summary_of=("m2",)))
    assert [m.id for m in removed] == ["m2", "m4", "m5"]
    assert ctx.ids() == ["m1", "m9", "m3"] and ctx.used == 10 + 2 + 7
    assert list(ctx.units())[1] == ("m9", ("m9",))


def test_summarize_part_of_a_unit_goes_just_before_what_is_left() -> None:
    ctx = batch_ctx()
    ctx.summarize(["m1", "m4"], msg("m9", tokens=1))
    assert ctx.ids() == ["m9", "m2", "m5", "m3"]
    ctx.summarize(["m2"], msg("m10", tokens=1))
    assert ctx.ids() == ["m9", "m10", "m5", "m3"]
    ctx.append(msg("m11"))
    assert ctx.ids()[-1] == "m11"
    with pytest.raises(ValueError, match="at least one message"):
        ctx.summarize(["m99"], msg("m12"))


def test_copy_is_independent() -> None:
    ctx = batch_ctx()
    twin = ctx.copy()
    twin.remove(["m4"])
    twin.resolve("m2", "c2")
    twin.update(msg("m5", Role.TOOL, 1, "m2", call_id="c2"))
    assert ctx.ids() == ["m1", "m2", "m4", "m5", "m3"] and ctx.pending_in("m2") == {"c2"}
    assert ctx.open_ids() == ("m5",) and ctx.used == 35
    assert twin.used == 35 - 9 - 3 and twin == twin.copy()


def recount(state: RuntimeState) -> None:
    ctx = state.context
    messages = list(ctx)
    assert ctx.used == sum(m.tokens for m in messages)
    assert len(ctx) == len(messages) == len(set(ctx.ids()))
    assert set(ctx.open_ids()) == {m.id for m in messages if not m.closed}
    pending: dict[str, set[str]] = {}
    for cid in state.pending:
        pending.setdefault(state.calls[cid].batch, set()).add(cid)
    assert {u: set(ctx.pending_in(u)) for u in ctx.pending_units()} == pending
    seen: list[str] = []
    for unit, ids in ctx.units():  # blocks are contiguous and never repeat
        assert unit not in seen and ids
        seen.append(unit)


@given(scenarios())
def test_index_bookkeeping_equals_a_recount(scenario: Scenario) -> None:
    state = scenario.run_state()
    for event in scenario.events:
        apply(state, event)
        recount(state)
