"""The AutoGen adapter (sim/subjects/loops/frameworks/autogen.py) driven through the
loop contract: AgentChat's ``AssistantAgent`` with its own tool execution,
model context and ``save_state``/``load_state``, the model and the tools
answered by the core's harness step by step (tests/loops_play.py's Drive).

What these tests record is what autogen-agentchat 0.7.5 really does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from loops_play import (
    CALLS_WITHOUT_RESULTS,
    RESULT_WITHOUT_CALL,
    Drive,
    errors,
    load_example,
    played,
    replay_script,
    roles,
)
from loops_play import search_call as call

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter, state_file
from prunecheck.sim.subjects.loops.steps import (
    Cancel,
    Complete,
    Crash,
    NewMessage,
    ReplyStep,
    Step,
    User,
)


@pytest.fixture(autouse=True)
def _framework() -> None:
    """Skip without the framework (imported when a test runs, not at collection)."""
    pytest.importorskip("autogen_agentchat")


# Output sizes against the examples' limits (400 and 300 tokens; 4 characters a token):
WIDE = "x" * 650  # one batch of two results passes the token-limited one on its own
MID = "x" * 300  # two batches of two pass both limits, one does not
LIMITED = "examples/loops/autogen_token_limited.py:agent"
GUARDED = "examples/loops/autogen_guarded.py:agent"
PLAIN = "examples/loops/autogen_plain.py:agent"


def search(query: str) -> str:
    """Search the web."""
    raise AssertionError("the user's tool body must never run")


def plain(model_client: Any) -> Any:
    """An untrimmed assistant that reflects on its tool results."""
    from autogen_agentchat.agents import AssistantAgent

    return AssistantAgent(
        "assistant", model_client=model_client, tools=[search], reflect_on_tool_use=True
    )


def run(target: Any, tmp_path: Path, scenario: Callable[[Drive], None]) -> Drive:
    return played(AutoGenAdapter(), target, tmp_path, scenario)


def batch_of_two(d: Drive, size: str = "") -> None:
    """A turn whose reply issues call_1 and call_2 in parallel; call_2 completes first."""
    d.user("look both up")
    d.reply(calls=(call(1), call(2)))
    assert d.running_tools == ["call_1", "call_2"]
    d.complete("call_2", "call_2 result" + size)


def test_parallel_calls_completing_out_of_order_are_a_valid_request(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)
        assert d.pending_models == 0
        d.complete("call_1", "call_1 result")
        d.reply("both found")  # reflect_on_tool_use: one more model call

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    second = d.requests[1]
    assert roles(second) == [
        "S",
        "U",
        "A(call_1,call_2)",
        "T(call_1)",
        "T(call_2)",
    ]
    assert errors(second) == []
    assert [m["content"] for m in second["messages"][-2:]] == ["call_1 result", "call_2 result"]
    assert d.finished == ["call_2", "call_1"]
    saved = json.loads(state_file(tmp_path).read_text())
    assert len(saved["llm_context"]["messages"]) == 4  # saved after the turn returned


def test_adapter_reads_tools_and_capabilities() -> None:
    adapter = AutoGenAdapter()
    limited, guarded = load_example("autogen_token_limited"), load_example("autogen_guarded")
    assert adapter.accepts(plain) and adapter.accepts(limited) and adapter.accepts(guarded)
    assert not adapter.accepts(lambda model: None)
    assert [s.name for s in adapter.tools(limited)] == ["search", "send_email"]
    assert adapter.tools(limited)[1].parameters["required"] == ["to", "body"]
    base = {Capability.CANCEL, Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
    assert adapter.capabilities(plain) == base
    assert adapter.capabilities(limited) == base | {Capability.TRIM_HOOK}
    assert adapter.capabilities(guarded) == base | {Capability.TRIM_HOOK}


def one_batch(d: Drive, size: str) -> None:
    batch_of_two(d, size=size)
    d.complete("call_1", "call_1 result" + size)


@pytest.mark.slow
def test_token_limited_context_drops_the_call_and_keeps_its_results(tmp_path: Path) -> None:
    d = run(load_example("autogen_token_limited"), tmp_path, lambda d: one_batch(d, WIDE))
    broken = d.last  # the reflection request, right after the batch
    assert roles(broken) == ["S", "U", "T(call_1)", "T(call_2)"]
    assert errors(broken) == [RESULT_WITHOUT_CALL, RESULT_WITHOUT_CALL]


def two_turns(d: Drive) -> None:
    """Two turns of a batch of two mid-sized results each (the second turn still running)."""
    one_batch(d, MID)
    d.reply("both found")
    d.user("and the next two?")
    d.reply(calls=(call(3), call(4)))
    d.complete("call_3", MID)
    d.complete("call_4", MID)


@pytest.mark.slow
def test_token_limited_context_drops_older_results_and_keeps_their_call(tmp_path: Path) -> None:
    d = run(load_example("autogen_token_limited"), tmp_path, two_turns)
    broken = d.last
    assert roles(broken) == [
        "S", "U", "A(call_1,call_2)",
        "A(call_3,call_4)", "T(call_3)", "T(call_4)",
    ]  # fmt: skip
    assert errors(broken) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
def test_guarded_context_keeps_every_request_valid(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        two_turns(d)
        d.reply("done")

    d = run(load_example("autogen_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.requests) == 4
    assert all(errors(r) == [] for r in d.requests)
    assert "A(call_1,call_2)" not in roles(d.last)  # the guard trimmed whole units
    assert roles(d.last)[-3:] == ["A(call_3,call_4)", "T(call_3)", "T(call_4)"]


@pytest.mark.slow
def test_cancel_mid_batch_hangs_the_turn(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        d.user("hi")
        d.reply("hello")
        batch_of_two(d)
        d.cancel()  # CancellationToken.cancel(): the running call_1 is cancelled
        assert d.cancelled == ["call_1"]
        # ... and the turn never returns: nothing is pending on the harness, yet it
        # waits, 60 virtual seconds after the cancel too
        assert d.outcome() == "running"
        assert d.pending_models == 0 and d.running_tools == []
        assert [i.kind.value for i in d.run.incidents] == ["hang"]

    d = run(plain, tmp_path, scenario)
    assert d.finished == ["call_2"]  # ran, and no request shows its result


@pytest.mark.slow
def test_cancel_while_the_model_answers_cancels_the_turn_cleanly(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        d.user("hi")
        d.cancel()
        assert d.outcome() == "cancelled"
        d.user("again")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["S", "U", "U"]
    assert errors(d.last) == []


@pytest.mark.slow
def test_a_failing_or_timed_out_tool_becomes_an_error_result(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)
        d.timeout("call_1")
        d.reply("one failed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert errors(d.requests[1]) == []
    results = {m["tool_call_id"]: m["content"] for m in d.requests[1]["messages"][-2:]}
    # AutoGen sends str(exception) as the result: the harness's TimeoutError's text
    assert results == {"call_1": "the tool of call_1 timed out", "call_2": "call_2 result"}


@pytest.mark.slow
def test_a_streaming_agent_gets_the_reply_in_chunks(tmp_path: Path) -> None:
    from autogen_agentchat.agents import AssistantAgent

    seen: list[str] = []

    def streaming(model_client: Any) -> Any:
        agent = AssistantAgent(
            "assistant", model_client=model_client, tools=[search], model_client_stream=True
        )
        original = model_client.create_stream

        async def spy(*args: Any, **kwargs: Any) -> Any:
            async for item in original(*args, **kwargs):
                if isinstance(item, str):
                    seen.append(item)
                yield item

        model_client.create_stream = spy
        return agent

    def scenario(d: Drive) -> None:
        d.user("hi")
        d.reply("hello there, world", chunks=3)

    d = run(streaming, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert seen == ["hello ", "there,", " world"]  # three chunks of six characters
    assert d.history()[-1] == {"role": "assistant", "content": "hello there, world"}


def crash_mid_batch(d: Drive) -> None:
    d.user("hi")
    d.reply("hello")  # turn 1 returns: its state is saved
    batch_of_two(d)  # call_2 ran
    d.crash()


@pytest.mark.slow
def test_crash_then_resume_continues_from_the_last_saved_turn(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        crash_mid_batch(d)
        d.resume()
        d.reply("resumed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert roles(d.last) == ["S", "U", "A"]  # turn 2 is gone, call_2 with it
    assert errors(d.last) == []
    assert d.finished == ["call_2"]


@pytest.mark.slow
def test_crash_then_a_new_message_forgets_the_executed_call(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        crash_mid_batch(d)
        d.new_message("hello again")
        d.reply("hi")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["S", "U", "A", "U"]
    assert errors(d.last) == []
    shown = {m.get("tool_call_id") for r in d.requests for m in r["messages"]}
    assert "call_2" in d.finished and "call_2" not in shown
    assert [(i.kind.value, i.ids) for i in d.run.incidents] == [("silent_loss", ("call_2",))]


_BATCH: list[Step] = [
    User("look both up"),
    ReplyStep(calls=(call(1), call(2))),
    Complete("call_2", "b" + WIDE),
    Complete("call_1", "a" + WIDE),
]


def _last(stdout: str) -> str:
    return stdout.rstrip().splitlines()[-1]


def _request(stdout: str, number: int) -> list[dict[str, Any]]:
    """The messages of the script's ``request #number:`` line."""
    prefix = f"request #{number}: "
    line = next(ln for ln in stdout.splitlines() if ln.startswith(prefix))
    messages: list[dict[str, Any]] = json.loads(line.removeprefix(prefix))
    return messages


