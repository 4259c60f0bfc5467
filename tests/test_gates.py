"""Gates never apply an invalid prune, checked independently with the spec.

With ``check_at=before_invoke`` every prune happens at the start of a step
(an explicit budget check, or an invocation), so the state copied before the
step is the state the gate decided on.  The ids the step removed are read
from its notes (EVICT / SUMMARIZE / SPILL remove, CLEAR clears) and judged by
:func:`check_prune_spec` on that pre-state — not by the runtime's own
incident.  Under every ``check_at`` mode, the safe gates never report an
invalid prune and never leave a unit partially present; under ``commit``
and ``spill`` none of the documented incidents happen at all.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, find, given, settings
from strategies import Scenario, scenarios

from prunecheck.model.actions import Clear, Proposal, Summarize
from prunecheck.model.boundary import ViolationReason
from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.events import (
    BudgetCheck,
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    UserMessage,
)
from prunecheck.model.gates import Gate, decide, spill_plan
from prunecheck.model.incidents import VIOLATION_KINDS, IncidentKind
from prunecheck.model.notes import Note, NoteKind
from prunecheck.model.policies import builtin_policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import CallStatus, RuntimeState, initial_state
from prunecheck.model.units import check_prune_spec

SAFE = (Gate.REFERENCE, Gate.COMMIT, Gate.SPILL)
REMOVING = (NoteKind.EVICT, NoteKind.SUMMARIZE, NoteKind.SPILL)


def spec_judgement(pre: RuntimeState, notes: tuple[Note, ...]) -> set[tuple[str, frozenset[str]]]:
    """The spec's violations of what one step removed and cleared, on ``pre``."""
    present = set(pre.context.ids())
    removed = {m for n in notes if n.kind in REMOVING for m in n.ids if m in present}
    cleared = {m for n in notes if n.kind is NoteKind.CLEAR for m in n.ids}
    messages, boc = list(pre.context), pre.batch_of_call()
    found = {(v.value, unit) for v, unit in check_prune_spec(messages, boc, pre.pending, removed)}
    for mid in cleared - removed:  # clearing keeps the message: no split, but closed, idle
        found |= {
            (v.value, unit)
            for v, unit in check_prune_spec(messages, boc, pre.pending, [mid])
            if v is not ViolationReason.SPLIT_UNIT
        }
    return found


def first_invalid_removal(scenario: Scenario) -> tuple[int, set[tuple[str, frozenset[str]]]]:
    """(step, spec violations) of the first step whose removal is invalid, or (-1, ∅)."""
    state = scenario.run_state(record=True)
    for i, event in enumerate(scenario.events):
        if not isinstance(event, BudgetCheck | Invoke):
            # No budget check fires elsewhere under before_invoke; other removals
            # (a failed call's partial result replaced by its error) are not prunes.
            apply(state, event)
            continue
        pre = state.copy()
        result = apply(state, event)
        found = spec_judgement(pre, result.notes)
        if found:
            return i, found
    return -1, set()


def partially_present_units(state: RuntimeState) -> list[str]:
    """Batches present in part: results without their call, or a call whose
    completed result is missing — judged from the runtime's call records."""
    ctx = state.context
    bad = []
    present_batches = {m.unit_id for m in ctx if m.role is Role.TOOL} | {
        m.id for m in ctx if m.tool_calls
    }
    for batch in present_batches:
        if batch not in ctx:
            bad.append(f"{batch}: results without the call")
            continue
        answered = {ctx[m].call_id for m in ctx.members(batch)}
        for cid in ctx[batch].tool_calls:
            if state.calls[cid].status is not CallStatus.PENDING and cid not in answered:
                bad.append(f"{batch}: {cid} complete, no result in context")
    return bad


def _no_invalid_removal(scenario: Scenario) -> None:
    step, found = first_invalid_removal(scenario)
    assert step == -1, f"step {step} applied {sorted(found)} under gate {scenario.config.gate}"


