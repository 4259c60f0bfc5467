"""The Strands Agents adapter (sim/subjects/loops/frameworks/strands.py) driven
through the loop contract: Strands' own event loop, conversation managers and
session manager, the model and the tools answered by the core's harness step
by step (tests/loops_play.py's Drive).

What these tests record is what strands-agents 1.62.0 really does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from loops_play import Drive, kinds, load_example, replay_script, roles
from loops_play import call as tool_call
from loops_play import search_call as call

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.steps import Cancel, Complete, ReplyStep, Step, User

SLIDING = "examples/loops/strands_sliding.py:agent"
BEDROCK_TEXT = (
    "A conversation must start with a user message. "
    "Try again with a conversation that starts with a user message."
)


@pytest.fixture(autouse=True)
def _framework() -> None:
    """Skip without the framework (imported when a test runs, not at collection)."""
    pytest.importorskip("strands")


@functools.cache
def _example(name: str, attr: str = "agent") -> Any:
    """An example's agent or factory, loaded once (a factory builds its Bedrock client once)."""
    return load_example(name, attr)


def _adapter(plain: bool = False) -> Any:
    from prunecheck.sim.subjects.loops.frameworks.strands import StrandsAdapter

    return StrandsAdapter(plain=plain)


#: Two tool rounds, an answer, then the next user message: a window of four
#: messages keeps no plain user message of the first turn.
ROUND: list[Step] = [
    User("look it up"),
    ReplyStep("", (call(1),)),
    Complete("call_1", "search result 1"),
    ReplyStep("", (call(2),)),
    Complete("call_2", "search result 2"),
    ReplyStep("done"),
    User("and now?"),
]


def _drive(target: object, tmp_path: Path, steps: list[Step], plain: bool = False) -> Drive:
    drive = Drive(_adapter(plain), target, tmp_path / "store")
    drive.step(*steps)
    return drive


def test_the_adapter_takes_an_agent_and_a_factory_and_never_calls_the_agent() -> None:
    from prunecheck.sim.subjects.loops.frameworks._common import build_target

    agent = _example("strands_sliding")
    # what every adapter's detection does: a Strands Agent is callable (calling it runs
    # it), and only a function, method or partial is called as a factory
    assert build_target(agent, "pydantic_ai", lambda obj: True) is None
    adapter = _adapter()
    assert adapter.accepts(agent) and adapter.accepts(_example("strands_summarizing"))
    assert not adapter.accepts(lambda: "not an agent")
    assert [t.name for t in adapter.tools(agent)] == ["search", "send_email"]
    assert adapter.tools(agent)[0].parameters["required"] == ["query"]
    assert agent.messages == []  # detection built nothing and ran nothing
    assert adapter.providers(agent) == {"bedrock"}
    assert adapter.providers(_example("strands_sliding", "on_openai")) == frozenset()


def test_capabilities_follow_the_configuration() -> None:
    sliding, summarizing = _example("strands_sliding"), _example("strands_summarizing")
    assert _adapter().capabilities(sliding) == {Capability.CANCEL, Capability.TRIM_HOOK}
    assert _adapter().capabilities(summarizing) == {
        Capability.CANCEL, Capability.TRIM_HOOK, Capability.CRASH_RESUME,
        Capability.CRASH_NEW_MESSAGE,
    }  # fmt: skip
    plain = _example("strands_summarizing", "plain")
    assert Capability.TRIM_HOOK not in _adapter().capabilities(plain)
    assert Capability.TRIM_HOOK not in _adapter(plain=True).capabilities(sliding)
    assert _adapter().budget(sliding).text() == (
        "4 messages (SlidingWindowConversationManager(window_size=4))"
    )


def test_the_small_window_starts_the_next_request_with_the_assistant_on_bedrock(
    tmp_path: Path,
) -> None:
    with _drive(_example("strands_sliding"), tmp_path, ROUND) as drive:
        run = drive.run
        assert roles(run, 1) == ["S", "U", "A(call_1)", "T(call_1)"]
        assert roles(run) == ["S", "A(call_2)", "T(call_2)", "A", "U"]  # trimmed to a pair
        found = [i for i in run.incidents if i.reason == "bedrock:first_message"]
        assert [i.text for i in found] == [BEDROCK_TEXT] and found[0].ids == ("call_2",)
        assert kinds(run) == [("provider_rejection", ("call_2",))]  # nothing else broke


