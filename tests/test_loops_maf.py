"""The Microsoft Agent Framework adapter (sim/subjects/loops/frameworks/maf.py)
driven through the loop contract: the framework's own run loop, function
invocation, history providers and compaction, the model and the tools
answered by the core's harness step by step (tests/loops_play.py's Drive).

What these tests record is what agent-framework-core 1.23.0 really does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from loops_play import (
    CALLS_WITHOUT_RESULTS,
    RESULT_WITHOUT_CALL,
    Drive,
    kinds,
    load_example,
    replay_script,
    roles,
)
from loops_play import call as tool_call
from loops_play import search_call as call

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.steps import Complete, Crash, NewMessage, ReplyStep, Step, User

COMPACTION = "examples/loops/maf_compaction.py"


@pytest.fixture(autouse=True)
def _framework(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip without the framework; the examples build an OpenAI client at import
    (a placeholder key, never used: ``prunecheck check`` loads them offline)."""
    pytest.importorskip("agent_framework")
    pytest.importorskip("agent_framework_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")


@functools.cache
def _example(name: str, attr: str = "agent") -> Any:
    """An example's agent or factory, loaded once."""
    return load_example(name, attr)


def _adapter(plain: bool = False) -> Any:
    from prunecheck.sim.subjects.loops.frameworks.maf import MAFAdapter

    return MAFAdapter(plain=plain)


#: A tool round, an answer, a second user message and its tool round.
ROUND: list[Step] = [
    User("look it up"),
    ReplyStep("", (call(1),)),
    Complete("call_1", "search result 1"),
    ReplyStep("done"),
    User("and now?"),
    ReplyStep("", (call(2),)),
    Complete("call_2", "search result 2"),
]


def _drive(target: object, tmp_path: Path, steps: list[Step], plain: bool = False) -> Drive:
    drive = Drive(_adapter(plain), target, tmp_path / "store")
    drive.step(*steps)
    return drive


def test_the_adapter_takes_an_agent_and_a_factory() -> None:
    adapter = _adapter()
    agent, durable = _example("maf_compaction"), _example("maf_durable")
    assert adapter.accepts(agent) and adapter.accepts(durable)
    assert not adapter.accepts(lambda: "not an agent") and not adapter.accepts(object())
    assert [t.name for t in adapter.tools(agent)] == ["search", "send_email"]
    assert adapter.tools(agent)[0].parameters["required"] == ["query"]


def test_capabilities_and_budget_follow_the_configuration() -> None:
    agent, durable = _example("maf_compaction"), _example("maf_durable")
    assert _adapter().capabilities(agent) == {Capability.CANCEL, Capability.TRIM_HOOK}
    assert _adapter().capabilities(durable) == {
        Capability.CANCEL, Capability.TRIM_HOOK, Capability.CRASH_NEW_MESSAGE,
    }  # fmt: skip
    assert Capability.TRIM_HOOK not in _adapter(plain=True).capabilities(agent)
    assert _adapter().budget(agent).text() == (
        "4 messages (SlidingWindowStrategy(keep_last_groups=4))"
    )
    assert _adapter().budget(_example("maf_compaction", "keep_last")) is None
    assert _adapter().budget(durable).unit == "tokens"
    plain = _example("maf_durable", "plain")
    assert _adapter().capabilities(plain) == {Capability.CANCEL, Capability.CRASH_NEW_MESSAGE}


def test_the_sliding_window_drops_whole_groups(tmp_path: Path) -> None:
    """The compaction provider's window keeps the last four groups of the loaded
    history: the first turn goes but its answer, the second tool round stays whole."""
    steps = [*ROUND, ReplyStep("done 2"), User("third")]
    with _drive(_example("maf_compaction"), tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "A", "U", "A(call_2)", "T(call_2)", "A", "U"]
        assert drive.run.incidents == []


