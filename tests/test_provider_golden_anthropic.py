"""Golden bodies for Anthropic Messages: each rule a rejected and an
accepted body, both passing the ``anthropic`` SDK's request types, and the
exact text we answer."""

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

P = Provider.ANTHROPIC


def _use(cid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": cid, "name": "read_file", "input": {"path": f"{cid}.txt"}}


def _result(cid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": cid, "content": "alpha"}


def _body(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "Be brief.",
            "messages": list(messages)}  # fmt: skip


USER = {"role": "user", "content": "Read both files."}
CALLS = {"role": "assistant", "content": [_use("toolu_01"), _use("toolu_02")]}
BOTH = {"role": "user", "content": [_result("toolu_01"), _result("toolu_02")]}
ONE = {"role": "user", "content": [_result("toolu_01")]}
ANSWER = {"role": "assistant", "content": "Both say alpha."}

CASES = [
    Golden(
        "anthropic.result_without_call",
        rejected=_body(USER, {"role": "assistant", "content": "Reading."}, BOTH, ANSWER),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_01. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message.",
    ),
    Golden(
        "anthropic.call_without_result",
        rejected=_body(USER, CALLS, ONE, ANSWER),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: toolu_02. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message.",
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
    assert sdk_rejects_shape(P, _body({"role": "user", "content": [{"type": "tool_result"}]}))
    assert sdk_rejects_shape(P, _body({"role": "user", "content": "hi", "name": "x"}))
