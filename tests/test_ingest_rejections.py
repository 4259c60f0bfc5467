"""The telemetry import recognizes every provider's rejection text (issue 34):
each rule's text, carried in the error body that provider really sends,
logged beside a request, is read by ``prunecheck import``'s reader and named
in the finding with its provider and rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.provider import PROVIDERS, RULES, Provider, Rule, recognize
from prunecheck.sim.cli.app import main
from prunecheck.sim.ingest.bodies import error_text
from prunecheck.sim.ingest.incident import import_conversation
from prunecheck.sim.ingest.reading import read_log


def _sample(rule: Rule) -> str:
    path = rule.location.replace("N", "3").replace("K", "0") if "{path}" in rule.template else ""
    return rule.text(path, ("call_7Hq2x", "rs_0c38"))


def error_body(rule: Rule, text: str) -> dict[str, Any]:
    """The JSON error body ``rule``'s provider sends for ``text``, as the
    trackers quoting it show it."""
    provider = rule.provider
    if provider in (Provider.OPENAI, Provider.OPENAI_RESPONSES, Provider.DEEPSEEK):
        param = "input" if provider is Provider.OPENAI_RESPONSES else "messages.[3].role"
        return {"error": {"message": text, "type": "invalid_request_error", "param": param,
                          "code": None}}  # fmt: skip
    if provider is Provider.ANTHROPIC:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": text},
                "request_id": "req_011CVw2irzCqYx77e329n3GK"}  # fmt: skip
    if provider is Provider.GEMINI:
        return {"error": {"code": 400, "message": text, "status": "INVALID_ARGUMENT"}}
    if provider is Provider.BEDROCK:
        return {"message": text}  # the body; the type rides in x-amzn-ErrorType
    assert provider is Provider.MISTRAL
    return {"object": "error", "message": text, "type": "invalid_request_message_order",
            "param": None, "code": "3230"}  # fmt: skip


#: A request whose tool pairing reads intact: what a log holds when the
#: history the provider checked was not all logged.
_REQUEST = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Read a.txt."}]}


def _log(tmp_path: Path, rule: Rule) -> Path:
    record = {"conversation_id": "conv-1", "request": _REQUEST,
              "response": error_body(rule, _sample(rule)), "status": 400}  # fmt: skip
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("rule", list(RULES.values()), ids=lambda r: r.id)
def test_each_rejection_text_is_read_and_named(tmp_path: Path, rule: Rule) -> None:
    log = read_log([_log(tmp_path, rule)])
    ((conversation, requests),) = log.conversations.items()
    assert requests[0].rejection == _sample(rule) and requests[0].status == 400
    assert recognize(requests[0].rejection) is rule
    imported = import_conversation(conversation, requests)
    bad = imported.first_bad
    assert bad is not None and f"rule {rule.id} (" in bad.text, bad
    assert PROVIDERS[rule.provider].title in bad.text


def test_every_error_body_shape_gives_its_message() -> None:
    for rule in RULES.values():
        assert error_text(error_body(rule, "x")) == "x", rule.provider
    assert error_text({"Error": {"Message": "m", "Code": "ValidationException"}}) == "m"


def test_the_import_command_names_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = RULES["bedrock.call_without_result"]
    status = main(["import", str(_log(tmp_path, rule)), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert status in (0, 1), out  # the exit status is the replay's (not this test's subject)
    named = "AWS Bedrock Converse's rule bedrock.call_without_result (a call without its result)"
    assert named in out
    assert "Expected toolResult blocks at messages.3.content for the following Ids" in out
    assert "its text is bedrock.call_without_result's" in out
    assert "its cause is not tool pairing" not in out


#: Every rejection text of issue 34, exactly as the issue quotes it (its
#: placeholders ``call_X``, ``rs_…``, ``messages.N`` included; Bedrock's
#: toolConfig text without its leading "The" and closing period, as tracker
#: titles quote it), and the rule it is.
ISSUE_TEXTS = [
    ("No tool output found for function call call_X.", "openai-responses.call_without_result"),
    (
        "No tool call found for function call output with call_id call_X.",
        "openai-responses.result_without_call",
    ),
    (
        "Item 'rs_…' of type 'reasoning' was provided without its required following item.",
        "openai-responses.reasoning_without_item",
    ),
    (
        "Please ensure that function response turn comes immediately after a function call turn.",
        "gemini.result_without_call",
    ),
    (
        "Please ensure that function call turn comes immediately after a user turn or after a "
        "function response turn.",
        "gemini.call_out_of_place",
    ),
    (
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
        "gemini.call_without_result",
    ),
    (
        "The number of toolResult blocks at messages.N.content exceeds the number of toolUse "
        "blocks of previous turn.",
        "bedrock.result_without_call",
    ),
    (
        "messages.N.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn.",
        "bedrock.user_after_result",
    ),
    (
        "toolConfig field must be defined when using toolUse and toolResult content blocks",
        "bedrock.tools_undeclared",
    ),
    (
        "The toolConfig field must be defined when using toolUse and toolResult content blocks",
        "bedrock.tools_undeclared",
    ),
    (
        "Invalid parameter: 'tool_call_id' of 'call_X' not found in 'tool_calls' of previous "
        "message.",
        "openai.result_for_another_call",
    ),
]


@pytest.mark.parametrize(("text", "rule_id"), ISSUE_TEXTS, ids=[r for _, r in ISSUE_TEXTS])
def test_each_text_the_issue_quotes_is_named_by_the_import(
    tmp_path: Path, text: str, rule_id: str
) -> None:
    """A production log whose 400 carries the text as the issue quotes it:
    the import names the provider's rule."""
    rule = RULES[rule_id]
    assert recognize(text) is rule
    record = {"conversation_id": "conv-1", "request": _REQUEST,
              "response": error_body(rule, text), "status": 400}  # fmt: skip
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    ((conversation, requests),) = read_log([path]).conversations.items()
    bad = import_conversation(conversation, requests).first_bad
    assert bad is not None and f"rule {rule_id} (" in bad.text, bad
