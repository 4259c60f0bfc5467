"""The loop judge (sim/loops/judge.py): every request held against the ledger."""

from __future__ import annotations

from prunecheck.sim.loops.contract import ToolCall
from prunecheck.sim.loops.judge import judge_request, to_anthropic
from prunecheck.sim.loops.ledger import Body, BodyEnd, Ledger

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
    # with a trim, whole units may go from the front, never from the middle
    later = ToolCall("call_3", "read_file", "{}")
    led.issue((later,), 2)
    led.bodies.append(Body("call_3", 2, BodyEnd.OK, 3, "C"))
    assert judged([_assistant(later), _tool("call_3", "C")], led, trims=True) == []
    led.users.append((0, "hi"))  # the request's first message came before the batch
    assert (
        judged([_assistant(later), _tool("call_3", "C")], led, trims=True) == ["silent_loss:"] * 2
    )


def test_a_result_no_tool_produced_is_synthesized_and_a_placeholder_is_not() -> None:
    led = _ledger()
    assert judged([_assistant(CALL), _tool("call_1", "42")], led) == ["synthesized_result:no_body"]
    assert judged([_assistant(CALL), _tool("call_1", "Tool call cancelled")], led) == []
    led = _ledger(("call_1", BodyEnd.OK, "the real output"))
    assert judged([_assistant(CALL), _tool("call_1", "something else")], led) == [
        "synthesized_result:rewritten"]  # fmt: skip


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
