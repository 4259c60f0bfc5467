"""The Google ADK adapter (sim/subjects/loops/frameworks/adk.py) driven through
the loop contract: ADK's own Runner, its plugins (ContextFilterPlugin), its
events compaction and its session services, the model and the tools answered
by the core's harness step by step (tests/loops_play.py's Drive).

Importing ADK costs about 1.3 s of CPU, so the tests that drive it are slow
(``make test-all``); the fast ones check the rendering on stand-in objects and
the reproduction's text, without ADK.  What the slow tests record is what
google-adk 2.13.0 really does.
"""

from __future__ import annotations

import ast
import functools
import json
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from loops_play import Drive, kinds, load_example, roles
from loops_play import search_call as call

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.frameworks.adk_doubles import render_contents, render_events
from prunecheck.sim.subjects.loops.steps import (
    Cancel,
    Complete,
    Crash,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    User,
)


def _part(**fields: Any) -> SimpleNamespace:
    base = {"text": None, "thought": None, "function_call": None, "function_response": None}
    return SimpleNamespace(**(base | fields))


def _call(cid: str) -> SimpleNamespace:
    return SimpleNamespace(id=cid, name="search", args={"query": cid})


def test_contents_render_as_chat_messages_results_before_text() -> None:
    """A model content's function calls are the assistant's tool_calls; a user
    content's function responses are tool messages (a plain ``result`` is its
    text, any other response its JSON), then its text."""
    contents = [
        SimpleNamespace(role="user", parts=[_part(text="hi")]),
        SimpleNamespace(role="model", parts=[_part(text="let me look"),
                                             _part(function_call=_call("c1")),
                                             _part(function_call=_call("c2"))]),
        SimpleNamespace(role="user", parts=[
            _part(function_response=SimpleNamespace(id="c1", response={"result": "found"})),
            _part(function_response=SimpleNamespace(id="c2", response={"error": "boom"}))]),
    ]  # fmt: skip
    out = render_contents(contents, "be brief")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "tool"]
    calls: Any = out[2]["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "c2"]
    assert calls[0]["function"]["arguments"] == '{"query": "c1"}'
    assert [m.get("content") for m in out[3:]] == ["found", '{"error": "boom"}']


def test_compaction_events_are_not_what_the_session_holds() -> None:
    plain = SimpleNamespace(content=SimpleNamespace(role="user", parts=[_part(text="hi")]),
                            actions=SimpleNamespace(compaction=None))  # fmt: skip
    summary = SimpleNamespace(content=SimpleNamespace(role="model", parts=[_part(text="sum")]),
                              actions=SimpleNamespace(compaction=object()))  # fmt: skip
    assert render_events([plain, summary], None) == [{"role": "user", "content": "hi"}]


def test_the_script_is_short_and_standalone() -> None:
    """Every unsafe cell's script is at most 80 lines (issue 30) and imports no prunecheck."""
    from prunecheck.sim.subjects.loops.frameworks.adk_repro import script_text

    schedule = {"scenario": "cancel", "seed": 1, "expect": ["silent_loss"], "steps": [
        {"kind": "user", "text": "user message 1"},
        {"kind": "reply", "text": "", "calls": [
            {"id": "call_1", "name": "search", "arguments": '{"query": "q"}'}]},
        {"kind": "complete", "call": "call_1", "output": "found"},
        {"kind": "crash"}, {"kind": "new_message", "text": "again"},
    ]}  # fmt: skip
    text = script_text("examples/loops/adk_compaction.py:runner", json.dumps(schedule),
                       factory=True, durable=True)  # fmt: skip
    assert len(text.splitlines()) <= 80
    tree = ast.parse(text)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "google.adk.runners" in imported and "aiosqlite.core" in imported
    assert not [m for m in imported if m.startswith("prunecheck")]
    assert "start(runner, 'again')" in text and "runner = build(user)" in text


# ------------------------------------------------------------- ADK itself (slow)


pytestmark = pytest.mark.filterwarnings("ignore:.*EXPERIMENTAL")


@functools.cache
def _example(name: str, attr: str) -> Any:
    pytest.importorskip("google.adk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ADK's [EXPERIMENTAL] warnings
        return load_example(name, attr)


def _adapter(plain: bool = False) -> Any:
    from prunecheck.sim.subjects.loops.frameworks.adk import AdkAdapter

    return AdkAdapter(plain=plain)


def _drive(target: object, tmp_path: Path, steps: list[Step]) -> Drive:
    drive = Drive(_adapter(), target, tmp_path / "store")
    drive.step(*steps)
    return drive


#: Three tool rounds in a row: the custom filter's last five contents start
#: with the first round's function response.
ROUNDS: list[Step] = [
    User("look it up"),
    ReplyStep("", (call(1),)), Complete("call_1", "r1"),
    ReplyStep("", (call(2),)), Complete("call_2", "r2"),
    ReplyStep("", (call(3),)), Complete("call_3", "r3"),
]  # fmt: skip


@pytest.mark.slow
def test_the_adapter_reads_the_configuration() -> None:
    app, runner = _example("adk_context_filter", "app"), _example("adk_compaction", "runner")
    adapter = _adapter()
    assert adapter.accepts(app) and adapter.accepts(runner)
    assert not adapter.accepts(lambda: "not an agent")
    assert [t.name for t in adapter.tools(app)] == ["search", "send_email"]
    assert adapter.tools(app)[0].parameters["required"] == ["query"]
    assert adapter.capabilities(app) == {Capability.CANCEL, Capability.TRIM_HOOK}
    assert adapter.capabilities(runner) == {
        Capability.CANCEL, Capability.TRIM_HOOK, Capability.CRASH_RESUME,
        Capability.CRASH_NEW_MESSAGE,
    }  # fmt: skip
    assert Capability.TRIM_HOOK not in _adapter(plain=True).capabilities(app)
    assert adapter.budget(runner).text() == (
        "600 tokens (EventsCompactionConfig(token_threshold=600))"
    )


@pytest.mark.slow
def test_the_custom_filter_cuts_a_call_from_its_response(tmp_path: Path) -> None:
    with _drive(_example("adk_context_filter", "app"), tmp_path, ROUNDS) as drive:
        assert roles(drive.run)[:2] == ["S", "T(call_1)"]  # the filter kept a response first
        assert ("orphaned_result", ("call_1",)) in kinds(drive.run)


@pytest.mark.slow
def test_whole_invocations_keep_every_pair(tmp_path: Path) -> None:
    with _drive(_example("adk_context_filter", "invocations"), tmp_path, ROUNDS) as drive:
        assert drive.run.incidents == []


@pytest.mark.slow
def test_a_cancel_seals_the_open_calls_with_adk_abort_error(tmp_path: Path) -> None:
    steps: list[Step] = [User("two"), ReplyStep("", (call(1), call(2))), Cancel(), User("again")]
    with _drive(_example("adk_context_filter", "invocations"), tmp_path, steps) as drive:
        tools = [m for m in drive.run.ledger.requests[-1].body["messages"] if m["role"] == "tool"]
        assert [m["content"] for m in tools] == [
            '{"error": "Invocation was aborted by client."}'
        ] * 2


@pytest.mark.slow
def test_a_crash_loses_a_finished_call_of_an_unfinished_batch(tmp_path: Path) -> None:
    """ADK appends a batch's responses when the whole batch is done: a crash
    after one of two tools returned leaves the session with the calls alone,
    and the next request drops them (the database session restored)."""
    steps: list[Step] = [User("look it up"), ReplyStep("", (call(1), call(2))),
                         Complete("call_1", "r1"), Crash(), NewMessage("again")]  # fmt: skip
    with _drive(_example("adk_compaction", "runner"), tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "U", "U"]
        assert kinds(drive.run) == [("silent_loss", ("call_1",))]


@pytest.mark.slow
def test_a_resume_runs_the_unanswered_calls_again(tmp_path: Path) -> None:
    steps: list[Step] = [User("look it up"), ReplyStep("", (call(1), call(2))),
                         Complete("call_1", "r1"), Crash(), Resume()]  # fmt: skip
    with _drive(_example("adk_compaction", "runner"), tmp_path, steps) as drive:
        assert drive.run.waiting_calls() == ["call_1", "call_2"]  # both bodies start again


@pytest.mark.slow
def test_the_filter_script_reproduces_alone(tmp_path: Path) -> None:
    """The standalone script (ADK alone, from a folder outside the repository)
    shows the same orphaned result."""
    from loops_play import replay_script

    done = replay_script(_adapter(), "examples/loops/adk_context_filter.py:app", ROUNDS, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "reproduced: orphaned_result: the result of call_1" in done.stdout


@pytest.mark.slow
def test_the_crash_script_reproduces_alone(tmp_path: Path) -> None:
    from loops_play import replay_script

    steps: list[Step] = [User("look it up"), ReplyStep("", (call(1), call(2))),
                         Complete("call_1", "r1"), Crash(), NewMessage("again")]  # fmt: skip
    done = replay_script(_adapter(), "examples/loops/adk_compaction.py:runner", steps, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "reproduced: silent_loss: search ran for call_1" in done.stdout


def test_adk_abort_error_is_an_honest_placeholder_where_no_body_ran() -> None:
    """ADK seals a cancelled invocation's open calls with ``Invocation was
    aborted by client.``: true of a call whose body never finished, a false
    'not run' for one whose tool returned."""
    from prunecheck.sim.subjects.loops.placeholder import ruling

    text = '{"error": "Invocation was aborted by client."}'
    assert ruling(text, ran="none", call_words=()).honest
    assert not ruling(text, ran="ok", call_words=()).honest
