"""The commit-boundary predicate: the index's ``check_prune`` equals the
spec's ``check_prune_spec`` on generated contexts and random prune sets;
``check_clear`` and ``is_commit_boundary`` on hand-built contexts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import POLICY_NAMES, Scenario, scenarios

from prunecheck.model.boundary import (
    Violation,
    ViolationReason,
    check_clear,
    check_prune,
    is_commit_boundary,
)
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.gates import Gate
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState
from prunecheck.model.units import check_prune_spec

NONE_HEAVY = (Gate.NONE, Gate.NONE, Gate.NONE, Gate.REFERENCE, Gate.COMMIT, Gate.SPILL)
Found = set[tuple[ViolationReason, frozenset[str]]]


def index_violations(state: RuntimeState, prune: list[str]) -> Found:
    ctx = state.context
    return {(v.reason, frozenset(ctx.members(v.unit_id))) for v in check_prune(ctx, prune)}


def spec_violations(state: RuntimeState, prune: list[str]) -> Found:
    return check_prune_spec(list(state.context), state.batch_of_call(), state.pending, prune)


def _prune_sets(data: st.DataObject, state: RuntimeState) -> list[list[str]]:
    ids = state.context.ids()
    if not ids:
        return []
    sets = [data.draw(st.lists(st.sampled_from(ids), max_size=8), label="prune set")]
    # Whole units (and a unit minus one message) are where the interesting answers are.
    units = [list(members) for _, members in state.context.units()]
    chosen = data.draw(st.lists(st.sampled_from(units), max_size=3), label="units")
    whole = [m for unit in chosen for m in unit]
    sets += [whole, whole[1:]]
    return sets


def run_checking(scenario: Scenario, data: st.DataObject) -> None:
    state = scenario.run_state()
    for i, event in enumerate(scenario.events):
        apply(state, event)
        for prune in _prune_sets(data, state):
            index, spec = index_violations(state, prune), spec_violations(state, prune)
            assert index == spec, (
                f"after step {i} ({event.kind}), prune {prune}: "
                f"index {sorted(index)} != spec {sorted(spec)}"
            )


@given(scenarios(gates=NONE_HEAVY), st.data())
def test_check_prune_equals_spec_on_generated_contexts(
    scenario: Scenario, data: st.DataObject
) -> None:
    run_checking(scenario, data)


#: make test checks one policy of each action (clear, evict, summarize); the
#: generated-contexts test above draws every policy, and make test-all runs
#: this one for each of the others too.
FAST_POLICIES = ("clear_old_results", "lowest_salience", "summarize_prefix")
EACH_POLICY = [
    pytest.param(p, marks=() if p in FAST_POLICIES else pytest.mark.slow) for p in POLICY_NAMES
]


@pytest.mark.parametrize("policy", EACH_POLICY)
@settings(max_examples=20)
@given(data=st.data())
def test_check_prune_equals_spec_for_each_policy(policy: str, data: st.DataObject) -> None:
    run_checking(data.draw(scenarios(gates=(Gate.NONE,), policies=(policy,))), data)


@pytest.mark.slow
@settings(settings.get_profile("thorough"))
@given(scenarios(gates=NONE_HEAVY, max_events=80), st.data())
def test_check_prune_equals_spec_thorough(scenario: Scenario, data: st.DataObject) -> None:
    run_checking(scenario, data)


# ------------------------------------------------------------ hand-built cases
def _batch_context() -> Context:
    """m1 user; m2 issues c1, c2; m3 answers c1; c2 still streaming into m4."""
    ctx = Context()
    ctx.append(Message("m1", Role.USER, 10, 1, 0.0, unit_id="m1"))
    ctx.append(Message("m2", Role.ASSISTANT, 5, 1, 1.0, tool_calls=("c1", "c2"), unit_id="m2"))
    ctx.append(Message("m3", Role.TOOL, 9, 1, 2.0, call_id="c1", unit_id="m2"))
    ctx.append(Message("m4", Role.TOOL, 4, 1, 3.0, call_id="c2", closed=False, unit_id="m2"))
    ctx.mark_pending("m2", "c2")
    return ctx


def test_whole_closed_unit_is_valid() -> None:
    assert check_prune(_batch_context(), ["m1"]) == ()
    assert check_prune(_batch_context(), ["m1", "nope"]) == ()  # unknown ids are ignored


def test_split_open_and_pending_are_reported_in_order() -> None:
    found = check_prune(_batch_context(), ["m4", "m2"])
    assert found == (
        Violation(ViolationReason.SPLIT_UNIT, "m2", ("m3",)),
        Violation(ViolationReason.OPEN_MESSAGE, "m2", ("m4",)),
        Violation(ViolationReason.PENDING_UNIT, "m2", ("c2",)),
    )
    assert [v.describe() for v in found] == [
        "splits unit m2: keeps m3",
        "touches open (streaming) message m4 of unit m2",
        "touches unit m2 while call c2 is pending",
    ]


def test_whole_unit_with_a_pending_call_is_still_invalid() -> None:
    found = check_prune(_batch_context(), ["m2", "m3", "m4"])
    assert [v.reason for v in found] == [ViolationReason.OPEN_MESSAGE, ViolationReason.PENDING_UNIT]


def test_check_clear() -> None:
    ctx = _batch_context()
    assert check_clear(ctx, "m1") == ()
    assert [v.reason for v in check_clear(ctx, "m4")] == [
        ViolationReason.OPEN_MESSAGE,
        ViolationReason.PENDING_UNIT,
    ]
    assert [v.reason for v in check_clear(ctx, "m3")] == [ViolationReason.PENDING_UNIT]
    assert check_clear(ctx, "m99") == ()
    ctx.resolve("m2", "c2")
    ctx.update(Message("m4", Role.TOOL, 6, 1, 3.0, call_id="c2", unit_id="m2"))
    assert check_clear(ctx, "m3") == check_clear(ctx, "m4") == ()


def test_is_commit_boundary() -> None:
    ctx = _batch_context()
    assert not is_commit_boundary(ctx)
    ctx.update(Message("m4", Role.TOOL, 6, 1, 3.0, call_id="c2", unit_id="m2"))
    assert not is_commit_boundary(ctx)  # closed, but c2 is still pending
    ctx.resolve("m2", "c2")
    assert is_commit_boundary(ctx)
    assert is_commit_boundary(Context())


def test_hand_contexts_agree_with_spec() -> None:
    ctx = _batch_context()
    boc = {"c1": "m2", "c2": "m2"}
    for prune in (["m1"], ["m2"], ["m3", "m4"], ["m1", "m2", "m3", "m4"], []):
        index = {(v.reason, frozenset(ctx.members(v.unit_id))) for v in check_prune(ctx, prune)}
        assert index == check_prune_spec(list(ctx), boc, {"c2"}, prune)
