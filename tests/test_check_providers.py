"""``check --provider NAME[,NAME]`` (issue 34): the check runs under the first
provider named and the verdict names each provider with its first rejection
of the reproduction's requests (its exact text and the request location it
names) or "accepts" — in the human output, ``--json`` (valid against the
schema), ``--junit`` and the Python API.

One cheap check (``recency``, checks before model calls, one slow-call
scenario, no search: about 0.4 s of CPU) is shared by the tests here."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import jsonschema
import pytest

from prunecheck.model.config import Repair, RuntimeConfig
from prunecheck.model.context import Message, Role
from prunecheck.model.provider import Provider, render, validate
from prunecheck.model.provider.from_body import messages_of_body
from prunecheck.model.system import replay
from prunecheck.sim.api.check import check_policy
from prunecheck.sim.api.documents import SCHEMA_VERSION
from prunecheck.sim.api.providers import (
    judgeable,
    parse_providers,
    provider_names,
)
from prunecheck.sim.api.repairs import repair_verdict
from prunecheck.sim.api.verdict import CheckResult, provider_lines
from prunecheck.sim.cli.app import main
from prunecheck.sim.reports.strictness import HISTORIES

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / f"verdict-{SCHEMA_VERSION}.json"
#: An unsafe check whose reproduction ends in a request every provider rejects.
SMALL = dict(levels=(0.5,), seeds=(1,), slow_levels=(0.5,), horizon=600.0, max_examples=0,
             placements=("before_invoke",), failures=False)  # fmt: skip
_ARGS = "--levels 0.5 --seeds 1 --slow-levels 0.5 --horizon 600 --max-examples 0 --no-failures"
ARGV = ["check", "recency", "--check-at", "before_invoke", *_ARGS.split(" ")]
EVERY = judgeable()


@cache
def unsafe() -> CheckResult:
    return check_policy("recency", providers=list(reversed(EVERY)), **SMALL)  # type: ignore[arg-type]


def _requests_of(result: CheckResult) -> list[tuple[int, list[Message]]]:
    """The reproduction's context at each step (what the runtime held)."""
    assert result.reproduction is not None and result.system is not None
    return [
        (step.index + 1, list(result.system.truth(state).context))
        for step, state in replay(result.reproduction, result.system, record=False)
    ]


def test_each_provider_named_gets_its_first_rejection_with_its_exact_text() -> None:
    result = unsafe()
    assert result.verdict == "unsafe"
    assert [j.provider for j in result.providers] == list(reversed(EVERY))
    assert result.config.provider is EVERY[-1]  # the first named runs the check
    contexts = dict(_requests_of(result))
    for judged in result.providers:
        assert judged.rejects and judged.error is not None and judged.step is not None
        # the text is the provider's own answer to that step's request, rendered its way
        expected = validate(render(contexts[judged.step], judged.provider), judged.provider)
        assert judged.error == expected[0]
        assert judged.error.provider is judged.provider
        # and no earlier request of the reproduction was rejected by it
        for step, context in contexts.items():
            if step < judged.step and judged.requests > 1:
                assert validate(render(context, judged.provider), judged.provider) == []


def test_the_human_verdict_names_each_provider(capsys: pytest.CaptureFixture[str]) -> None:
    status = main([*ARGV, "--provider", "openai", "--provider", "anthropic,openai"])
    out = capsys.readouterr().out
    assert status == 1
    block = out[out.index("providers (judged on the reproduction's requests):") :]
    lines = block.splitlines()[1:3]
    for line, provider in zip(lines, ("openai", "anthropic"), strict=True):
        assert line.startswith(f"  {provider}: rejects the request at step "), line
        assert "HTTP 400: " in line
    assert "preceeding message with 'tool_calls'" in lines[0]
    assert "unexpected `tool_use_id` found in `tool_result` blocks" in lines[1]


