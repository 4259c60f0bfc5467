"""Golden bodies for OpenAI Chat Completions and DeepSeek (its body, its
texts): each rule a rejected and an accepted body, both passing the
``openai`` SDK's request types, and the exact text we answer."""

from __future__ import annotations

from typing import Any

import pytest
from provider_sdk import (
    Golden,
    check_complete,
    check_recognized,
    check_render,
    check_render_validates,
    check_sdk,
    check_texts,
    needs_sdk,
    sdk_rejects_shape,
)

from prunecheck.model.provider import Provider


def _call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}  # fmt: skip


def _body(model: str, *messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "messages": list(messages)}


USER = {"role": "user", "content": "Read a.txt and b.txt."}
CALLS = {"role": "assistant", "content": None, "tool_calls": [_call("call_1"), _call("call_2")]}
R1 = {"role": "tool", "tool_call_id": "call_1", "content": "alpha"}
R2 = {"role": "tool", "tool_call_id": "call_2", "content": "beta"}
ANSWER = {"role": "assistant", "content": "a.txt says alpha, b.txt says beta."}


def _cases(provider: Provider, model: str, orphan: str, unanswered: str) -> list[Golden]:
    return [
        Golden(
            f"{provider.value}.result_without_call",
            rejected=_body(model, USER, R1, R2, ANSWER),
            accepted=_body(model, USER, CALLS, R1, R2, ANSWER),
            text=orphan,
        ),
        Golden(
            f"{provider.value}.call_without_result",
            rejected=_body(model, USER, CALLS, R1, ANSWER),
            accepted=_body(model, USER, CALLS, R1, R2, ANSWER),
            text=unanswered,
        ),
    ]


OPENAI = _cases(
    Provider.OPENAI,
    "gpt-4.1",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2",
)
DEEPSEEK = _cases(
    Provider.DEEPSEEK,
    "deepseek-chat",
    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
)


#: The rule only ``recognize`` knows (logs carry it; our validator answers the
#: result_without_call text for the same body).
RECOGNIZED = [
    Golden(
        "openai.result_for_another_call",
        rejected=_body(
            "gpt-4.1",
            USER,
            CALLS,
            R1,
            R2,
            {"role": "tool", "tool_call_id": "call_9", "content": "gamma"},
            ANSWER,
        ),
        accepted=_body("gpt-4.1", USER, CALLS, R1, R2, ANSWER),
        text="Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of "
        "previous message.",
    ),
]

BOTH = [(Provider.OPENAI, c) for c in OPENAI] + [(Provider.DEEPSEEK, c) for c in DEEPSEEK]


@pytest.mark.parametrize(("provider", "case"), BOTH, ids=lambda x: getattr(x, "rule", ""))
def test_golden_texts(provider: Provider, case: Golden) -> None:
    check_texts(provider, case)


@needs_sdk(Provider.OPENAI)
@pytest.mark.parametrize(("provider", "case"), BOTH, ids=lambda x: getattr(x, "rule", ""))
def test_golden_bodies_pass_the_sdk_types(provider: Provider, case: Golden) -> None:
    check_sdk(provider, case)


@pytest.mark.parametrize(("provider", "cases", "recognized"),
                         [(Provider.OPENAI, OPENAI, RECOGNIZED),
                          (Provider.DEEPSEEK, DEEPSEEK, [])])  # fmt: skip
def test_every_rule_has_its_golden_pair(
    provider: Provider, cases: list[Golden], recognized: list[Golden]
) -> None:
    check_complete(provider, cases, recognized)


@pytest.mark.parametrize("case", RECOGNIZED, ids=lambda c: c.rule)
def test_recognized_only_rules_have_their_bodies(case: Golden) -> None:
    check_recognized(Provider.OPENAI, case)


@needs_sdk(Provider.OPENAI)
@pytest.mark.parametrize("case", RECOGNIZED, ids=lambda c: c.rule)
def test_recognized_only_bodies_pass_the_sdk_types(case: Golden) -> None:
    check_sdk(Provider.OPENAI, case)


@pytest.mark.parametrize("provider", [Provider.OPENAI, Provider.DEEPSEEK])
def test_render_validates(provider: Provider) -> None:
    check_render_validates(provider)


@needs_sdk(Provider.OPENAI)
@pytest.mark.parametrize("provider", [Provider.OPENAI, Provider.DEEPSEEK])
def test_render_passes_the_sdk_types(provider: Provider) -> None:
    check_render(provider)


@needs_sdk(Provider.OPENAI)
def test_the_sdk_check_can_fail() -> None:
    misspelt = _body("gpt-4.1", {"role": "tool", "tool_call_ids": "call_1", "content": "x"})
    assert sdk_rejects_shape(Provider.OPENAI, misspelt)
    unknown_key = _body("gpt-4.1", {**USER, "contents": "x"})
    assert sdk_rejects_shape(Provider.OPENAI, unknown_key)
