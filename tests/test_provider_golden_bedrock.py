"""Golden bodies for AWS Bedrock Converse: each rule a rejected and an
accepted body, both passing botocore's ``bedrock-runtime`` service model
(``ParamValidator``, as the client checks before sending), and the exact
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

from prunecheck.model.provider import Provider

P = Provider.BEDROCK
_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = {"tools": [{"toolSpec": {"name": "read_file", "inputSchema": {"json": _SCHEMA}}}]}


def _use(cid: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": cid, "name": "read_file", "input": {"path": f"{cid}.txt"}}}


def _result(cid: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": cid, "content": [{"text": "alpha"}]}}


def _body(*messages: dict[str, Any], tools: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "modelId": "anthropic.claude-sonnet-4-5-20250929-v1:0",
        "messages": list(messages),
        "system": [{"text": "Be brief."}],
    }
    if tools:
        body["toolConfig"] = TOOLS
    return body


USER = {"role": "user", "content": [{"text": "Read both files."}]}
CALLS = {"role": "assistant", "content": [_use("tooluse_1"), _use("tooluse_2")]}
BOTH = {"role": "user", "content": [_result("tooluse_1"), _result("tooluse_2")]}
ONE = {"role": "user", "content": [_result("tooluse_1")]}
ANSWER = {"role": "assistant", "content": [{"text": "Both say alpha."}]}
NEXT = {"role": "user", "content": [{"text": "Thanks."}]}

CASES = [
    Golden(
        "bedrock.result_without_call",
        rejected=_body(USER, {"role": "assistant", "content": [{"text": "Reading."}]}, BOTH),
        accepted=_body(USER, CALLS, BOTH),
        text="The number of toolResult blocks at messages.2.content exceeds the number of "
        "toolUse blocks of previous turn.",
    ),
    Golden(
        "bedrock.call_without_result",
        rejected=_body(USER, CALLS, ONE, ANSWER),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="Expected toolResult blocks at messages.2.content for the following Ids: tooluse_2",
    ),
    Golden(
        "bedrock.user_after_result",
        rejected=_body(
            USER, CALLS, {"role": "user", "content": [*BOTH["content"], *NEXT["content"]]}
        ),
        accepted=_body(USER, CALLS, BOTH, ANSWER, NEXT),
        text="messages.2.content: Conversation blocks and tool result blocks cannot be provided "
        "in the same turn.",
    ),
    Golden(
        "bedrock.user_not_first",
        rejected=_body(ANSWER, NEXT, CALLS, BOTH, ANSWER),
        accepted=_body(NEXT, CALLS, BOTH, ANSWER),
        text="A conversation must start with a user message. Try again with a conversation "
        "that starts with a user message.",
    ),
    Golden(
        "bedrock.tools_undeclared",
        rejected=_body(USER, CALLS, BOTH, ANSWER, tools=False),
        accepted=_body(USER, CALLS, BOTH, ANSWER),
        text="The toolConfig field must be defined when using toolUse and toolResult content "
        "blocks.",
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
    assert sdk_rejects_shape(P, _body({"role": "user", "content": [{"toolresult": {}}]}))
    assert sdk_rejects_shape(P, _body({"role": "user", "content": "hi"}))