def test_the_apps_own_strategy_cuts_a_call_from_its_result(tmp_path: Path) -> None:
    """``KeepLastMessages(5)`` runs before each model call of the run: the fifth
    message from the end is call_1's result."""
    with _drive(_example("maf_compaction", "keep_last"), tmp_path, ROUND) as drive:
        assert roles(drive.run) == ["S", "T(call_1)", "A", "U", "A(call_2)", "T(call_2)"]
        found = [i for i in drive.run.incidents if i.kind.value == "provider_rejection"]
        assert RESULT_WITHOUT_CALL in [i.text for i in found]
        assert ("orphaned_result", ("call_1",)) in kinds(drive.run)


def test_the_plain_agent_keeps_every_message(tmp_path: Path) -> None:
    target = _example("maf_compaction", "keep_last")
    with _drive(target, tmp_path, ROUND, plain=True) as drive:
        assert len(roles(drive.run)) == 8 and drive.run.incidents == []


def test_a_parallel_batch_runs_concurrently_and_a_failure_is_the_frameworks_error(
    tmp_path: Path,
) -> None:
    steps: list[Step] = [User("two"), ReplyStep("", (call(1), call(2)))]
    with _drive(_example("maf_compaction"), tmp_path, steps) as drive:
        assert drive.run.waiting_calls() == ["call_1", "call_2"]  # both bodies started
        drive.fail("call_2", "boom")
        drive.complete("call_1", "one")
        messages = drive.run.ledger.requests[-1].body["messages"]
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        assert results == {"call_1": "one", "call_2": "Error: Function failed."}


def test_a_cancel_loses_the_turn_the_tools_ran_in(tmp_path: Path) -> None:
    """The history provider saves when the run ends: a cancelled run saves
    nothing, so the email that was sent is not in the next request."""
    email = tool_call(1, "send_email", body="body-1", to="to-1")
    with _drive(_example("maf_compaction"), tmp_path, [User("go"), ReplyStep("", (email,))]) as d:
        d.complete("call_1", "sent")
        d.cancel()
        d.user("again")
        assert roles(d.run) == ["S", "U"]
        assert ("silent_loss", ("call_1",)) in kinds(d.run)


def test_a_crash_after_a_saved_call_leaves_it_unanswered(tmp_path: Path) -> None:
    """``require_per_service_call_history_persistence`` saves the model's
    call when the model answers; a crash before the tool's result is saved
    leaves the call in the file without a result, and the next message sends it."""
    steps: list[Step] = [User("go"), ReplyStep("", (call(1),)), Crash(), NewMessage("again")]
    with _drive(_example("maf_durable"), tmp_path, steps) as drive:
        assert (tmp_path / "store" / "history" / "prunecheck.jsonl").is_file()
        assert roles(drive.run) == ["S", "U", "A(call_1)", "U"]
        found = [i.text for i in drive.run.incidents if i.kind.value == "provider_rejection"]
        assert CALLS_WITHOUT_RESULTS + "call_1" in found


def test_saving_at_run_end_loses_the_crashed_turn(tmp_path: Path) -> None:
    steps: list[Step] = [User("go"), ReplyStep("", (call(1),)), Complete("call_1", "found"),
                         Crash(), NewMessage("again")]  # fmt: skip
    with _drive(_example("maf_durable", "plain"), tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "U"]
        assert ("silent_loss", ("call_1",)) in kinds(drive.run)


def test_the_script_renders_the_schedule_as_framework_code() -> None:
    from prunecheck.sim.subjects.loops.frameworks.maf_repro import script_text
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    spec = f"{COMPACTION}:keep_last"
    schedule = json.loads(schedule_to_json(ROUND, target=spec, framework="maf", seed=1))
    schedule["expect"] = ["orphaned_result", "provider_rejection"]
    text = script_text(spec, json.dumps(schedule))
    compile(text, "repro.py", "exec")
    assert "answer('', ('call_2', 'search', " in text and RESULT_WITHOUT_CALL in text
    assert "import prunecheck" not in text and "from prunecheck" not in text
    assert len(text.splitlines()) <= 80