@pytest.mark.slow
def test_standalone_script_shows_the_broken_request_with_autogen_alone(tmp_path: Path) -> None:
    proc = replay_script(AutoGenAdapter(), LIMITED, _BATCH, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert roles({"messages": _request(proc.stdout, 2)}) == ["S", "U", "T(call_1)", "T(call_2)"]
    assert f"openai says: {RESULT_WITHOUT_CALL}" in proc.stdout
    assert _last(proc.stdout) == (
        "reproduced: orphaned_result: the result of call_1 is sent without its call"
    )


@pytest.mark.slow
def test_standalone_script_shows_the_ledger_mismatch_after_a_crash(tmp_path: Path) -> None:
    steps: list[Step] = [*_BATCH[:3], Crash(), NewMessage("hello again")]
    proc = replay_script(AutoGenAdapter(), PLAIN, steps, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "openai says" not in proc.stdout
    assert roles({"messages": _request(proc.stdout, 2)}) == ["S", "U"]
    assert _last(proc.stdout) == (
        "reproduced: silent_loss: search ran for call_2; request #2 does not say so"
    )


@pytest.mark.slow
def test_standalone_script_shows_the_hang_after_a_cancel(tmp_path: Path) -> None:
    steps: list[Step] = [*_BATCH[:3], Cancel()]
    proc = replay_script(AutoGenAdapter(), LIMITED, steps, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert _last(proc.stdout).startswith("reproduced: hang: the turn did not return")


@pytest.mark.slow
def test_standalone_script_of_a_schedule_that_fits_says_not_reproduced(tmp_path: Path) -> None:
    """The same batch completed in order, on the untrimmed agent: every check
    runs (the schedule names no violation) and none finds one."""
    batch = ReplyStep(calls=(call(1), call(2)))
    steps: list[Step] = [User("look both up"), batch, Complete("call_1", "a"),
                         Complete("call_2", "b"), ReplyStep("both")]  # fmt: skip
    proc = replay_script(AutoGenAdapter(), PLAIN, steps, tmp_path)
    assert (proc.returncode, _last(proc.stdout)) == (0, "not reproduced"), proc.stderr


def _instance(context: Any) -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.replay import ReplayChatCompletionClient

    info = {"vision": False, "function_calling": True, "json_output": False,
            "family": "unknown", "structured_output": False}  # fmt: skip
    client = ReplayChatCompletionClient(["never used"], model_info=info)  # type: ignore[arg-type]
    return AssistantAgent(
        "built",
        model_client=client,
        tools=[search],
        model_context=context,
        system_message="Hi.",
        reflect_on_tool_use=True,
    )


@pytest.mark.slow
def test_an_agent_instance_is_rebuilt_on_the_double_with_a_fresh_context(tmp_path: Path) -> None:
    from autogen_core.model_context import BufferedChatCompletionContext

    agent = _instance(BufferedChatCompletionContext(buffer_size=4))
    adapter = AutoGenAdapter()
    assert adapter.accepts(agent)
    assert adapter.capabilities(agent) >= {Capability.TRIM_HOOK}

    def scenario(d: Drive) -> None:
        batch_of_two(d)
        d.complete("call_1")
        d.reply("done")

    d = run(agent, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert roles(d.last) == [
        "S",
        "U",
        "A(call_1,call_2)",
        "T(call_1)",
        "T(call_2)",
    ]
    assert agent._model_context._messages == []  # the user's own object is untouched


def test_an_agent_whose_context_is_its_own_class_keeps_it(tmp_path: Path) -> None:
    from autogen_core.model_context import UnboundedChatCompletionContext

    class Mine(UnboundedChatCompletionContext):
        pass

    mine = Mine()
    with Drive(AutoGenAdapter(), _instance(mine), tmp_path) as drive:
        context = drive.run.loop._agent._model_context
    assert type(context) is Mine and context is not mine  # a fresh copy of the user's class


@pytest.mark.slow
def test_max_tool_iterations_bounds_the_batches_of_one_turn(tmp_path: Path) -> None:
    from autogen_agentchat.agents import AssistantAgent

    def looping(model_client: Any) -> Any:
        return AssistantAgent(
            "assistant", model_client=model_client, tools=[search], max_tool_iterations=2
        )

    def scenario(d: Drive) -> None:
        d.user("dig")
        d.reply(calls=(call(1), call(2)))
        d.complete("call_1")
        d.complete("call_2")
        d.reply(calls=(call(3),))  # the second iteration's model call has the tools
        d.complete("call_3", "last")
        assert d.pending_models == 0  # no third model call, no reflection

    d = run(looping, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.requests) == 2
    assert "tools" in d.requests[1] and errors(d.requests[1]) == []
    assert [m["role"] for m in d.history()][-2:] == ["assistant", "tool"]
