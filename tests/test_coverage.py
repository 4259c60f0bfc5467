"""Coverage (issue 20): the model counts what a run exercised, and one
record sums it for every driver and names its gaps."""

from __future__ import annotations

import json
from pathlib import Path

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.events import (
    CallSpec,
    Event,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.policies import FunctionPolicy, Policy, builtin_policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import CounterName, initial_state
from prunecheck.sim.api.documents import SCHEMA_VERSION
from prunecheck.sim.drivers.coverage import Coverage, CoverageTally, Gap

ROOT = Path(__file__).resolve().parent.parent


def _noop() -> Policy:
    return FunctionPolicy(lambda view, need: [], "noop")


def _mid_batch_counters(policy: Policy) -> dict[str, int]:
    """A user message lands while a call's result is streaming and pushes
    the context over budget: a check with a call pending and a message open."""
    state = initial_state(RuntimeConfig(budget=100, hard_ceiling=200), policy, record=False)
    events: list[Event] = [
        SystemPrompt(10),
        UserMessage(30),
        IssueBatch((CallSpec("read_file", "a.py"),), 10),
        ResultChunk("c1", 40, last=False),  # open: 90 tokens, under budget
        UserMessage(30),  # mid-batch: 120 tokens, over budget
    ]
    for event in events:
        apply(state, event)
    return dict(state.counters)


def test_the_model_counts_pressure_live_state_and_proposals() -> None:
    recency = builtin_policy("recency")
    assert recency is not None
    counts = _mid_batch_counters(recency)
    assert counts[CounterName.MID_BATCH_MESSAGES] == 1
    assert counts[CounterName.PRESSED_CHECKS] == 1
    assert counts[CounterName.LIVE_PRESSED_CHECKS] == 1
    assert counts[CounterName.OPEN_CHECKS] == 2  # after the open chunk, after the user message
    assert counts[CounterName.PROPOSALS] == counts[CounterName.LIVE_PROPOSALS] == 1
    assert counts[CounterName.LIVE_PRUNES] == 1
    coverage = Coverage.from_counters(counts, placements=(CheckAt.AFTER_APPEND,))
    assert coverage.gaps() == () and not coverage.vacuous


def test_a_policy_that_proposes_nothing_is_a_gap() -> None:
    counts = _mid_batch_counters(_noop())
    assert counts[CounterName.POLICY_CALLS] == 1
    assert counts.get(CounterName.PROPOSALS, 0) == 0
    coverage = Coverage.from_counters(counts, placements=(CheckAt.AFTER_APPEND,))
    assert coverage.gaps() == (Gap.NO_PROPOSAL,)
    assert "proposed nothing in 1 call(s)" in Gap.NO_PROPOSAL.describe(coverage)


def test_gaps_of_live_state_only_where_the_runtime_can_check_with_it() -> None:
    # Checks before model calls never see a pending call or an open stream:
    # not vacuous for that, but a policy that never proposed anything still is.
    asked = {"checks": 5, "pressed_checks": 3, "policy_calls": 3, "proposals": 3}
    before = Coverage.from_counters(
        {**asked, "mid_batch_messages": 1}, placements=(CheckAt.BEFORE_INVOKE,)
    )
    assert before.gaps() == ()
    after = Coverage.from_counters(
        {**asked, "mid_batch_messages": 1}, placements=(CheckAt.AFTER_APPEND,)
    )
    assert after.gaps() == (Gap.NO_LIVE_PRESSURE, Gap.NO_OPEN_CHECK)
    nothing = Coverage.from_counters({"checks": 5}, placements=(CheckAt.BEFORE_INVOKE,))
    assert nothing.gaps() == (Gap.NO_PRESSURE, Gap.NO_MID_BATCH_MESSAGE)


def test_a_runtime_under_test_has_no_observed_proposals() -> None:
    counts = {"checks": 4, "pressed_checks": 2, "live_pressed_checks": 2, "open_checks": 1}
    counts |= {"mid_batch_messages": 1, "policy_calls": 2}
    coverage = Coverage.from_counters(counts, proposals_observed=False)
    assert coverage.proposals is None and not coverage.proposals_observed
    assert coverage.gaps() == ()  # judged on pressure, live state and interleavings only
    assert "not observed" in "\n".join(coverage.lines())
    observed = Coverage.from_counters(counts)
    assert observed.gaps() == (Gap.NO_PROPOSAL,)
    assert coverage.merge(observed).proposals == 0


def test_merge_sums_and_tally_counts_transitions() -> None:
    one = Coverage.from_counters(
        {"checks": 2, "orphaned_result": 1, "deferral": 2}, runs=1, events=7
    )
    both = one.merge(Coverage.from_counters({"checks": 1, "deferral": 1}, runs=2, events=3))
    assert (both.runs, both.events, both.checks) == (3, 10, 3)
    assert dict(both.incidents) == {"deferral": 3, "orphaned_result": 1}
    tally = CoverageTally((CheckAt.AFTER_APPEND,))
    tally.step({"checks": 1}, {"checks": 3, "pressed_checks": 1})
    tally.step({"checks": 3}, {"checks": 3})
    tally.run({"checks": 4, "proposals": 1}, events=9)
    frozen = tally.freeze()
    assert (frozen.runs, frozen.events, frozen.checks) == (3, 11, 6)
    assert (frozen.pressed, frozen.proposals) == (1, 1)
    assert frozen.placements == frozenset({CheckAt.AFTER_APPEND})


def test_the_json_form_is_the_schemas_coverage() -> None:
    schema = json.loads(
        (ROOT / "schemas" / f"verdict-{SCHEMA_VERSION}.json").read_text(encoding="utf-8")
    )
    spec = schema["$defs"]["coverage"]
    doc = Coverage.from_counters({"checks": 1}, placements=(CheckAt.AFTER_BATCH,)).to_json()
    assert set(doc) == set(spec["required"]) == set(spec["properties"])
    assert doc["vacuous"] is True and doc["placements"] == ["after_batch"]
    assert set(doc["gaps"]) <= set(spec["properties"]["gaps"]["items"]["enum"])
    assert set(spec["properties"]["gaps"]["items"]["enum"]) == {g.value for g in Gap}