@pytest.mark.slow
def test_the_script_reproduces_alone(tmp_path: Path) -> None:
    done = replay_script(_adapter(), "examples/loops/maf_durable.py:agent",
                         [User("go"), ReplyStep("", (call(1),)), Crash(), NewMessage("again")],
                         tmp_path)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("reproduced: unanswered_call")


def test_the_summarizer_replaces_the_oldest_groups_with_its_summary(tmp_path: Path) -> None:
    """``SummarizationStrategy`` asks its own client (the double answers a fixed
    summary, off the schedule) and keeps the newest groups whole."""
    from prunecheck.sim.subjects.loops.frameworks.maf_doubles import SUMMARY

    steps: list[Step] = [User("go")]
    for n in range(1, 5):
        steps += [ReplyStep("", (call(n),)), Complete(f"call_{n}", f"result {n}")]
    with _drive(_example("maf_compaction", "summarizing"), tmp_path, steps) as drive:
        last = drive.run.ledger.requests[-1].body["messages"]
        assert roles(drive.run) == ["S", "A", "A(call_3)", "T(call_3)", "A(call_4)", "T(call_4)"]
        assert last[1]["content"] == SUMMARY and drive.run.incidents == []
        assert _adapter().budget(_example("maf_compaction", "summarizing")).amount == 6


def test_an_approval_pauses_the_batch_and_a_denial_is_said_honestly(tmp_path: Path) -> None:
    """``send_email`` requires approval: the run stops before any call of the
    batch runs; once decided, the denied call gets the framework's rejection
    text and the other call runs."""
    from prunecheck.sim.subjects.loops.steps import Approve

    email = tool_call(1, "send_email", to="a", body="b")
    target = _example("maf_approval")
    assert Capability.INTERRUPT in _adapter().capabilities(target)
    with _drive(target, tmp_path, [User("go"), ReplyStep("", (email, call(2)))]) as drive:
        assert drive.run.approvals == ["call_1"] and drive.started == []
        drive.step(Approve("call_1", False))
        assert drive.started == ["call_2"]
        drive.complete("call_2", "found")
        results = {m["tool_call_id"]: m["content"] for m in drive.last["messages"]
                   if m["role"] == "tool"}  # fmt: skip
        assert results == {"call_1": "Error: Tool call invocation was rejected by user.",
                           "call_2": "found"}  # fmt: skip
        assert drive.run.incidents == []


def test_the_script_answers_an_approval_as_the_app_does() -> None:
    from prunecheck.sim.subjects.loops.frameworks.maf_repro import script_text
    from prunecheck.sim.subjects.loops.steps import Approve, schedule_to_json

    email = tool_call(1, "send_email", to="a", body="b")
    steps: list[Step] = [User("go"), ReplyStep("", (email,)), Approve("call_1", True)]
    spec = "examples/loops/maf_approval.py:agent"
    text = script_text(spec, schedule_to_json(steps, target=spec, framework="maf", seed=1))
    compile(text, "repro.py", "exec")
    assert "await step(approve(agent, session, 'call_1', True))" in text
    assert "to_function_approval_response" in text


def test_the_clients_own_chat_middleware_runs_before_the_model(tmp_path: Path) -> None:
    """A chat middleware on the user's client (one that keeps the last three
    messages of every model call) runs as configured: the harness sees the
    request it made, a result cut from its call."""
    from agent_framework import Agent, chat_middleware
    from agent_framework.openai import OpenAIChatCompletionClient

    @chat_middleware
    async def last_three(context: Any, call_next: Any) -> None:
        context.messages = list(context.messages)[-3:]
        await call_next()

    tools = _example("maf_compaction").default_options["tools"]
    agent = Agent(client=OpenAIChatCompletionClient(model="gpt-4.1", middleware=[last_three]),
                  instructions="Help.", tools=tools)  # fmt: skip
    with _drive(agent, tmp_path, ROUND) as drive:
        assert roles(drive.run, 2) == ["S", "T(call_1)", "A", "U"]
        assert roles(drive.run) == ["S", "U", "A(call_2)", "T(call_2)"]
        assert ("orphaned_result", ("call_1",)) in kinds(drive.run)