def _units_stay_whole(scenario: Scenario) -> None:
    state = scenario.run_state()
    for i, event in enumerate(scenario.events):
        result = apply(state, event)
        kinds = {inc.kind for inc in result.incidents}
        assert IncidentKind.INVALID_PRUNE not in kinds, f"step {i}: {result.incidents}"
        if scenario.config.gate.defers:
            assert not kinds & VIOLATION_KINDS, f"step {i} ({event.kind}): {result.incidents}"
        assert partially_present_units(state) == [], f"after step {i} ({event.kind})"


@given(scenarios(gates=SAFE, check_at=(CheckAt.BEFORE_INVOKE,)))
def test_safe_gates_never_apply_an_invalid_removal_judged_by_spec(scenario: Scenario) -> None:
    _no_invalid_removal(scenario)


@given(scenarios(gates=SAFE))
def test_safe_gates_keep_units_whole_under_every_check_at(scenario: Scenario) -> None:
    _units_stay_whole(scenario)


@pytest.mark.slow
@settings(settings.get_profile("thorough"))
@given(scenarios(gates=SAFE, check_at=(CheckAt.BEFORE_INVOKE,), max_events=80))
def test_safe_gates_never_apply_an_invalid_removal_thorough(scenario: Scenario) -> None:
    _no_invalid_removal(scenario)


@pytest.mark.slow
@settings(settings.get_profile("thorough"))
@given(scenarios(gates=SAFE, max_events=80))
def test_safe_gates_keep_units_whole_thorough(scenario: Scenario) -> None:
    _units_stay_whole(scenario)


# ------------------------------------------------ the property is not vacuous
BATCH_SPLIT_EVENTS: tuple[Event, ...] = (
    UserMessage(300, "read the config"),
    IssueBatch((CallSpec("read_file", "src/app.py"), CallSpec("grep", "src")), 60),
    ResultChunk("c1", 700),
    BudgetCheck(),  # m2, the batch turn, is the lowest-salience message
    ResultChunk("c2", 40),
    Invoke(),
)


def _batch_split_scenario(gate: Gate) -> Scenario:
    return Scenario(
        RuntimeConfig(budget=1000, hard_ceiling=2000, gate=gate, check_at=CheckAt.BEFORE_INVOKE),
        "lowest_salience",
        BATCH_SPLIT_EVENTS,
    )


def test_gate_none_applies_an_invalid_removal_in_an_explicit_example() -> None:
    step, found = first_invalid_removal(_batch_split_scenario(Gate.NONE))
    assert step == 3
    assert found == {
        ("split_unit", frozenset({"m2", "m3"})),
        ("pending_unit", frozenset({"m2", "m3"})),
    }


@pytest.mark.parametrize("gate", SAFE)
def test_safe_gates_on_the_explicit_example(gate: Gate) -> None:
    scenario = _batch_split_scenario(gate)
    assert first_invalid_removal(scenario) == (-1, set())
    state = scenario.run_state()
    kinds = [i.kind for e in scenario.events[:4] for i in apply(state, e).incidents]
    assert "m2" in state.context  # nothing may touch the batch while c2 is pending
    kinds += [i.kind for e in scenario.events[4:] for i in apply(state, e).incidents]
    assert not set(kinds) & VIOLATION_KINDS


def test_generated_sequences_find_invalid_removals_under_gate_none() -> None:
    example = find(
        scenarios(gates=(Gate.NONE,), check_at=(CheckAt.BEFORE_INVOKE,)),
        lambda s: first_invalid_removal(s)[0] >= 0,
        settings=settings(max_examples=500, database=None, phases=[Phase.generate]),
    )
    assert first_invalid_removal(example)[0] >= 0


# --------------------------------------------------------------- decide() itself
def _ctx() -> Context:
    """m1 system; m2 user; m3 issues c1, c2 with results m4, m5 (complete);
    m6 issues c3, pending; m7 open assistant text."""
    ctx = Context()
    ctx.append(Message("m1", Role.SYSTEM, 10, 0, 0.0, unit_id="m1"))
    ctx.append(Message("m2", Role.USER, 10, 1, 1.0, unit_id="m2"))
    ctx.append(Message("m3", Role.ASSISTANT, 10, 1, 2.0, tool_calls=("c1", "c2"), unit_id="m3"))
    ctx.append(Message("m4", Role.TOOL, 10, 1, 3.0, call_id="c1", unit_id="m3"))
    ctx.append(Message("m5", Role.TOOL, 10, 1, 4.0, call_id="c2", unit_id="m3"))
    ctx.append(Message("m6", Role.ASSISTANT, 10, 1, 5.0, tool_calls=("c3",), unit_id="m6"))
    ctx.mark_pending("m6", "c3")
    ctx.append(Message("m7", Role.ASSISTANT, 10, 1, 6.0, closed=False, unit_id="m7"))
    return ctx


