"""Golden bodies for Gemini: each rule a rejected and an accepted
``contents``, both passing ``google-genai``'s ``types.Content`` and
``types.GenerateContentConfig``, and the exact text we answer."""

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

from prunecheck.model.provider import Provider

P = Provider.GEMINI


def _call(name: str) -> dict[str, Any]:
    return {"functionCall": {"name": name, "args": {"path": f"{name}.txt"}}}


def _response(name: str) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"output": "alpha"}}}


def _body(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gemini-2.5-flash", "contents": list(contents),
            "systemInstruction": {"parts": [{"text": "Be brief."}]}}  # fmt: skip


USER = {"role": "user", "parts": [{"text": "Read a and b."}]}
CALLS = {"role": "model", "parts": [_call("a"), _call("b")]}
BOTH = {"role": "user", "parts": [_response("a"), _response("b")]}
ONE = {"role": "user", "parts": [_response("a")]}
ANSWER = {"role": "model", "parts": [{"text": "Both say alpha."}]}

CASES = [
    Golden(
        "gemini.result_without_call",
        rejected=_body(USER, ANSWER, BOTH),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="Please ensure that function response turn comes immediately after a function "
        "call turn.",
    ),
    Golden(
        "gemini.call_without_result",
        rejected=_body(USER, CALLS, ONE, ANSWER),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="Please ensure that the number of function response parts is equal to the number "
        "of function call parts of the function call turn.",
    ),
    Golden(
        "gemini.call_out_of_place",
        rejected=_body(CALLS, BOTH, ANSWER),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="Please ensure that function call turn comes immediately after a user turn or "
        "after a function response turn.",
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


@needs_sdk(P)
def test_the_sdk_check_can_fail() -> None:
    assert sdk_rejects_shape(P, _body({"role": "user", "parts": [{"function_calll": {}}]}))
    assert sdk_rejects_shape(P, _body({"role": "user", "parts": [{"text": 3}]}))
