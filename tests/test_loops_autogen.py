"""The AutoGen adapter (sim/loops/frameworks/autogen.py) driven through the
loop contract: AgentChat's ``AssistantAgent`` with its own tool execution,
model context and ``save_state``/``load_state``, the model and the tools
answered by a tiny harness (tests/loop_doubles.py).

What these tests record is what autogen-agentchat 0.7.5 really does.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")

from loop_doubles import Drive, call, errors, roles

from prunecheck.sim.loops.contract import Capability
from prunecheck.sim.loops.frameworks.autogen import AutoGenAdapter, state_file
from prunecheck.sim.loops.steps import (
    Cancel,
    Complete,
    Crash,
    NewMessage,
    ReplyStep,
    Step,
    User,
    schedule_to_json,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "loops"
CALLS_WITHOUT_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
RESULT_WITHOUT_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)
# Output sizes against the examples' limits (400 and 300 tokens; 4 characters a token):
WIDE = "x" * 650  # one batch of two results passes the token-limited one on its own
MID = "x" * 300  # two batches of two pass both limits, one does not


def example(name: str) -> Any:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"loops_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.agent


async def search(query: str) -> str:
    """Search the web."""
    raise AssertionError("the user's tool body must never run")


def plain(model_client: Any) -> Any:
    """An untrimmed assistant that reflects on its tool results."""
    from autogen_agentchat.agents import AssistantAgent

    return AssistantAgent(
        "assistant", model_client=model_client, tools=[search], reflect_on_tool_use=True
    )


def run(target: Any, tmp_path: Path, scenario: Callable[[Drive], Awaitable[None]]) -> Drive:
    async def main() -> Drive:
        drive = Drive(AutoGenAdapter(), target, tmp_path)
        await scenario(drive)
        return drive

    return asyncio.run(main())


async def batch_of_two(d: Drive, size: str = "") -> None:
    """A turn whose reply issues call_1 and call_2 in parallel; call_2 completes first."""
    await d.user("look both up")
    await d.reply(calls=(call(1), call(2)))
    assert d.harness.running_tools == ["call_1", "call_2"]
    await d.complete("call_2", "call_2 result" + size)


def test_parallel_calls_completing_out_of_order_are_a_valid_request(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        assert d.harness.pending_models == 0
        await d.complete("call_1", "call_1 result")
        await d.reply("both found")  # reflect_on_tool_use: one more model call

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    second = d.harness.requests[1]
    assert roles(second) == [
        "system",
        "user",
        "assistant[call_1,call_2]",
        "tool:call_1",
        "tool:call_2",
    ]
    assert errors(second) == []
    assert [m["content"] for m in second["messages"][-2:]] == ["call_1 result", "call_2 result"]
    assert d.harness.finished == ["call_2", "call_1"]
    saved = json.loads(state_file(tmp_path).read_text())
    assert len(saved["llm_context"]["messages"]) == 4  # saved after the turn returned


def test_adapter_reads_tools_and_capabilities() -> None:
    adapter = AutoGenAdapter()
    limited, guarded = example("autogen_token_limited"), example("autogen_guarded")
    assert adapter.accepts(plain) and adapter.accepts(limited) and adapter.accepts(guarded)
    assert not adapter.accepts(lambda model: None)
    assert [s.name for s in adapter.tools(limited)] == ["search", "send_email"]
    assert adapter.tools(limited)[1].parameters["required"] == ["to", "body"]
    base = {Capability.CANCEL, Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
    assert adapter.capabilities(plain) == base
    assert adapter.capabilities(limited) == base | {Capability.TRIM_HOOK}
    assert adapter.capabilities(guarded) == base | {Capability.TRIM_HOOK}


async def one_batch(d: Drive, size: str) -> None:
    await batch_of_two(d, size=size)
    await d.complete("call_1", "call_1 result" + size)


@pytest.mark.slow
def test_token_limited_context_drops_the_call_and_keeps_its_results(tmp_path: Path) -> None:
    d = run(example("autogen_token_limited"), tmp_path, lambda d: one_batch(d, WIDE))
    broken = d.last  # the reflection request, right after the batch
    assert roles(broken) == ["system", "user", "tool:call_1", "tool:call_2"]
    assert errors(broken) == [RESULT_WITHOUT_CALL, RESULT_WITHOUT_CALL]


@pytest.mark.slow
def test_token_limited_context_drops_older_results_and_keeps_their_call(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await one_batch(d, MID)
        await d.reply("both found")
        await d.user("and the next two?")
        await d.reply(calls=(call(3), call(4)))
        await d.complete("call_3", MID)
        await d.complete("call_4", MID)

    d = run(example("autogen_token_limited"), tmp_path, scenario)
    broken = d.last
    assert roles(broken) == [
        "system", "user", "assistant[call_1,call_2]",
        "assistant[call_3,call_4]", "tool:call_3", "tool:call_4",
    ]  # fmt: skip
    assert errors(broken) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
def test_guarded_context_keeps_every_request_valid(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await one_batch(d, MID)
        await d.reply("both found")
        await d.user("and the next two?")
        await d.reply(calls=(call(3), call(4)))
        await d.complete("call_3", MID)
        await d.complete("call_4", MID)
        await d.reply("done")

    d = run(example("autogen_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.harness.requests) == 4
    assert all(errors(r) == [] for r in d.harness.requests)
    assert "assistant[call_1,call_2]" not in roles(d.last)  # the guard trimmed whole units
    assert roles(d.last)[-3:] == ["assistant[call_3,call_4]", "tool:call_3", "tool:call_4"]


@pytest.mark.slow
def test_cancel_mid_batch_hangs_the_turn_and_leaves_calls_without_results(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await d.user("hi")
        await d.reply("hello")
        await batch_of_two(d)
        await d.cancel()  # CancellationToken.cancel(): the running call_1 is cancelled
        assert d.harness.cancelled == ["call_1"]
        # ... and the turn never returns: nothing is pending on the harness, yet it waits
        assert d.outcome() == "running"
        assert d.harness.pending_models == 0 and d.harness.running_tools == []
        hung = d.turn
        await d.user("still there?")
        assert hung is not None and not hung.done()

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant[call_1,call_2]",
        "user",
    ]
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]
    assert d.harness.finished == ["call_2"]  # ran, and its result is gone


@pytest.mark.slow
def test_cancel_while_the_model_answers_cancels_the_turn_cleanly(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await d.user("hi")
        await d.cancel()
        assert d.outcome() == "cancelled"
        await d.user("again")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["system", "user", "user"]
    assert errors(d.last) == []


@pytest.mark.slow
def test_a_failing_or_timed_out_tool_becomes_an_error_result(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        await d.timeout("call_1")
        await d.reply("one failed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert errors(d.harness.requests[1]) == []
    results = {m["tool_call_id"]: m["content"] for m in d.harness.requests[1]["messages"][-2:]}
    assert results == {"call_1": "", "call_2": "call_2 result"}  # str(TimeoutError()) is ""


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

    async def scenario(d: Drive) -> None:
        await d.user("hi")
        await d.reply("hello there, world", chunks=3)

    d = run(streaming, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert seen == ["hello ", "there,", " world"]  # three chunks of six characters
    assert d.loop.history()[-1] == {"role": "assistant", "content": "hello there, world"}


async def crash_mid_batch(d: Drive) -> None:
    await d.user("hi")
    await d.reply("hello")  # turn 1 returns: its state is saved
    await batch_of_two(d)  # call_2 ran
    await d.crash()


@pytest.mark.slow
def test_crash_then_resume_continues_from_the_last_saved_turn(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await crash_mid_batch(d)
        await d.resume()
        await d.reply("resumed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert roles(d.last) == ["system", "user", "assistant"]  # turn 2 is gone, call_2 with it
    assert errors(d.last) == []
    assert d.harness.finished == ["call_2"]


@pytest.mark.slow
def test_crash_then_a_new_message_forgets_the_executed_call(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await crash_mid_batch(d)
        await d.user("hello again")
        await d.reply("hi")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["system", "user", "assistant", "user"]
    assert errors(d.last) == []
    shown = {m.get("tool_call_id") for r in d.harness.requests for m in r["messages"]}
    assert "call_2" in d.harness.finished and "call_2" not in shown


_NO_PRUNECHECK = (
    "import runpy, sys; sys.modules['prunecheck'] = None; "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _script_run(tmp_path: Path, spec: str, steps: list[Step], *, block: bool) -> Any:
    schedule = schedule_to_json(steps, target=spec, framework="autogen", seed=1)
    text = AutoGenAdapter().script(spec, schedule)
    path = tmp_path / "reproduce.py"
    path.write_text(text)
    argv = (
        [sys.executable, "-c", _NO_PRUNECHECK, str(path)] if block else [sys.executable, str(path)]
    )
    root = EXAMPLES.parent.parent
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300, check=False)


_BATCH: list[Step] = [
    User("look both up"),
    ReplyStep(calls=(call(1), call(2))),
    Complete("call_2", "b" + WIDE),
    Complete("call_1", "a" + WIDE),
]


@pytest.mark.slow
def test_standalone_script_shows_the_broken_request_with_autogen_alone(tmp_path: Path) -> None:
    spec = "examples/loops/autogen_token_limited.py:agent"
    proc = _script_run(tmp_path, spec, _BATCH, block=True)
    assert proc.returncode == 1, proc.stderr
    assert f"BROKEN REQUEST 2 (after step 4): 400 {RESULT_WITHOUT_CALL}" in proc.stdout


@pytest.mark.slow
def test_standalone_script_shows_the_ledger_mismatch_after_a_crash(tmp_path: Path) -> None:
    steps: list[Step] = [*_BATCH[:3], Crash(), NewMessage("hello again")]
    proc = _script_run(tmp_path, "examples/loops/autogen_guarded.py:agent", steps, block=False)
    assert proc.returncode == 1, proc.stderr
    assert "BROKEN REQUEST" not in proc.stdout
    assert "LEDGER MISMATCH: call_2 finished, its result never reached the model" in proc.stdout


@pytest.mark.slow
def test_standalone_script_shows_the_hang_after_a_cancel(tmp_path: Path) -> None:
    steps: list[Step] = [*_BATCH[:3], Cancel()]
    proc = _script_run(tmp_path, "examples/loops/autogen_token_limited.py:agent", steps, block=True)
    assert proc.returncode == 1, proc.stderr
    assert "HANG: the turn neither returned nor raised after the cancel" in proc.stdout


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

    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        await d.complete("call_1")
        await d.reply("done")

    d = run(agent, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert roles(d.last) == [
        "system",
        "user",
        "assistant[call_1,call_2]",
        "tool:call_1",
        "tool:call_2",
    ]
    assert agent._model_context._messages == []  # the user's own object is untouched


def test_an_agent_whose_context_cannot_be_rebuilt_asks_for_a_factory(tmp_path: Path) -> None:
    from autogen_core.model_context import UnboundedChatCompletionContext

    from prunecheck.model.errors import PolicyError

    class Mine(UnboundedChatCompletionContext):
        pass

    with pytest.raises(PolicyError) as err:
        AutoGenAdapter().open(_instance(Mine()), Drive.harness_for(tmp_path))
    assert "Mine cannot be rebuilt" in str(err.value)
    assert "def agent(model_client)" in str(err.value)


@pytest.mark.slow
def test_max_tool_iterations_bounds_the_batches_of_one_turn(tmp_path: Path) -> None:
    from autogen_agentchat.agents import AssistantAgent

    def looping(model_client: Any) -> Any:
        return AssistantAgent(
            "assistant", model_client=model_client, tools=[search], max_tool_iterations=2
        )

    async def scenario(d: Drive) -> None:
        await d.user("dig")
        await d.reply(calls=(call(1), call(2)))
        await d.complete("call_1")
        await d.complete("call_2")
        await d.reply(calls=(call(3),))  # the second iteration's model call has the tools
        await d.complete("call_3", "last")
        assert d.harness.pending_models == 0  # no third model call, no reflection

    d = run(looping, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.harness.requests) == 2
    assert "tools" in d.harness.requests[1] and errors(d.harness.requests[1]) == []
    assert [m["role"] for m in d.loop.history()][-2:] == ["assistant", "tool"]
