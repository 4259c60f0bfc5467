"""Golden bodies for Mistral: each rule a rejected and an accepted body,
both passing ``mistralai``'s ``ChatCompletionRequest``, and the exact text
we answer."""

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

P = Provider.MISTRAL


def _call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}  # fmt: skip


def _body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "mistral-large-latest", "messages": list(messages)}


# Mistral's call ids are 9 letters or digits.
USER = {"role": "user", "content": "Read a.txt and b.txt."}
CALLS = {"role": "assistant", "content": "", "tool_calls": [_call("aaaaaaaa1"), _call("bbbbbbbb2")]}
R1 = {"role": "tool", "tool_call_id": "aaaaaaaa1", "content": "alpha"}
R2 = {"role": "tool", "tool_call_id": "bbbbbbbb2", "content": "beta"}
ANSWER = {"role": "assistant", "content": "Alpha and beta."}
NEXT = {"role": "user", "content": "Thanks."}

CASES = [
    Golden(
        "mistral.result_without_call",
        rejected=_body(USER, R1, ANSWER),
        accepted=_body(USER, CALLS, R1, R2, ANSWER),
        text="Unexpected role 'tool' after role 'user'",
    ),
    Golden(
        "mistral.call_without_result",
        rejected=_body(USER, CALLS, R1, ANSWER),
        accepted=_body(USER, CALLS, R1, R2, ANSWER),
        text="Not the same number of function calls and responses",
    ),
    Golden(
        "mistral.user_after_result",
        rejected=_body(USER, CALLS, R1, R2, NEXT),
        accepted=_body(USER, CALLS, R1, R2, ANSWER, NEXT),
        text="Unexpected role 'user' after role 'tool'",
    ),
    Golden(
        "mistral.calls_last",
        rejected=_body(USER, CALLS),
        accepted=_body(USER, CALLS, R1, R2),
        text="Expected last role User or Tool (or Assistant with prefix True) for serving but "
        "got assistant",
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
    assert sdk_rejects_shape(P, _body({"role": "tool", "content": 3}))
    assert sdk_rejects_shape(P, _body({"role": "robot", "content": "hi"}))
