"""prunecheck.guard.CommitGuard: the decision procedure, runtime side."""

from __future__ import annotations

import pytest

from prunecheck.guard import (
    CommitGuard,
    Deferral,
    GuardError,
    HardCeilingExceeded,
    SpillStore,
)
from prunecheck.guard.trimmers import Trimmer
from prunecheck.model.policies import builtin_policy


def _guard(
    policy: str = "lowest_salience",
    budget: int = 100,
    ceiling: int = 150,
    store: SpillStore | None = None,
) -> CommitGuard:
    return CommitGuard(builtin_policy(policy), budget=budget, hard_ceiling=ceiling, store=store)


def test_defers_while_a_call_is_pending_and_never_asks_the_trimmer() -> None:
    asked = []

    def greedy(view: object, need: int) -> list[str]:
        asked.append(need)
        return ["m2"]

    guard = CommitGuard(greedy, budget=100)
    guard.message("m1", "user", 60)
    guard.calls("m2", ["c1", "c2"], 10)
    guard.result_complete("c1", 50)
    plan = guard.check()
    assert plan.deferred is Deferral.PENDING_CALL and plan.is_empty() and asked == []
    guard.result_complete("c2", 5)
    plan = guard.check()
    assert asked == [25] and plan.deferred is None
    assert set(plan.evict) == {"m2", "result:c1", "result:c2"}  # grown to the whole unit
    assert plan.grown == ("m2",) and guard.used == 60


def test_shrinks_a_unit_that_holds_an_open_message_and_defers() -> None:
    guard = CommitGuard(
        lambda view, need: [m.id for m in view.messages if m.id in ("m1", "m3")], budget=80
    )
    guard.message("m1", "user", 30)
    guard.message("m2", "user", 10)
    guard.stream_opened("m3", "assistant", 80)  # streaming
    plan = guard.check()
    assert plan.evict == ("m1",) and plan.shrunk == ("m3",)
    assert plan.deferred is Deferral.OPEN_MESSAGE and guard.used == 90
    guard.stream_closed("m3", 5)
    assert guard.check().evict == ("m3",) and guard.used == 10


def test_system_and_latest_user_message_are_protected() -> None:
    guard = CommitGuard(lambda view, need: ["s", "u2", "u1"], budget=10)
    guard.message("s", "system", 5)
    guard.message("u1", "user", 5)
    guard.message("u2", "user", 5)
    assert guard.check().evict == ("u1",)


def test_past_the_ceiling_it_fails_loudly_with_context_ceiling_and_pending() -> None:
    guard = _guard(budget=100, ceiling=150)
    guard.message("m1", "user", 60)
    guard.calls("m2", ["c1"], 10, resources=["a.txt"])
    guard.result_chunk("c1", 100)
    with pytest.raises(HardCeilingExceeded) as caught:
        guard.check()
    exc = caught.value
    assert (exc.used, exc.ceiling, exc.pending, exc.open) == (170, 150, ("c1",), ("result:c1",))
    assert exc.plan.deferred is Deferral.PENDING_CALL and exc.plan.is_empty()
    assert "170 tokens, over the hard ceiling of 150" in str(exc) and "c1 pending" in str(exc)


def test_spills_the_oldest_closed_unit_first_and_reinjects_it_on_the_same_resource() -> None:
    store = SpillStore(":memory:")
    guard = _guard("unit_safe", budget=100, ceiling=150, store=store)
    guard.message("m1", "user", 10, payload={"role": "user", "content": "hi"})
    guard.calls(
        "m2", ["c1"], 10, payload={"role": "assistant", "tool_calls": ["c1"]}, resources=["a.txt"]
    )
    guard.result_complete("c1", 60, payload={"role": "tool", "tool_call_id": "c1"})
    guard.message("m3", "user", 10)
    guard.calls("m4", ["c2"], 10, resources=["b.txt"])
    guard.result_chunk("c2", 70)  # pending: 170 > ceiling 150
    plan = guard.check()
    assert plan.deferred is Deferral.PENDING_CALL
    # the oldest closed units, until the excess over budget (70) is freed
    assert plan.spill == ("m1", "m2", "result:c1") and guard.spilled == ("m1", "m2")
    assert [u.unit for u in store.units(guard.conversation)] == ["m1", "m2"]  # committed first
    assert guard.used == 90
    guard.result_complete("c2")
    restored = guard.calls("m5", ["c3"], 10, resources=["a.txt"])
    assert [(r.unit, r.ids) for r in restored] == [("m2", ("m2", "result:c1"))]
    assert restored[0].payloads[1] == {"role": "tool", "tool_call_id": "c1"}
    assert store.count(guard.conversation) == 2  # deleted only at the next call
    plan = guard.check()  # 170 > 150 again with c3 pending: the next oldest goes
    assert plan.spill == ("m4", "result:c2") and guard.stats.reinjections == 1
    assert [u.unit for u in store.units(guard.conversation)] == ["m1", "m4"]
    assert guard.used == 90


