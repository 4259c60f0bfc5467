"""The provider registry: every provider's rules as data, and ``recognize``
finding each rule's text in the places logs carry it."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

import prunecheck.model.provider as provider_module
from prunecheck.model.provider import (
    PROVIDERS,
    REJECTION_KINDS,
    RULES,
    Provider,
    Rule,
    first_rule,
    recognize,
    rule,
    rules_of,
)

#: The texts issue 34 quotes from real trackers, verbatim (ids as quoted).
ISSUE_TEXTS = {
    "No tool output found for function call call_X.": "openai-responses.call_without_result",
    "No tool call found for function call output with call_id call_X.": (
        "openai-responses.result_without_call"
    ),
    "Item 'rs_…' of type 'reasoning' was provided without its required following item.": (
        "openai-responses.reasoning_without_item"
    ),
    "Please ensure that function response turn comes immediately after a function call turn.": (
        "gemini.result_without_call"
    ),
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn.": "gemini.call_out_of_place",
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn.": "gemini.call_without_result",
    "The number of toolResult blocks at messages.4.content exceeds the number of toolUse "
    "blocks of previous turn.": "bedrock.result_without_call",
    "messages.4.content: Conversation blocks and tool result blocks cannot be provided in "
    "the same turn.": "bedrock.user_after_result",
    "The toolConfig field must be defined when using toolUse and toolResult content blocks.": (
        "bedrock.tools_undeclared"
    ),
    "Invalid parameter: 'tool_call_id' of 'call_X' not found in 'tool_calls' of previous "
    "message.": "openai.result_for_another_call",
    # The four texts prunecheck knew before (DESIGN.md's facts):
    "messages.3.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message.": "anthropic.result_without_call",
    "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next "
    "message.": "anthropic.call_without_result",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.": "openai.result_without_call",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1": (
        "openai.call_without_result"
    ),
}

IDS = ("call_Ab12-x", "toolu_01XyZ")


def _sample(r: Rule) -> str:
    """The rule's text with a path of its location form and two ids."""
    path = (
        r.location.replace("N", "7").replace("K", "1").replace("[7]", "[7]")
        if "{path}" in r.template
        else ""
    )
    return r.text(path, IDS)


def test_every_provider_has_its_rules() -> None:
    assert set(PROVIDERS) == set(Provider)
    assert {p.value for p in Provider} >= {
        "openai", "openai-responses", "anthropic", "gemini", "bedrock", "mistral"
    }  # fmt: skip
    for provider, entry in PROVIDERS.items():
        assert entry.provider is provider
        assert entry.rules, provider
        assert rules_of(provider.value) == entry.rules
        assert entry.conversation in ("messages", "input", "contents")


@pytest.mark.parametrize("r", list(RULES.values()), ids=lambda r: r.id)
def test_each_rule_is_complete(r: Rule) -> None:
    assert r.id.startswith(f"{r.provider.value}."), r.id
    assert rule(r.id) is r
    assert r.kind in REJECTION_KINDS
    assert r.status == 400
    assert r.source.startswith("https://github.com/"), r.source
    assert r.location
    assert r.template == r.template.strip() and "  " not in r.template


def test_each_provider_answers_one_text_per_kind() -> None:
    for provider, entry in PROVIDERS.items():
        for kind in entry.kinds():
            found = first_rule(provider, kind)
            assert found.kind == kind and found.emitted and found.provider is provider
    with pytest.raises(KeyError, match="no rule of kind"):
        first_rule(Provider.MISTRAL, "reasoning_without_item")
    with pytest.raises(KeyError, match="known: openai"):
        rule("openai.no_such_rule")


@pytest.mark.parametrize(("text", "expected"), list(ISSUE_TEXTS.items()))
def test_the_issue_texts_are_recognized_verbatim(text: str, expected: str) -> None:
    found = recognize(text)
    assert found is not None and found.id == expected, text


def test_the_issue_quotes_the_toolconfig_text_without_its_first_word() -> None:
    quoted = "toolConfig field must be defined when using toolUse and toolResult content blocks"
    assert quoted in rule("bedrock.tools_undeclared").template


@pytest.mark.parametrize("r", list(RULES.values()), ids=lambda r: r.id)
def test_recognize_finds_each_text_wherever_a_log_carries_it(r: Rule) -> None:
    text = _sample(r)
    body = json.dumps({"error": {"message": text, "type": "invalid_request_error"}})
    carried = [
        text,
        f"2026-12-03T10:00:00Z ERROR provider said: {text} (request req_1)",
        body,
        json.dumps({"error": {"message": body}}),  # a proxy's error wrapping the provider's
        repr({"error": {"message": text}}),  # a Python exception's str()
        "\n    ".join(textwrap.wrap(text, 40)),  # a terminal's wrapped lines
    ]
    for where in carried:
        found = recognize(where)
        assert found is r, (where, found and found.id)


def test_recognize_names_no_rule_for_other_text() -> None:
    for text in ("", "HTTP 429: rate limited", "context_length_exceeded", "tool_result"):
        assert recognize(text) is None


def test_ids_and_paths_vary() -> None:
    r = rule("anthropic.result_without_call")
    for path, ids in (("messages.0.content.0", ("toolu_1",)), ("messages.312.content.9", IDS)):
        assert recognize(r.text(path, ids)) is r
    assert re.search(r"\{\w+\}", r.text("messages.1", IDS)) is None


def test_the_package_exports_the_registry() -> None:
    for name in ("PROVIDERS", "RULES", "Rule", "recognize", "rules_of", "pairing_errors"):
        assert name in provider_module.__all__
        assert getattr(provider_module, name) is not None
