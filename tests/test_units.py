"""The unit relation: the networkx spec equals the context's index.

The properties run generated event sequences (every built-in policy, mostly
under gate ``none`` so that contexts hold orphans, cut units, cleared and
summarized messages, re-appended streams and retried batches) and compare,
after every step, :func:`units_spec` with the index's partition.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import POLICY_NAMES, Scenario, scenarios

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Message, Role
from prunecheck.model.events import (
    CallSpec,
    Effect,
    ExternalWrite,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.policies import FunctionPolicy
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState, initial_state
from prunecheck.model.units import unit_graph, units_spec

NONE_HEAVY = (Gate.NONE, Gate.NONE, Gate.NONE, Gate.REFERENCE, Gate.COMMIT, Gate.SPILL)


def index_partition(state: RuntimeState) -> set[frozenset[str]]:
    return {frozenset(ids) for _, ids in state.context.units()}


def spec_partition(state: RuntimeState) -> set[frozenset[str]]:
    return set(units_spec(list(state.context), state.batch_of_call()))


def assert_spec_equals_index(state: RuntimeState, where: str) -> None:
    spec, index = spec_partition(state), index_partition(state)
    assert spec == index, (
        f"{where}: spec-only units {sorted(map(sorted, spec - index))}, "
        f"index-only units {sorted(map(sorted, index - spec))}"
    )
    for unit, ids in state.context.units():
        assert all(state.context[m].unit_id == unit for m in ids)
        assert state.context.members(unit) == ids


def run_checking(scenario: Scenario) -> RuntimeState:
    state = scenario.run_state()
    for i, event in enumerate(scenario.events):
        apply(state, event)
        assert_spec_equals_index(state, f"after step {i} ({event.kind})")
    return state


@given(scenarios(gates=NONE_HEAVY))
def test_spec_partition_equals_index_after_every_step(scenario: Scenario) -> None:
    run_checking(scenario)


#: make test checks one policy of each action (clear, evict, summarize); the
#: partition test above draws every policy, and make test-all runs this one
#: for each of the others too.
FAST_POLICIES = ("clear_old_results", "lowest_salience", "summarize_prefix")
EACH_POLICY = [
    pytest.param(p, marks=() if p in FAST_POLICIES else pytest.mark.slow) for p in POLICY_NAMES
]


@pytest.mark.parametrize("policy", EACH_POLICY)
@settings(max_examples=40)
@given(data=st.data())
def test_spec_equals_index_for_each_policy_under_gate_none(
    policy: str, data: st.DataObject
) -> None:
    run_checking(data.draw(scenarios(gates=(Gate.NONE,), policies=(policy,))))


@pytest.mark.slow
@settings(settings.get_profile("thorough"))
@given(scenarios(gates=NONE_HEAVY, max_events=80))
def test_spec_equals_index_thorough(scenario: Scenario) -> None:
    run_checking(scenario)


# ------------------------------------------------------------ hand-built cases
def _evict(ids: list[str]) -> FunctionPolicy:
    return FunctionPolicy(
        lambda view, need: [i for i in ids if i in {m.id for m in view.messages}], "fixed"
    )


def test_batch_results_stay_one_unit_after_their_call_is_evicted() -> None:
    state = initial_state(RuntimeConfig(budget=100, hard_ceiling=1000), _evict(["m2"]))
    apply(state, UserMessage(10))
    apply(state, IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 20))
    apply(state, ResultChunk("c1", 80))  # 110 > 100: m2 (the batch turn) is evicted
    apply(state, ResultChunk("c2", 5))
    assert "m2" not in state.context
    assert index_partition(state) == {frozenset({"m1"}), frozenset({"m3", "m4"})}
    assert spec_partition(state) == index_partition(state)


def test_retried_batch_is_a_new_unit() -> None:
    state = initial_state(RuntimeConfig(budget=100, hard_ceiling=1000), _evict(["m2"]))
    for event in (
        UserMessage(10),
        IssueBatch((CallSpec("read_file", "a"),), 20),
        ExternalWrite("a"),
        ResultChunk("c1", 80),
        Invoke(),
        Retry(),
    ):
        apply(state, event)
    assert state.calls["c2"].retry_of == "c1" and state.calls["c2"].batch == "m4"
    assert {"m4", "m5"} in [set(u) for u in spec_partition(state)]
    assert spec_partition(state) == index_partition(state)


def test_units_spec_orders_units_by_first_message() -> None:
    ms = [
        Message("m3", Role.USER, 1, 1, 0.0),
        Message("m1", Role.ASSISTANT, 1, 1, 0.0, tool_calls=("c1", "c2")),
        Message("m9", Role.TOOL, 1, 1, 0.0, call_id="c2"),
        Message("m2", Role.TOOL, 1, 1, 0.0, call_id="c1"),
    ]
    assert units_spec(ms, {"c1": "m1", "c2": "m1"}) == [
        frozenset({"m3"}),
        frozenset({"m1", "m9", "m2"}),
    ]


def test_unit_graph_links_results_of_one_batch_through_the_batch_node() -> None:
    ms = [
        Message("m5", Role.TOOL, 1, 1, 0.0, call_id="c1"),
        Message("m6", Role.TOOL, 1, 1, 0.0, call_id="c2"),
        Message("m7", Role.TOOL, 1, 1, 0.0, call_id="c9"),
    ]
    graph = unit_graph(ms, {"c1": "m4", "c2": "m4", "c9": "m8"})
    assert graph.has_edge(("call", "c1"), ("batch", "m4"))
    assert units_spec(ms, {"c1": "m4", "c2": "m4", "c9": "m8"}) == [
        frozenset({"m5", "m6"}),
        frozenset({"m7"}),
    ]


def test_summary_and_user_messages_are_units_of_their_own() -> None:
    ms = [
        Message("m1", Role.USER, 1, 1, 0.0, summary_of=("m2", "m3")),
        Message("m4", Role.ASSISTANT, 1, 1, 0.0),
        Message("m5", Role.SYSTEM, 1, 1, 0.0),
    ]
    assert units_spec(ms, {}) == [frozenset({"m1"}), frozenset({"m4"}), frozenset({"m5"})]


def test_write_effect_is_irrelevant_to_units() -> None:
    state = initial_state(RuntimeConfig(), _evict([]))
    apply(state, IssueBatch((CallSpec("write_file", "a", Effect.WRITE),), 5))
    apply(state, ResultChunk("c1", 5, last=False))
    apply(state, ResultChunk("c1", 5))
    assert index_partition(state) == spec_partition(state) == {frozenset({"m1", "m2"})}