def test_a_new_guard_on_the_same_file_knows_what_was_spilled(tmp_path: object) -> None:
    path = f"{tmp_path}/spill.db"
    guard = CommitGuard(
        builtin_policy("unit_safe"), budget=10, hard_ceiling=20, store=path, conversation="a"
    )
    guard.calls("m1", ["c1"], 5, payload=[1, 2], resources=["a.txt"])
    guard.result_complete("c1", 10)
    guard.message("m2", "user", 5)
    guard.calls("m3", ["c2"], 5, resources=["b.txt"])
    with pytest.raises(HardCeilingExceeded):
        guard.result_chunk("c2", 20) and guard.check()
        guard.check()
    again = CommitGuard(
        builtin_policy("unit_safe"), budget=10, hard_ceiling=20, store=path, conversation="a"
    )
    assert again.spilled == ("m1",)
    assert again.calls("m9", ["c9"], 1, resources=["a.txt"])[0].payloads[0] == [1, 2]


def test_list_function_trimmers_are_matched_by_identity() -> None:
    one, two, three = (
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
        {"role": "user", "content": "c"},
    )
    guard = CommitGuard(lambda messages: messages[-1:], format="openai", budget=10)
    guard.message("m1", "user", 6, one)
    guard.message("m2", "user", 6, two)
    guard.message("m3", "user", 6, three)
    assert guard.check().evict == ("m1", "m2")


def test_impossible_events_are_guard_errors() -> None:
    guard = _guard()
    with pytest.raises(GuardError, match="never issued"):
        guard.result_chunk("c9", 1)
    guard.message("m1", "user", 1)
    with pytest.raises(GuardError, match="already in the context"):
        guard.message("m1", "user", 1)
    with pytest.raises(GuardError, match="never issued"):
        guard.result_complete("c1")
    with pytest.raises(ValueError, match="at least the budget"):
        CommitGuard(builtin_policy("recency"), budget=10, hard_ceiling=5)


def test_the_package_exports_ten_names_and_the_old_ones_still_answer_with_a_warning() -> None:
    import prunecheck.guard as guard
    from prunecheck._deprecated import RemovedIn040Warning
    from prunecheck.guard import readers, store, trimmers

    assert len(guard.__all__) == 10
    for name, module in (("READERS", readers), ("SpilledUnit", store), ("as_trimmer", trimmers)):
        assert name not in guard.__all__
        with pytest.warns(RemovedIn040Warning, match=f"prunecheck.guard.{module.__name__[17:]}"):
            assert getattr(guard, name) is getattr(module, name)
    with pytest.raises(AttributeError):
        guard.NoSuchName  # noqa: B018


def _pruned_by(guard: CommitGuard) -> tuple[str, ...]:
    for mid, role, tokens in (("m1", "user", 60), ("m2", "assistant", 60), ("m3", "user", 10)):
        guard.message(mid, role, tokens, payload={"role": role, "content": mid})
    return guard.check().evict


def test_a_trimmer_assigned_after_construction_is_the_one_asked() -> None:
    asked: list[str] = []

    def old(view: object, need: int) -> list[str]:
        asked.append("old")
        return ["m1"]

    def new(view: object, need: int) -> list[str]:
        asked.append("new")
        return ["m2"]

    guard = CommitGuard(old, budget=100, hard_ceiling=200)
    before = guard.trimmer
    guard.trimmer = new
    assert guard.trimmer is not before and isinstance(guard.trimmer, Trimmer)  # read back wrapped
    assert _pruned_by(guard) == ("m2",) and asked == ["new"]


def test_an_assigned_list_function_is_read_with_the_guard_s_format() -> None:
    guard = CommitGuard(lambda messages: messages, format="openai", budget=100, hard_ceiling=200)
    guard.trimmer = lambda messages: messages[-1:]  # a list function, as the constructor's
    assert _pruned_by(guard) == ("m1", "m2")
    twin = guard.copy()
    twin.trimmer = lambda messages: messages  # a copy's trimmer is its own
    assert guard.trimmer is not twin.trimmer
