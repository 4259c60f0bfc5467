"""The loop judge (sim/subjects/loops/judge.py): every request held against the ledger."""

from __future__ import annotations

import pytest
from loops_fake import FakeAdapter, FakeAgent, guarded_middle, trimming_dropping

from prunecheck.sim.evidence.loop_narrative import narrative
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.judge import judge_request, removed_by_trim, to_anthropic
from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd, Ledger
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Cancel, Complete, ReplyStep, Step, User
from prunecheck.sim.subjects.loops.story import Story

CALL = ToolCall("call_1", "read_file", '{"path": "a"}')
OTHER = ToolCall("call_2", "read_file", '{"path": "b"}')


def _assistant(*calls: ToolCall) -> dict[str, object]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls]}  # fmt: skip


def _tool(cid: str, text: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def _ledger(*ends: tuple[str, BodyEnd, str]) -> Ledger:
    led = Ledger()
    led.issue((CALL, OTHER), 1)
    for cid, end, output in ends:
        led.bodies.append(Body(cid, 1, end, 2, output))
    return led


def judged(messages: list[dict[str, object]], led: Ledger, trims: bool = False) -> list[str]:
    body = {"messages": [{"role": "user", "content": "hi"}, *messages]}
    return sorted(f"{i.kind.value}:{i.reason}" for i in judge_request(body, led, 3, trims=trims))


def test_a_complete_batch_is_clean() -> None:
    led = _ledger(("call_1", BodyEnd.OK, "A"), ("call_2", BodyEnd.FAILED, "disk"))
    assert (
        judged([_assistant(CALL, OTHER), _tool("call_1", "A"), _tool("call_2", "error")], led) == []
    )


def test_a_call_without_its_result_is_rejected_with_both_providers_texts() -> None:
    led = _ledger(("call_1", BodyEnd.OK, "A"))
    body = {"messages": [{"role": "user", "content": "hi"}, _assistant(CALL),
                         {"role": "user", "content": "next"}]}  # fmt: skip
    found = judge_request(body, led, 3, trims=False)
    texts = [i.text for i in found if i.kind.value == "provider_rejection"]
    assert texts == [
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_1",
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "call_1. Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message.",
    ]
    assert "unanswered_call:" in {f"{i.kind.value}:{i.reason}" for i in found}


def test_an_executed_tool_gone_without_a_trim_is_a_silent_loss_and_with_one_is_not() -> None:
    led = _ledger(("call_1", BodyEnd.OK, "A"), ("call_2", BodyEnd.OK, "B"))
    assert judged([], led) == ["silent_loss:", "silent_loss:"]
    # with a trim, a whole, closed unit the loop held may go, from the front or the middle
    later = ToolCall("call_3", "read_file", "{}")
    led.issue((later,), 2)
    led.bodies.append(Body("call_3", 2, BodyEnd.OK, 3, "C"))
    assert judged([_assistant(later), _tool("call_3", "C")], led, trims=True) == []
    led.users.append((0, "hi"))  # the request's first message came before the batch
    assert judged([_assistant(later), _tool("call_3", "C")], led, trims=True) == []
    # a batch the loop held, call_2 removed with its result: the request pairs every
    # call it keeps, which providers accept (a ruling, no violation); a cut that
    # keeps call_2's result without its call breaks the pairing: an invalid prune
    cut = [_assistant(CALL), _tool("call_1", "A")]
    assert judged(cut, led, trims=True) == []
    assert any("call_2" in told and "provider's rules" in told for _, told in led.rulings)
    assert "invalid_prune:split_unit" in judged([_tool("call_2", "B")], led, trims=True)
    # after a cancel the loop was not seen holding it (nor call_3): losses
    led.cancels.append(3)
    assert judged(cut, led, trims=True) == ["silent_loss:", "silent_loss:"]


def test_a_trim_does_not_excuse_what_a_cancel_discarded() -> None:
    led = _ledger(("call_1", BodyEnd.OK, "A"), ("call_2", BodyEnd.OK, "B"))
    led.cancels.append(3)  # after the batch ran, before the loop was seen holding it
    body = {"messages": [{"role": "user", "content": "next"}]}
    found = judge_request(body, led, 4, trims=True)
    assert [(i.kind.value, i.ids) for i in found] == [
        ("silent_loss", ("call_1",)), ("silent_loss", ("call_2",))]  # fmt: skip
    assert "since a cancel at step 4, so no trim removed it" in found[0].detail
    # seen whole in a request after the cancel: the loop held it, a trim may remove it
    led.witness({"call_1", "call_2"}, {"call_1", "call_2"})
    assert judge_request(body, led, 5, trims=True) == []
    assert removed_by_trim(body, led) == [("call_1", "call_2")]


def _fake_run(agent: FakeAgent, steps: list[Step]) -> LoopRun:
    run = LoopRun(FakeAdapter(), agent)
    for step in steps:
        run.apply(step)
    return run


def test_a_cancel_that_drops_an_executed_call_is_a_loss_in_a_trimming_loop() -> None:
    """The fake loop forgets the cancelled batch (call_1 ran); its trim then
    keeps only the newest message, so no older call or user message is sent:
    the loss is the cancel's, not the trim's."""
    steps: list[Step] = [User("u1"), ReplyStep("", (CALL, OTHER)), Complete("call_1", "A"),
                         Cancel(), User("u2")]  # fmt: skip
    with _fake_run(trimming_dropping, steps) as run:
        assert run.ledger.requests[-1].body["messages"] == [{"role": "user", "content": "u2"}]
        assert [(i.kind.value, i.ids) for i in run.incidents] == [("silent_loss", ("call_1",))]
        assert "its unit never closed (call_2 never finished) and went with a cancel at step 4" in (
            run.incidents[0].detail
        )
        assert run.ledger.trims == []


def test_a_guarded_prune_of_a_whole_unit_from_the_middle_is_a_trim_not_a_loss() -> None:
    """ListGuard keeps the first user message and the newest unit, and drops
    the older whole, closed unit between them: valid, told as a trim."""
    big = "lorem ipsum " * 20
    steps: list[Step] = [User("u1"), ReplyStep("", (CALL,)), Complete("call_1", big),
                         ReplyStep("", (OTHER,)), Complete("call_2", big)]  # fmt: skip
    with _fake_run(guarded_middle, steps) as run:
        last = run.ledger.requests[-1].body["messages"]
        assert isinstance(last, list)
        assert [m.get("tool_call_id") or m["role"] for m in last] == ["user", "assistant", "call_2"]
        assert run.incidents == []
        assert run.ledger.trims == [(4, ("call_1",))]
        told = narrative(Story(tuple(run.steps), (), run.ledger, []))
        assert "the trim removed the whole, closed unit of call_1 (allowed: no loss)" in told
    # the same trim without the guard cuts call_1's result from its call
    cut = FakeAgent(keep_last=3, keep_first=True, trim_units=False)
    with _fake_run(cut, steps) as run:
        assert ("orphaned_result", ("call_1",)) in [(i.kind.value, i.ids) for i in run.incidents]


def test_a_result_no_tool_produced_is_synthesized_and_a_placeholder_is_not() -> None:
    led = _ledger()
    assert judged([_assistant(CALL), _tool("call_1", "42")], led) == ["synthesized_result:no_body"]
    assert judged([_assistant(CALL), _tool("call_1", "Tool call cancelled")], led) == []
    led = _ledger(("call_1", BodyEnd.OK, "the real output"))
    assert judged([_assistant(CALL), _tool("call_1", "something else")], led) == [
        "synthesized_result:rewritten"]  # fmt: skip


# Honest vs invented (sim/subjects/loops/placeholder.py): true positives and true negatives.
_HONEST_CLEARED = ["[cleared]", "Output removed to save context (1,200 tokens).",
                   "Old tool result omitted.", "<content elided>"]  # fmt: skip
_HONEST_NOT_RUN = [
    "Execution stopped before this tool call could run.",
    "The tool call was interrupted before a result was produced.",  # pydantic-ai's repair
    "Tool call cancelled",
    "read_file was not run for call_1.",
    "Error: the tool did not run",
]
_INVENTED = [
    "42",
    "the real outp",
    "3 documents found (older results omitted)",  # a marker in content
    "Weather: sunny (cached result, live fetch skipped)",
    '{"status": "ok", "rows": []}',
    "read_file result for call_1 lorem ipsum",
    "File a: 120 lines (rest truncated)",
    "",
]


def test_an_honest_placeholder_for_a_cleared_output_is_no_violation_and_is_told() -> None:
    for text in _HONEST_CLEARED:
        led = _ledger(("call_1", BodyEnd.OK, "the real output of the tool"))
        assert judged([_assistant(CALL), _tool("call_1", text)], led) == [], text
        assert any("cleared" in told and "honest" in told for _, told in led.rulings), text


def test_a_placeholder_saying_the_call_did_not_run_is_honest_where_none_ran() -> None:
    for text in _HONEST_NOT_RUN:
        assert judged([_assistant(CALL), _tool("call_1", text)], _ledger()) == [], text
        led = _ledger()
        led.bodies.append(Body("call_1", 1, BodyEnd.DROPPED, 2))  # a crash dropped its body
        assert judged([_assistant(CALL), _tool("call_1", text)], led) == [], text


def test_an_invented_result_stays_synthesized_whatever_words_it_borrows() -> None:
    for text in _INVENTED:
        found = judged([_assistant(CALL), _tool("call_1", text)], _ledger())
        assert found == ["synthesized_result:no_body"], text
        led = _ledger(("call_1", BodyEnd.OK, "the real output of the tool"))
        found = judged([_assistant(CALL), _tool("call_1", text)], led)
        assert found in (["synthesized_result:rewritten"], ["truncated_payload:result"]), text


def test_a_placeholder_must_say_what_is_true_of_the_call() -> None:
    """'cleared' where no tool ran claims an output that never existed; 'not run'
    where the tool ran hides an effect that happened: both invented."""
    found = judged([_assistant(CALL), _tool("call_1", "[cleared]")], _ledger())
    assert found == ["synthesized_result:no_body"]
    led = _ledger(("call_1", BodyEnd.OK, "the real output of the tool"))
    body = {"messages": [_assistant(CALL), _tool("call_1", "Tool call cancelled")]}
    incidents = judge_request(body, led, 3, trims=False)
    assert [i.kind.value for i in incidents] == ["synthesized_result"]
    assert "it says the call was not run, but its tool ran" in incidents[0].detail


def test_shortened_results_and_changed_arguments_are_truncated_payloads() -> None:
    led = _ledger(("call_1", BodyEnd.OK, "a long output of the tool"))
    assert judged([_assistant(CALL), _tool("call_1", "a long outp")], led) == [
        "truncated_payload:result"]  # fmt: skip
    cut = ToolCall("call_1", "read_file", '{"path": "')
    assert "truncated_payload:arguments" in judged(
        [_assistant(cut), _tool("call_1", "a long output of the tool")], led)  # fmt: skip


def test_the_anthropic_rendering_merges_tool_results_into_one_user_turn() -> None:
    body = {"messages": [{"role": "system", "content": "be brief"}, _assistant(CALL, OTHER),
                         _tool("call_1", "A"), _tool("call_2", "B")]}  # fmt: skip
    rendered = to_anthropic(body)
    assert rendered["system"] == "be brief"
    messages = rendered["messages"]
    assert isinstance(messages, list) and [m["role"] for m in messages] == ["assistant", "user"]
    assert [b["tool_use_id"] for b in messages[1]["content"]] == ["call_1", "call_2"]


def test_a_trim_that_splits_a_batch_the_loop_held_is_an_invalid_prune() -> None:
    """The fake's keep-last-3 cuts through the batch: call_2's result stays,
    call_1 and its result go (with the call message they shared)."""
    steps: list[Step] = [User("u1"), ReplyStep("", (CALL, OTHER)), Complete("call_1", "A"),
                         Complete("call_2", "B"), ReplyStep("done"), User("u2")]  # fmt: skip
    with _fake_run(FakeAgent(keep_last=3, trim_units=False), steps) as run:
        found = {(i.kind.value, i.ids, i.reason) for i in run.incidents}
        assert ("invalid_prune", ("call_1",), "split_unit") in found
        assert ("orphaned_result", ("call_2",), "") in found
        assert not any(i.kind.value == "silent_loss" for i in run.incidents)


def test_the_narrative_names_the_rule_that_found_no_violation() -> None:
    led = _ledger(
        ("call_1", BodyEnd.OK, "the real output of the tool"), ("call_2", BodyEnd.OK, "B")
    )
    led.witness({"call_1", "call_2"}, {"call_1", "call_2"})
    body = {"messages": [_assistant(CALL), _tool("call_1", "[cleared]")]}
    assert judge_request(body, led, 0, trims=True) == []
    told = narrative(Story((User("hi"),), (), led, []))
    assert (
        "-> rule: the result of call_1 reads '[cleared]': a placeholder saying the call "
        "was cleared (honest: no loss)" in told
    )
    assert "-> rule: the trim removed call_2 (read_file) with its result from its batch" in told
    assert "judged by the provider's rules" in told


def _search_trim(agent: FakeAgent, accept: bool) -> tuple[frozenset[str], str]:
    """The trimming class's search of ``agent`` (with or without its defining event)."""
    from prunecheck.sim.api import loop_owner
    from prunecheck.sim.api.loop_verdict import search_scenario
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
    from prunecheck.sim.subjects.loops.target import LoopTarget

    target = LoopTarget("loop:fake:agent", "agent", agent, FakeAdapter())
    scenario = SCENARIOS[ScenarioClass.TRIM]
    real = loop_owner.defining_event
    if not accept:
        loop_owner.defining_event = lambda *_: None
    try:
        from prunecheck.sim.api import loop_verdict

        loop_verdict.defining_event = loop_owner.defining_event  # type: ignore[attr-defined]
        result = search_scenario(target, scenario, seed=1, max_examples=12, shrink_runs=2,
                                 polish_runs=8)  # fmt: skip
    finally:
        loop_owner.defining_event = real
        loop_verdict.defining_event = real  # type: ignore[attr-defined]
    if result.found is None:
        return frozenset(), ""
    owner, _ = loop_owner.owner_of(target, scenario, result.found, result.found.kinds)
    return result.found.kinds, owner.value


@pytest.mark.slow
def test_the_trimming_class_counts_only_what_the_trim_caused() -> None:
    """A failed tool that raises out of the turn breaks the next request with no
    trim at all: the plain agent fails the same way, so it is no finding of the
    trimming class (it was its reproduction before); a trim that cuts through
    units still is, and it is the configuration's."""
    from loops_fake import idle_on_raising_release

    kinds, owner = _search_trim(idle_on_raising_release, accept=False)
    assert kinds and owner == "framework"
    assert _search_trim(idle_on_raising_release, accept=True) == (frozenset(), "")
    cutting = FakeAgent(keep_last=3, trim_units=False, release="raises_on_fail")
    kinds, owner = _search_trim(cutting, accept=True)
    assert "orphaned_result" in kinds and owner == "configuration"


def test_the_trimming_class_accepts_a_schedule_only_if_the_trim_caused_it() -> None:
    """The fast twin: the defining event of the trimming class on two given
    schedules, a failed tool raising out of the turn (no trim fired) and a
    trim that cuts a result from its call."""
    from loops_fake import idle_on_raising_release

    from prunecheck.model.incidents import IncidentKind
    from prunecheck.sim.api.loop_owner import defining_event
    from prunecheck.sim.drivers.action_search import rerun
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
    from prunecheck.sim.subjects.loops.steps import Fail
    from prunecheck.sim.subjects.loops.system import LoopSystem
    from prunecheck.sim.subjects.loops.target import LoopTarget

    trim = SCENARIOS[ScenarioClass.TRIM]
    every = frozenset(k.value for k in IncidentKind)
    failed: list[Step] = [User("u1"), ReplyStep("", (CALL, OTHER)), Complete("call_2", "B"),
                          Fail("call_1", "disk"), User("u2")]  # fmt: skip
    cut: list[Step] = [User("u1"), ReplyStep("", (CALL, OTHER)), Complete("call_1", "A"),
                       Complete("call_2", "B"), ReplyStep("done"), User("u2")]  # fmt: skip
    cutting = FakeAgent(keep_last=3, trim_units=False, release="raises_on_fail")
    for agent, steps, expected in ((idle_on_raising_release, failed, False), (cutting, cut, True)):
        target = LoopTarget("loop:fake:agent", "agent", agent, FakeAdapter())
        outcome = rerun(LoopSystem(target, trim), steps, known=every)
        assert outcome is not None and outcome.violations, steps
        accept = defining_event(target, trim)
        assert accept is not None and accept(outcome) is expected


def test_clearing_a_placeholder_the_model_was_shown_is_a_clear() -> None:
    """No tool ran for call_1: the framework answered it 'interrupted', and a
    later clearing edit turned that answer into '[cleared]': a clear of what
    the model was shown, not an invented output (the first answer being
    '[cleared]' would be)."""
    from prunecheck.sim.subjects.loops.ledger import Received

    led = _ledger()
    earlier = {"messages": [_assistant(CALL), _tool("call_1", "The tool call was interrupted.")]}
    led.requests.append(Received(1, earlier))
    assert judge_request(earlier, led, 1, trims=True) == []
    later = {"messages": [_assistant(CALL), _tool("call_1", "[cleared]")]}
    led.requests.append(Received(2, later))
    assert judge_request(later, led, 2, trims=True) == []
    fresh = _ledger()
    fresh.requests.append(Received(2, later))
    found = judge_request(later, fresh, 2, trims=True)
    assert [i.kind.value for i in found] == ["synthesized_result"]
