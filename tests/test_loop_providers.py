"""The loop judge speaks the provider the agent talks to (issue 34):
Gemini's rules for an ADK agent on a Gemini model, the Responses API's rules
(in place of Chat Completions') for a Microsoft Agent Framework agent on the
framework's Responses client and for a black-box agent whose manifest says
``api = "responses"``; the judge's renderings (sim/subjects/loops/judge.py)
and each adapter's ``providers``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from loops_play import Drive, kinds, load_example, roles

from prunecheck.model.provider import Provider, rule
from prunecheck.sim.subjects.loops.judge import OWN_PROVIDERS, judge_request
from prunecheck.sim.subjects.loops.ledger import Ledger
from prunecheck.sim.subjects.loops.steps import Step

EXAMPLES = Path(__file__).parent.parent / "examples"


def _call(cid: str) -> dict[str, object]:
    return {"id": cid, "type": "function", "function": {"name": "search", "arguments": "{}"}}


#: A conversation whose first turn after the system prompt is a tool result:
#: what a keep-last trim leaves when it cuts a call from its result.
ORPHAN: dict[str, object] = {"messages": [
    {"role": "system", "content": "s"},
    {"role": "tool", "tool_call_id": "call_1", "content": "r1"},
    {"role": "user", "content": "and now?"},
]}  # fmt: skip

#: A call turn right after the system prompt, its result after it: Chat
#: Completions and Anthropic accept it, Gemini does not.
CALL_FIRST: dict[str, object] = {"messages": [
    {"role": "system", "content": "s"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_2")]},
    {"role": "tool", "tool_call_id": "call_2", "content": "r2"},
]}  # fmt: skip


def _rejections(body: Mapping[str, object], providers: frozenset[str]) -> list[tuple[str, str]]:
    found = judge_request(body, Ledger(), 3, trims=True, providers=providers)
    return [(i.reason, i.text) for i in found if i.kind.value == "provider_rejection"]


def test_gemini_alone_judges_an_agent_on_gemini_with_its_own_text() -> None:
    got = _rejections(ORPHAN, frozenset({"gemini"}))
    assert got[0] == ("gemini:result_without_call", rule("gemini.result_without_call").template)
    assert [r for r, _ in got] == ["gemini:result_without_call"]  # Gemini's rules alone
    assert _rejections(CALL_FIRST, frozenset()) == []
    assert _rejections(CALL_FIRST, frozenset({"gemini"})) == [
        ("gemini:call_out_of_place", rule("gemini.call_out_of_place").template)
    ]


def test_a_responses_client_gets_the_responses_text_not_chats() -> None:
    got = _rejections(ORPHAN, frozenset({"openai-responses"}))
    assert got[0] == (
        "openai-responses:result_without_call",
        "No tool call found for function call output with call_id call_1.",
    )
    assert not any(r.startswith("openai:") for r, _ in got)  # the client never speaks Chat
    unanswered: dict[str, object] = {"messages": [{"role": "user", "content": "q"},
                               {"role": "assistant", "content": None,
                                "tool_calls": [_call("call_3")]}]}  # fmt: skip
    assert _rejections(unanswered, frozenset({"openai-responses"}))[0][1] == (
        "No tool output found for function call call_3."
    )


def test_the_judge_knows_every_provider_an_adapter_may_name() -> None:
    assert {p for p in OWN_PROVIDERS} <= {p.value for p in Provider}


def test_a_blackbox_manifest_on_the_responses_api_is_judged_by_responses_rules() -> None:
    from prunecheck.sim.subjects.blackbox.manifest import load_manifest
    from prunecheck.sim.subjects.blackbox.process import ProcessAdapter

    adapter = ProcessAdapter()
    agents = EXAMPLES / "blackbox" / "ts-openai-agents" / "agent.toml"
    vercel = EXAMPLES / "blackbox" / "ts-vercel" / "agent.toml"
    assert adapter.providers(load_manifest(str(agents))) == {"openai-responses"}
    assert adapter.providers(load_manifest(str(vercel))) == {"openai"}  # api = "chat"


# ------------------------------------------------------------------ frameworks
def _maf(monkeypatch: pytest.MonkeyPatch) -> Any:
    pytest.importorskip("agent_framework_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")
    from prunecheck.sim.subjects.loops.frameworks.maf import client_providers

    return client_providers


def test_a_client_class_tells_which_api_it_speaks() -> None:
    """Fast twin of the two slow MAF tests below, on stand-in classes: the
    package of the client's class or of a base names the provider."""
    from prunecheck.sim.subjects.loops.frameworks.maf import client_providers

    responses = type("OpenAIChatClient", (), {"__module__": "agent_framework_openai._chat_client"})
    azure = type(
        "AzureOpenAIResponsesClient", (responses,), {"__module__": "agent_framework.azure"}
    )
    chat = type("OpenAIChatCompletionClient", (),
                {"__module__": "agent_framework_openai._chat_completion_client"})  # fmt: skip
    assert client_providers(responses()) == client_providers(azure()) == {"openai-responses"}
    assert client_providers(chat()) == {"openai"}  # Chat Completions: its rules alone
    assert client_providers(object()) == frozenset()


@pytest.mark.slow
def test_the_maf_responses_client_is_told_from_the_chat_completions_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client_providers = _maf(monkeypatch)
    from agent_framework.openai import OpenAIChatClient, OpenAIChatCompletionClient

    assert client_providers(OpenAIChatClient(model="gpt-4.1")) == {"openai-responses"}
    assert client_providers(OpenAIChatCompletionClient(model="gpt-4.1")) == {"openai"}
    assert client_providers(object()) == frozenset()