def _system(m: Message) -> bool:
    return m.role is Role.SYSTEM


def test_decide_none_applies_as_is_and_reports() -> None:
    d = decide(Gate.NONE, _ctx(), Proposal(evict=("m3",)), _system)
    assert d.apply == Proposal(evict=("m3",))
    assert [v.reason for v in d.violations] == [ViolationReason.SPLIT_UNIT]


def test_decide_reference_refuses_whole_proposal() -> None:
    d = decide(Gate.REFERENCE, _ctx(), Proposal(evict=("m2", "m4")), _system)
    assert d.apply == Proposal() and [v.unit_id for v in d.refused] == ["m3"]
    ok = decide(Gate.REFERENCE, _ctx(), Proposal(evict=("m3", "m4", "m5")), _system)
    assert ok.apply == Proposal(evict=("m3", "m4", "m5")) and ok.refused == ()


@pytest.mark.parametrize("gate", [Gate.COMMIT, Gate.SPILL])
def test_decide_commit_grows_and_shrinks(gate: Gate) -> None:
    d = decide(gate, _ctx(), Proposal(evict=("m4", "m6", "m7", "m1", "m2")), _system)
    assert d.apply.evict == ("m3", "m4", "m5", "m2")
    assert d.grown == ("m3",)
    assert set(d.shrunk) == {"m6", "m7", "m1"}
    d = decide(gate, _ctx(), Proposal(clear=("m7", "m4"), summarize=(Summarize(("m5",)),)), _system)
    assert d.apply.summarize == (Summarize(("m3", "m4", "m5")),)
    assert d.apply.clear == ()  # m4 is summarized; m7 is open
    d = decide(gate, _ctx(), Proposal(clear=("m2",)), _system)
    assert d.apply == Proposal(clear=("m2",))


def test_spill_plan_takes_oldest_whole_closed_units() -> None:
    assert spill_plan(_ctx(), 15, _system) == [("m2",), ("m3", "m4", "m5")]
    assert spill_plan(_ctx(), 5, _system) == [("m2",)]
    assert spill_plan(_ctx(), 10_000, _system) == [("m2",), ("m3", "m4", "m5")]


def test_gate_defers_only_commit_and_spill() -> None:
    assert [g for g in Gate if g.defers] == [Gate.COMMIT, Gate.SPILL]


def test_commit_gate_defers_then_prunes_whole_units() -> None:
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    state = initial_state(RuntimeConfig(budget=1000, hard_ceiling=2000, gate=Gate.COMMIT), policy)
    results = [apply(state, e) for e in BATCH_SPLIT_EVENTS[:3]]
    assert [i.kind for i in results[2].incidents] == [IncidentKind.DEFERRAL]
    assert results[2].incidents[0].ids == ("c2",)
    final = apply(state, BATCH_SPLIT_EVENTS[4])
    evicted = [n.ids for n in final.notes if n.kind is NoteKind.EVICT]
    assert evicted == [("m2", "m3", "m4")]  # the whole batch unit, once c2 is in
    assert [i.kind for i in final.incidents] == []
    assert state.count("deferred_checks") == 1


def test_clear_is_judged_like_a_prune_of_one_message() -> None:
    ctx = _ctx()
    assert (
        decide(Gate.NONE, ctx, Proposal(clear=("m7",)), _system).violations[0].reason
        is ViolationReason.OPEN_MESSAGE
    )
    assert decide(Gate.REFERENCE, ctx, Proposal(clear=("m7",)), _system).apply == Proposal()
    assert Clear("m7") != Clear("m4")
