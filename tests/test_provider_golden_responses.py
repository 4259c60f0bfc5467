"""Golden bodies for OpenAI Responses: each rule a rejected and an accepted
``input``, both passing the ``openai`` SDK's request types, and the exact
text we answer."""

from __future__ import annotations

from typing import Any

import pytest
from provider_sdk import (
    Golden,
    check_complete,
    check_render,
    check_render_validates,
    check_sdk,
    check_texts,
    needs_sdk,
    sdk_rejects_shape,
)

from prunecheck.model.provider import Provider, validate

P = Provider.OPENAI_RESPONSES


def _body(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-5", "input": list(items), **extra}


USER = {"type": "message", "role": "user", "content": "Read a.txt."}
CALL = {"type": "function_call", "call_id": "call_1", "name": "read_file",
        "arguments": '{"path": "a.txt"}'}  # fmt: skip
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "alpha"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
ANSWER = {"type": "message", "role": "assistant", "content": "It says alpha."}
NEXT = {"type": "message", "role": "user", "content": "Thanks."}
# A reasoning model's output, replayed as the client got it (with item ids): the server
# records which reasoning item each output item followed.
RS = {"type": "reasoning", "id": "rs_1", "summary": []}
FC = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
      "arguments": '{"path": "a.txt"}'}  # fmt: skip
MSG = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "It says alpha.", "annotations": []}],
}
STORED = {"fc_1": "rs_1"}

CASES = [
    Golden(
        "openai-responses.result_without_call",
        rejected=_body(USER, OUTPUT, ANSWER),
        accepted=_body(USER, CALL, OUTPUT, ANSWER),
        text="No tool call found for function call output with call_id call_1.",
    ),
    Golden(
        "openai-responses.call_without_result",
        rejected=_body(USER, CALL, ANSWER),
        accepted=_body(USER, CALL, OUTPUT, ANSWER),
        text="No tool output found for function call call_1.",
    ),
    Golden(
        "openai-responses.reasoning_without_item",
        rejected=_body(USER, REASONING, NEXT),
        accepted=_body(USER, REASONING, ANSWER, NEXT),
        text="Item 'rs_1' of type 'reasoning' was provided without its required following item.",
    ),
    Golden(  # the inverse, with the server's record: rs_1 stays, the call it preceded is cut
        "openai-responses.reasoning_without_item",
        rejected=_body(USER, RS, ANSWER, NEXT),
        accepted=_body(USER, RS, FC, OUTPUT, ANSWER, NEXT),
        text="Item 'rs_1' of type 'reasoning' was provided without its required following item.",
        stored=STORED,
    ),
    Golden(  # a dropped reasoning item: the call replayed without it
        "openai-responses.item_without_reasoning",
        rejected=_body(USER, FC, OUTPUT, ANSWER),
        accepted=_body(USER, RS, FC, OUTPUT, ANSWER),
        text="Item 'fc_1' of type 'function_call' was provided without its required "
        "'reasoning' item: 'rs_1'.",
        stored=STORED,
    ),
    Golden(  # the same for an assistant message the reasoning preceded
        "openai-responses.item_without_reasoning",
        rejected=_body(USER, MSG, NEXT),
        accepted=_body(USER, {**RS, "id": "rs_2"}, MSG, NEXT),
        text="Item 'msg_1' of type 'message' was provided without its required "
        "'reasoning' item: 'rs_2'.",
        stored={"msg_1": "rs_2"},
    ),
]


def test_a_body_read_alone_cannot_show_a_dropped_reasoning_item() -> None:
    """Without the server's record the replayed call reads as any call: the
    rule needs what the server stored (it is the server's check)."""
    assert validate(_body(USER, FC, OUTPUT, ANSWER), P) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_golden_texts(case: Golden) -> None:
    check_texts(P, case)


@needs_sdk(P)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_golden_bodies_pass_the_sdk_types(case: Golden) -> None:
    check_sdk(P, case)


def test_every_rule_has_its_golden_pair() -> None:
    check_complete(P, CASES)


def test_render_validates() -> None:
    check_render_validates(P)


@needs_sdk(P)
def test_render_passes_the_sdk_types() -> None:
    check_render(P)


def test_a_chained_body_may_answer_calls_the_server_holds() -> None:
    chained = _body(OUTPUT, ANSWER, previous_response_id="resp_1")
    assert validate(chained, P) == []
    assert [e.rule for e in validate(_body(OUTPUT, ANSWER), P)] == [CASES[0].rule]


@needs_sdk(P)
def test_the_sdk_check_can_fail() -> None:
    assert sdk_rejects_shape(P, _body({"type": "function_call_output", "call": "c1", "output": ""}))
    assert sdk_rejects_shape(P, _body({**CALL, "callid": "x"}))
