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
]


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