def test_the_same_window_on_openai_is_accepted(tmp_path: Path) -> None:
    with _drive(_example("strands_sliding", "on_openai"), tmp_path, ROUND) as drive:
        assert roles(drive.run) == ["S", "A(call_2)", "T(call_2)", "A", "U"]
        assert drive.run.incidents == []


def test_a_window_trim_at_the_end_of_a_cancelled_turn_is_a_trim_not_a_loss(
    tmp_path: Path,
) -> None:
    """Strands' window runs at the end of every invocation, a cancelled one too:
    the batch it drops whole was held by the agent (the adapter tells the
    harness what the agent holds before its manager trims), so no silent_loss;
    what was left after the cancels is the framework's hang, not checked here."""
    email = tool_call(1, "send_email", body="body-1", to="to-1")
    batch = ReplyStep("", (email, call(2)))
    steps: list[Step] = [User("user message 1"), batch,
                         Complete("call_1", "sent"), Complete("call_2", "found"), Cancel(),
                         User("user message 6"), Cancel(), User("user message 8")]  # fmt: skip
    with _drive(_example("strands_sliding", "on_openai"), tmp_path, steps) as drive:
        assert "silent_loss" not in {kind for kind, _ in kinds(drive.run)}
        assert drive.run.ledger.held.keys() >= {"call_1", "call_2"}


def test_the_plain_agent_keeps_every_message(tmp_path: Path) -> None:
    with _drive(_example("strands_sliding"), tmp_path, ROUND, plain=True) as drive:
        assert roles(drive.run)[-4:] == ["A(call_2)", "T(call_2)", "A", "U"]
        assert len(roles(drive.run)) == 8 and drive.run.incidents == []


def test_a_parallel_batch_runs_concurrently_and_a_failure_is_strands_error_result(
    tmp_path: Path,
) -> None:
    steps: list[Step] = [User("two"), ReplyStep("", (call(1), call(2)))]
    with _drive(_example("strands_sliding", "on_openai"), tmp_path, steps) as drive:
        assert drive.run.waiting_calls() == ["call_1", "call_2"]  # both bodies started
        drive.fail("call_2", "boom")
        drive.complete("call_1", "one")
        messages = drive.run.ledger.requests[-1].body["messages"]
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        assert results == {"call_1": "one", "call_2": "Error: ToolFailed - boom"}


def test_cancel_while_a_tool_runs_waits_for_it(tmp_path: Path) -> None:
    """``agent.cancel()`` stops at Strands' next checkpoint: a running tool is
    not one, so the turn does not return while the tool does not (a hang, the
    framework's: the plain agent has it too)."""
    steps: list[Step] = [User("go"), ReplyStep("", (call(1),)), Cancel()]
    with _drive(_example("strands_sliding", "on_openai"), tmp_path, steps) as drive:
        assert [k for k, _ in kinds(drive.run)] == ["hang"]


@pytest.mark.parametrize("attr", ["agent", "on_openai"])
def test_cancel_while_the_model_streams_stops_the_turn(tmp_path: Path, attr: str) -> None:
    """The reply's next chunk is Strands' checkpoint: the turn stops there."""
    with _drive(_example("strands_sliding", attr), tmp_path, [User("go"), Cancel()]) as drive:
        assert drive.run.incidents == [] and not drive.run.turn_running
        assert [m["role"] for m in drive.run.loop.history()][:1] == ["user"]


def test_a_crash_restores_the_session_and_says_the_tool_was_interrupted(tmp_path: Path) -> None:
    """The session holds the batch's calls, not the result of the one that ran:
    on a new message Strands answers both with ``Tool was interrupted.``, which
    is not what call_1's tool did (a synthesized result)."""
    with _drive(_example("strands_summarizing", "plain"), tmp_path, []) as drive:
        drive.user("two")
        drive.reply(calls=(call(1), call(2)))
        drive.complete("call_1", "one")
        drive.crash()
        assert (tmp_path / "store" / "session_support-plain").is_dir()
        drive.new_message("again")
        last = drive.run.ledger.requests[-1].body["messages"]
        results = {m["tool_call_id"]: m["content"] for m in last if m["role"] == "tool"}
        assert results == {"call_1": "Tool was interrupted.", "call_2": "Tool was interrupted."}
        assert ("synthesized_result", ("call_1",)) in kinds(drive.run)


