"""Golden bodies for Anthropic Messages: each rule a rejected and an
accepted body, both passing the ``anthropic`` SDK's request types, and the
exact text we answer."""

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

from prunecheck.model.provider import Provider, recognize, rule, validate

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
# Extended thinking: the model's signed thinking block before its calls.
THINKING = {"type": "thinking", "thinking": "Read both in parallel.", "signature": "EqQBCkgIARAB"}
THOUGHT_CALLS = {"role": "assistant", "content": [THINKING, _use("toolu_01"), _use("toolu_02")]}
THINKING_DOCS = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"


def _thinking(*messages: dict[str, Any]) -> dict[str, Any]:
    body = _body(*messages)
    return {**body, "max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}


def _missing(found: str, docs: str = THINKING_DOCS) -> str:
    return (
        f"messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`. Please consult our documentation at " + docs
    )


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
    Golden(  # a dropped thinking block while the tool turn runs
        "anthropic.thinking_missing",
        rejected=_thinking(USER, CALLS, BOTH),
        accepted=_thinking(USER, THOUGHT_CALLS, BOTH),
        text=_missing("tool_use"),
    ),
    Golden(  # the same, the turn started with words
        "anthropic.thinking_missing",
        rejected=_thinking(
            USER,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    _use("toolu_01"),
                    _use("toolu_02"),
                ],
            },
            BOTH,
        ),
        accepted=_thinking(
            USER,
            {
                "role": "assistant",
                "content": [
                    THINKING,
                    {"type": "text", "text": "Reading."},
                    _use("toolu_01"),
                    _use("toolu_02"),
                ],
            },
            BOTH,
        ),
        text=_missing("text"),
    ),
]

#: Rules our validator does not answer in their words (an older or moved wording,
#: or what a body cannot show: a signature no longer matching its block), each
#: with a body the provider rejects with that text and the nearest it accepts.
RECOGNIZED = [
    Golden(
        "anthropic.results_not_first",
        rejected=_body(
            USER,
            {"role": "assistant", "content": [_use("toolu_01")]},
            {"role": "user", "content": "Go on."},
        ),
        accepted=_body(
            USER,
            {"role": "assistant", "content": [_use("toolu_01")]},
            {"role": "user", "content": [_result("toolu_01")]},
        ),
        text="Did not find 1 tool_result block(s) at the beginning of this message. Messages "
        "following tool_use blocks must begin with a matching number of tool_result blocks.",
    ),
    Golden(  # the thinking block edited (here: its text cleared by a trimmer)
        "anthropic.thinking_altered",
        rejected=_thinking(
            USER,
            {
                "role": "assistant",
                "content": [
                    {**THINKING, "thinking": "[cleared]"},
                    _use("toolu_01"),
                    _use("toolu_02"),
                ],
            },
            BOTH,
        ),
        accepted=_thinking(USER, THOUGHT_CALLS, BOTH),
        text="messages.1.content.0: Invalid `signature` in `thinking` block",
    ),
    Golden(
        "anthropic.latest_thinking_altered",
        rejected=_thinking(
            USER,
            {
                "role": "assistant",
                "content": [
                    {**THINKING, "thinking": "Read both"},
                    _use("toolu_01"),
                    _use("toolu_02"),
                ],
            },
            BOTH,
        ),
        accepted=_thinking(USER, THOUGHT_CALLS, BOTH),
        text="messages.1.content.0: 'thinking' blocks in the latest assistant message cannot "
        "be modified",
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
    check_complete(P, CASES, RECOGNIZED)


@pytest.mark.parametrize("case", RECOGNIZED, ids=lambda c: c.rule)
def test_recognized_only_rules_have_their_bodies(case: Golden) -> None:
    check_recognized(P, case)


@needs_sdk(P)
@pytest.mark.parametrize("case", RECOGNIZED, ids=lambda c: c.rule)
def test_recognized_only_bodies_pass_the_sdk_types(case: Golden) -> None:
    check_sdk(P, case)


def test_the_thinking_text_is_recognized_with_either_documentation_link() -> None:
    moved = _missing("tool_use", THINKING_DOCS.replace("anthropic", "claude"))
    assert recognize(moved) is rule("anthropic.thinking_missing")
    assert rule("anthropic.thinking_missing").text("messages.1.content.0", item="tool_use") == (
        _missing("tool_use")
    )


def test_a_dropped_thinking_block_of_an_earlier_turn_is_accepted() -> None:
    """The API wants the thinking block of the turn in progress only."""
    later = _thinking(USER, CALLS, BOTH, ANSWER, {"role": "user", "content": "Thanks."})
    assert validate(later, P) == []


def test_render_validates() -> None:
    check_render_validates(P)


@needs_sdk(P)
def test_render_passes_the_sdk_types() -> None:
    check_render(P)


@needs_sdk(P)
def test_the_sdk_check_can_fail() -> None:
    assert sdk_rejects_shape(P, _body({"role": "user", "content": [{"type": "tool_result"}]}))
    assert sdk_rejects_shape(P, _body({"role": "user", "content": "hi", "name": "x"}))