def test_json_and_junit_carry_each_judgment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    junit = tmp_path / "check.xml"
    status = main([*ARGV, "--provider", "anthropic,openai", "--json", "--junit", str(junit)])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(doc)
    assert status == 1 and doc["runtime"]["provider"] == "anthropic"
    assert [p["provider"] for p in doc["providers"]] == ["anthropic", "openai"]
    for entry in doc["providers"]:
        assert entry["verdict"] == "rejects" and entry["status"] == 400
        assert entry["location"].startswith("messages.") and entry["text"]
        assert entry["check_at"] == "before_invoke" and entry["step"] >= 1
    suites = {s.get("name"): s for s in ElementTree.parse(junit).getroot()}
    cases = list(suites["prunecheck.check.providers"])
    assert [c.get("name") for c in cases] == [
        "provider anthropic: rejects",
        "provider openai: rejects",
    ]
    for case, entry in zip(cases, doc["providers"], strict=True):
        failure = case.find("failure")
        assert failure is not None and entry["text"] in (failure.get("message") or "")
        assert entry["location"] in (failure.text or "")


def test_without_provider_the_document_has_no_judgments(capsys: pytest.CaptureFixture[str]) -> None:
    main([*ARGV, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert "providers" not in doc and doc["runtime"]["provider"] == "anthropic"


def test_a_safe_check_says_every_provider_accepts_with_nothing_to_judge() -> None:
    result = check_policy("unit_safe", providers="openai,anthropic", **SMALL)  # type: ignore[arg-type]
    assert result.safe
    assert [(j.provider, j.verdict, j.requests) for j in result.providers] == [
        (Provider.OPENAI, "accepts", 0),
        (Provider.ANTHROPIC, "accepts", 0),
    ]
    assert "no reproduction to judge" in result.providers[0].line()


def test_parse_providers_keeps_the_first_order_and_drops_repeats() -> None:
    assert parse_providers(["openai", "anthropic, openai"]) == (Provider.OPENAI, Provider.ANTHROPIC)
    assert parse_providers(None) == ()


@pytest.mark.parametrize(
    "history",
    [h for h in HISTORIES if not any(m.thought or m.after_thought for m in h.messages)],
    ids=lambda h: h.key,
)
def test_a_body_read_back_is_judged_as_the_context_it_came_from(history: object) -> None:
    """A runtime under test's request (an OpenAI body) read back as messages
    gets every provider's same answer as the context it was rendered from
    (a history with reasoning items is left out: a Chat Completions body
    does not carry them)."""
    messages = history.messages  # type: ignore[attr-defined]
    back = messages_of_body(render(messages, Provider.OPENAI), Provider.OPENAI)
    for provider in EVERY:
        want = validate(render(messages, provider), provider)
        got = validate(render(back, provider), provider)
        assert [(e.kind, e.path, e.ids, e.text) for e in got] == [
            (e.kind, e.path, e.ids, e.text) for e in want
        ]


# ---------------------------------------------------------------- repair layers
REPAIRING = dict(levels=(0.5,), seeds=(1,), slow_levels=(0.5,), max_examples=0,
                 placements=("after_append",), failures=False)  # fmt: skip


def test_a_repair_layer_is_judged_per_provider() -> None:
    """lowest_salience under a synthesizing repair layer: the layer answers a
    call whose result the policy evicted with a text no tool produced; the
    verdict says so, says the text is no honest placeholder, and names the
    providers that would have rejected the history unrepaired, with their texts."""
    config = RuntimeConfig(repair=Repair.SYNTHESIZE)
    result = check_policy("lowest_salience", config=config, providers="openai,anthropic",
                          **REPAIRING)  # type: ignore[arg-type]  # fmt: skip
    assert result.verdict == "unsafe" and result.repairs
    for repair in result.repairs:
        assert repair.layer == "synthesize" and (repair.dropped or repair.synthesized)
        assert not repair.honest
        assert {e.provider for e in repair.rejected_by} | set(repair.accepted_by) == {
            Provider.OPENAI, Provider.ANTHROPIC
        }  # fmt: skip
        for _, text, why in repair.synthesized:
            assert text == "[tool result unavailable]" and "says nothing" in why
    judged = next(r for r in result.repairs if r.synthesized)
    assert judged.rejected_by and all(e.kind == "call_without_result" for e in judged.rejected_by)
    lines = "\n".join(provider_lines(result))
    assert "repair layer synthesize" in lines and "unrepaired, the history would have" in lines
    assert judged.rejected_by[0].text in lines


def test_no_repair_layer_no_repair_judgment() -> None:
    assert unsafe().repairs == ()


def test_the_placeholder_rule_tells_an_honest_repair_from_an_invented_one() -> None:
    call = Message("a1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1",))
    user = Message("u1", Role.USER, 5, 1, 0.0, text="go")
    said = "The tool call was interrupted before a result was produced."
    honest = Message("r1", Role.TOOL, 5, 1, 1.0, call_id="c1", text=said)
    for ran, want in (("none", True), ("ok", False)):
        dropped, synthesized, is_honest, rejected, accepted = repair_verdict(
            (user, call), (user, call, honest), (Provider.OPENAI,), {"c1": ran}
        )
        assert dropped == () and is_honest is want and len(synthesized) == 1
        assert [e.kind for e in rejected] == ["call_without_result"] and accepted == []
    dropped, _, is_honest, rejected, _ = repair_verdict(
        (user, honest), (user,), (Provider.OPENAI,), {"c1": "ok"}
    )
    assert dropped == ("r1",) and not is_honest and rejected[0].kind == "result_without_call"


def test_json_carries_the_repair_judgments(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "lowest_salience", "--check-at", "after_append", "--repair", "synthesize",
            "--levels", "0.5", "--seeds", "1", "--slow-levels", "0.5", "--max-examples", "0",
            "--no-failures", "--provider", "openai,anthropic", "--json"]  # fmt: skip
    assert main(argv) == 1
    doc = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(doc)
    synthesized = [r for r in doc["repairs"] if r["synthesized"]]
    assert synthesized and synthesized[0]["honest"] is False
    assert {e["provider"] for e in synthesized[0]["rejected_by"]} == {"openai", "anthropic"}


# ------------------------------------------------------------------ agent loops
def test_a_loop_s_minimal_schedules_are_judged_per_provider(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """check loop:… --provider: the fake framework's trimmer that cuts a batch
    sends a result without its call; each provider names its own rejection of
    that request, in the human output and in --json."""
    fake = ROOT / "tests" / "loops_fake.py"
    argv = ["check", f"loop:{fake}:trimming_buggy", "--scenario", "parallel", "--max-examples",
            "20", "--seed", "1", "--no-failures", "--provider", "openai,anthropic"]  # fmt: skip
    junit = tmp_path / "loop.xml"
    assert main([*argv, "--json", "--junit", str(junit)]) == 1
    captured = capsys.readouterr()
    human, doc = captured.err, json.loads(captured.out)  # --json: the human text on stderr
    assert "providers (judged on the minimal schedules' requests):" in human
    assert "  openai: rejects the request at step " in human
    assert "of the minimal schedule of parallel" in human
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(doc)
    assert [(p["provider"], p["verdict"], p["check_at"]) for p in doc["providers"]] == [
        ("openai", "rejects", "parallel"),
        ("anthropic", "rejects", "parallel"),
    ]
    assert all(p["kind"] == "result_without_call" for p in doc["providers"])
    suites = {s.get("name"): s for s in ElementTree.parse(junit).getroot()}
    cases = list(suites["prunecheck.check.providers"])
    assert [c.get("name") for c in cases] == [
        "provider openai: rejects",
        "provider anthropic: rejects",
    ]
    assert all(c.find("failure") is not None for c in cases)


@pytest.mark.skipif(
    not {"bedrock", "gemini"} <= set(provider_names()),
    reason="Bedrock's and Gemini's request bodies are not rendered yet",
)
def test_check_provider_bedrock_gemini_names_each_first_rejection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 34's acceptance: ``check --provider bedrock,gemini`` on a built-in
    unsafe policy gives each provider's first rejection with its text."""
    status = main([*ARGV, "--provider", "bedrock,gemini", "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert status == 1 and doc["runtime"]["provider"] == "bedrock"
    assert [p["provider"] for p in doc["providers"]] == ["bedrock", "gemini"]
    for entry in doc["providers"]:
        assert entry["verdict"] == "rejects" and entry["text"] and entry["location"]
        assert f"  {entry['provider']}: rejects the request" in captured.err
        assert entry["text"] in captured.err