def test_a_resume_runs_the_saved_calls_again(tmp_path: Path) -> None:
    with _drive(_example("strands_summarizing", "plain"), tmp_path, []) as drive:
        drive.user("two")
        drive.reply(calls=(call(1), call(2)))
        drive.complete("call_1", "one")
        drive.crash()
        drive.resume()  # invoke_async() without a prompt: the latest toolUse runs again
        assert drive.run.waiting_calls() == ["call_1", "call_2"]
        drive.complete("call_1", "one again")
        assert ("duplicated_side_effect", ("call_1",)) in kinds(drive.run)


def test_the_script_renders_the_schedule_as_strands_code() -> None:
    from prunecheck.sim.subjects.loops.frameworks.strands_repro import script_text
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    schedule = schedule_to_json(ROUND, target=SLIDING, framework="strands", seed=1)
    text = script_text(SLIDING, schedule, bedrock=True)
    compile(text, "repro.py", "exec")
    assert "answer('', ('call_2', 'search', " in text and BEDROCK_TEXT in text
    assert "prunecheck.sim" not in text and len(text.splitlines()) < 150
    assert json.loads(schedule)["framework"] == "strands"


@pytest.mark.slow
def test_the_script_reproduces_alone(tmp_path: Path) -> None:
    done = replay_script(_adapter(), SLIDING, ROUND, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("reproduced: provider_rejection")


def test_a_result_cut_in_the_middle_is_a_truncated_payload() -> None:
    """Strands 1.34's sliding window keeps a long result's first and last 200
    characters with a note between: a shortened copy, not an invented result."""
    from prunecheck.sim.subjects.loops.judge import judge_request
    from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd, Ledger

    output = "result of call_1 " + "lorem ipsum " * 40 + "the end"
    cut = f"{output[:200]}...\n\n... [truncated: {len(output) - 400} chars removed] ...\n\n..."
    ledger = Ledger()
    ledger.issue((call(1),), 0)
    ledger.bodies.append(Body("call_1", 0, end=BodyEnd.OK, output=output))
    body = {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
         "function": {"name": "search", "arguments": call(1).arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": cut + output[-200:]},
    ]}  # fmt: skip
    found = judge_request(body, ledger, 1, trims=True)
    assert [(i.kind.value, i.reason) for i in found] == [("truncated_payload", "result")]
    assert "first 200 and last 200 characters kept" in found[0].detail
    invented = dict(body, messages=[*body["messages"][:2], {"role": "tool",
                    "tool_call_id": "call_1", "content": "the search found nothing"}])  # fmt: skip
    assert [i.kind.value for i in judge_request(invented, ledger, 1, trims=True)] == [
        "synthesized_result"
    ]


def test_the_summarizer_replaces_the_oldest_messages_with_a_summary(tmp_path: Path) -> None:
    """Proactive compression over 70% of the model's 1,000-token window: Strands
    summarizes through a thread of its own (``run_async``), which the double answers
    off the harness's loop; the summary stands first, the tool round is kept whole."""
    from prunecheck.sim.subjects.loops.frameworks.strands_doubles import SUMMARY

    with _drive(_example("strands_summarizing"), tmp_path, []) as drive:
        drive.user("look it up")
        drive.reply(calls=(call(1),))
        drive.complete("call_1", "x" * 4000)
        drive.reply("done")
        drive.user("and now?")
        last = drive.run.ledger.requests[-1].body["messages"]
        assert roles(drive.run) == ["S", "U", "A(call_1)", "T(call_1)", "A", "U"]
        assert last[1]["content"] == SUMMARY and last[3]["content"] == "x" * 4000
        assert len(drive.run.ledger.requests) == 3 and drive.run.incidents == []