@pytest.mark.slow
def test_a_maf_agent_on_the_responses_client_hears_the_responses_400(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The app's keep-last-5 strategy (examples/loops/maf_compaction.py) on the
    framework's Responses client: the cut it makes is judged by the Responses
    rules, with the text that client would get."""
    _maf(monkeypatch)
    from agent_framework import Agent
    from agent_framework.openai import OpenAIChatClient
    from loops_play import search_call as call

    from prunecheck.sim.subjects.loops.frameworks.maf import MAFAdapter
    from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User

    example = "maf_compaction"
    agent = Agent(client=OpenAIChatClient(model="gpt-4.1"), instructions="You are a support agent.",
                  tools=[load_example(example, "search"), load_example(example, "send_email")],
                  compaction_strategy=load_example(example, "KeepLastMessages")(5))  # fmt: skip
    assert MAFAdapter().providers(agent) == {"openai-responses"}
    steps: list[Step] = [
        User("look it up"), ReplyStep("", (call(1),)), Complete("call_1", "search result 1"),
        ReplyStep("done"), User("and now?"), ReplyStep("", (call(2),)),
        Complete("call_2", "search result 2"),
    ]  # fmt: skip
    with Drive(MAFAdapter(), agent, tmp_path / "store") as drive:
        drive.step(*steps)
        assert roles(drive.run) == ["S", "T(call_1)", "A", "U", "A(call_2)", "T(call_2)"]
        texts = [i.text for i in drive.run.incidents if i.kind.value == "provider_rejection"]
        assert texts[0] == "No tool call found for function call output with call_id call_1."
        assert not any("preceeding message with 'tool_calls'" in (t or "") for t in texts)
        assert ("orphaned_result", ("call_1",)) in kinds(drive.run)


def _adk(name: str, attr: str) -> Any:
    pytest.importorskip("google.adk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK's [EXPERIMENTAL] warnings
        return load_example(name, attr)


@pytest.mark.slow
def test_an_adk_agent_on_gemini_is_judged_by_gemini_rules(tmp_path: Path) -> None:
    """ADK's own ContextFilterPlugin (examples/loops/adk_context_filter.py) keeps
    a function response first after three tool rounds: Gemini's text comes first."""
    from google.adk.agents import LlmAgent
    from loops_play import search_call as call

    from prunecheck.sim.subjects.loops.frameworks.adk import AdkAdapter
    from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User

    app = _adk("adk_context_filter", "app")
    adapter = AdkAdapter()
    assert adapter.providers(app) == {"gemini"}
    assert adapter.providers(LlmAgent(name="a", model="claude-3-5-sonnet@20240620")) == set()
    steps: list[Step] = [User("look it up")]
    for n in (1, 2, 3):
        steps += [ReplyStep("", (call(n),)), Complete(f"call_{n}", f"r{n}")]
    with Drive(adapter, app, tmp_path / "store") as drive:
        drive.step(*steps)
        found = [i for i in drive.run.incidents if i.kind.value == "provider_rejection"]
        assert found[0].reason == "gemini:result_without_call"
        assert found[0].text == rule("gemini.result_without_call").template


def _compaction_schedule() -> list[Step]:
    """examples/loops/adk_compaction.py's runner, its trim cell's minimal
    schedule (check's search, seed 0): the compaction summarizes the first
    batch and keeps call_3's model turn right after the summary's model turn."""
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User

    search = [ToolCall(f"call_{n}", "search", f'{{"query": "query-{n}"}}') for n in (1, 2)]
    email = ToolCall("call_3", "send_email", '{"body": "body-3", "to": "to-3"}')
    return [
        User("user message 1"), ReplyStep("", tuple(search)),
        Complete("call_1", "search result for call_1 lorem ipsum"),
        Complete("call_2", "search result for call_2" + " lorem ipsum" * 40),
        ReplyStep("", (email,)),
        Complete("call_3", "send_email result for call_3" + " lorem ipsum" * 40),
        ReplyStep("answer 7"), User("user message 8"),
    ]  # fmt: skip


def test_an_adk_script_checks_gemini_s_turn_rule_for_a_gemini_agent() -> None:
    """The reproduction of a Gemini-only rejection checks Gemini's rule and
    prints its text (fast: the script's text, without ADK)."""
    import json

    from prunecheck.sim.subjects.loops.frameworks.adk_repro import script_text

    schedule = json.dumps({"expect": ["provider_rejection"], "steps": [
        {"kind": "user", "text": "hi"}]})  # fmt: skip
    text = script_text("agent.py:app", schedule, gemini=True)
    assert repr(rule("gemini.call_out_of_place").template) in text
    compile(text, "repro.py", "exec")
    assert "gemini says" not in script_text("agent.py:app", schedule, gemini=False)


@pytest.mark.slow
def test_adk_compaction_leaves_a_call_turn_after_the_summary_which_gemini_rejects(
    tmp_path: Path,
) -> None:
    """ADK's EventsCompactionConfig writes its summary as a model turn; the next
    kept event is call_3's model turn, so the request breaks Gemini's rule
    (not Chat Completions' nor Anthropic's); the script reproduces it alone."""
    from loops_play import replay_script

    from prunecheck.sim.subjects.loops.frameworks.adk import AdkAdapter

    runner = _adk("adk_compaction", "runner")
    with Drive(AdkAdapter(), runner, tmp_path / "store") as drive:
        drive.step(*_compaction_schedule())
        found = [i for i in drive.run.incidents if i.kind.value == "provider_rejection"]
        assert [(i.reason, i.ids) for i in found] == [("gemini:call_out_of_place", ("call_3",))]
    done = replay_script(AdkAdapter(), "examples/loops/adk_compaction.py:runner",
                         _compaction_schedule(), tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gemini says: " + rule("gemini.call_out_of_place").template in done.stdout
