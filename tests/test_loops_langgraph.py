"""The LangGraph adapter (sim/loops/frameworks/langgraph.py) driven through the
loop contract: LangChain v1 ``create_agent`` with its own ToolNode,
middleware, SQLite checkpointer and interrupts, the model and the tools
answered by a tiny harness (tests/loop_doubles.py).

What these tests record is what langchain 1.5.2 / langgraph 1.2.24 really do.
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
from loop_doubles import Drive, call, errors, roles

from prunecheck.sim.loops.contract import Capability, ToolCall
from prunecheck.sim.loops.frameworks.langgraph import LangGraphAdapter
from prunecheck.sim.loops.steps import (
    Approve,
    Cancel,
    Complete,
    ReplyStep,
    Step,
    User,
    schedule_to_json,
)

# Installed or not, without importing them here: langchain.agents costs ~1.5 s at
# collection, in every xdist worker, while only one runs these tests.
NEEDS = ("langchain.agents", "langgraph.checkpoint.sqlite")
pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(name) for name in NEEDS),
    reason="needs the loops extra (langchain, langgraph-checkpoint-sqlite)",
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


def example(name: str) -> Any:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"loops_example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.agent


def plain(model: Any, checkpointer: Any = None) -> Any:
    """An untrimmed agent with one tool and a durable checkpointer."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Search the web."""
        raise AssertionError("the user's tool body must never run")

    return create_agent(model, tools=[search], system_prompt="You help.", checkpointer=checkpointer)


def run(target: Any, tmp_path: Path, scenario: Callable[[Drive], Awaitable[None]]) -> Drive:
    async def main() -> Drive:
        drive = Drive(LangGraphAdapter(), target, tmp_path)
        await scenario(drive)
        return drive

    return asyncio.run(main())


BIG = " lorem ipsum" * 40  # 120 tokens: two batches of two pass the guard (300), one not


async def batch_of_two(d: Drive, first: str = "call_2", size: str = "") -> None:
    """A user turn whose reply issues call_1 and call_2 in parallel; ``first`` completes first."""
    await d.user("look both up")
    await d.reply(calls=(call(1), call(2)))
    assert sorted(d.harness.running_tools) == ["call_1", "call_2"]
    await d.complete(first, f"{first} result{size}")


def test_parallel_calls_completing_out_of_order_are_a_valid_request(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d, first="call_2")
        assert d.harness.pending_models == 0  # the batch is not closed yet
        await d.complete("call_1", "call_1 result")
        await d.reply("both found")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.harness.requests) == 2
    second = d.harness.requests[1]
    assert roles(second) == [
        "system",
        "user",
        "assistant[call_1,call_2]",
        "tool:call_1",
        "tool:call_2",
    ]
    assert errors(second) == []
    assert [t["function"]["name"] for t in second["tools"]] == ["search"]
    assert d.harness.started == ["call_1", "call_2"]
    assert d.harness.finished == ["call_2", "call_1"]
    assert [m["role"] for m in d.loop.history()] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_adapter_reads_tools_and_capabilities_from_the_factory() -> None:
    adapter = LangGraphAdapter()
    trim, guarded = example("langgraph_trim"), example("langgraph_guarded")
    assert adapter.accepts(plain) and adapter.accepts(trim) and adapter.accepts(guarded)
    assert not adapter.accepts(lambda: None)
    assert not adapter.accepts(object())
    specs = adapter.tools(trim)
    assert [s.name for s in specs] == ["search", "send_email"]
    assert specs[1].parameters["required"] == ["to", "body"]
    assert adapter.capabilities(trim) == {
        Capability.CANCEL,
        Capability.CRASH_RESUME,
        Capability.CRASH_NEW_MESSAGE,
        Capability.TRIM_HOOK,
    }
    assert Capability.INTERRUPT in adapter.capabilities(guarded)
    assert Capability.TOOL_TIMEOUT not in adapter.capabilities(guarded)


async def two_turns(d: Drive, size: str = "") -> None:
    await batch_of_two(d, size=size)
    await d.complete("call_1", f"call_1 result{size}")
    await d.reply("both found")
    await d.user("and now?")


@pytest.mark.slow
def test_docs_trimming_middleware_sends_a_result_without_its_call(tmp_path: Path) -> None:
    d = run(example("langgraph_trim"), tmp_path, two_turns)
    broken = d.last
    assert roles(broken) == ["system", "user", "tool:call_2", "assistant", "user"]
    assert errors(broken) == [RESULT_WITHOUT_CALL]


@pytest.mark.slow
def test_guarded_trimming_keeps_every_request_valid(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await two_turns(d, size=BIG)
        await d.reply(calls=(call(3), call(4)))
        await d.complete("call_4", BIG)
        await d.complete("call_3", BIG)
        await d.reply("done")

    d = run(example("langgraph_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.harness.requests) == 4
    assert all(errors(r) == [] for r in d.harness.requests)
    # the guard did trim: the first unit (the first batch) is gone from the last request
    assert "assistant[call_1,call_2]" not in roles(d.last)
    assert roles(d.last)[-3:] == ["assistant[call_3,call_4]", "tool:call_3", "tool:call_4"]


@pytest.mark.slow
def test_approval_interrupt_pauses_the_batch_and_resumes_it(tmp_path: Path) -> None:
    email = ToolCall("call_2", "send_email", json.dumps({"to": "a@b.c", "body": "hi"}))

    async def scenario(d: Drive) -> None:
        await d.user("search and mail")
        await d.reply(calls=(call(1), email))
        assert d.outcome() == "returned"  # interrupted: the turn returns
        assert d.harness.approvals == ["call_2"]
        assert d.harness.started == []  # the whole batch waits for the decision
        await d.approve("call_2", False)
        assert d.harness.started == ["call_1"]
        await d.complete("call_1")
        await d.reply("done without mail")

    d = run(example("langgraph_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    # the middleware writes the rejection's tool message first, the approved result after it
    assert roles(d.harness.requests[1])[-2:] == ["tool:call_2", "tool:call_1"]
    rejected = d.harness.requests[1]["messages"][-2]
    assert "rejected" in rejected["content"]
    assert errors(d.harness.requests[1]) == []


@pytest.mark.slow
def test_cancel_mid_batch_then_a_new_message_sends_calls_without_results(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)  # call_2 has run (its side effect happened)
        await d.cancel()
        assert d.outcome() == "cancelled"
        assert d.harness.cancelled == ["call_1"]
        await d.user("still there?")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["system", "user", "assistant[call_1,call_2]", "user"]
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]
    # the finished call_2 is gone too: its result was never checkpointed
    assert d.harness.finished == ["call_2"]


@pytest.mark.slow
def test_crash_mid_batch_then_resume_reruns_only_the_unfinished_call(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        await d.crash()
        await d.resume()
        assert d.harness.running_tools == ["call_1"]
        await d.complete("call_1", "call_1 again")
        await d.reply("resumed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert d.harness.started == ["call_1", "call_2", "call_1"]  # call_2 not re-run
    assert roles(d.last)[-3:] == ["assistant[call_1,call_2]", "tool:call_1", "tool:call_2"]
    assert errors(d.last) == []
    tool_2 = d.last["messages"][-1]
    assert tool_2["content"] == "call_2 result"  # the pending write survived the crash


@pytest.mark.slow
def test_crash_mid_batch_then_a_new_message_sends_calls_without_results(tmp_path: Path) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        await d.crash()
        await d.user("hello again")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["system", "user", "assistant[call_1,call_2]", "user"]
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["fail", "timeout"])
def test_a_failing_tool_ends_the_turn_and_poisons_the_thread(tmp_path: Path, how: str) -> None:
    async def scenario(d: Drive) -> None:
        await batch_of_two(d)
        if how == "fail":
            await d.fail("call_1", "connection reset")
            assert d.outcome() == "raised ToolFailed"
        else:  # the tool's own timeout: ToolNode's default handler re-raises it too
            await d.timeout("call_1")
            assert d.outcome() == "raised TimeoutError"
        await d.user("try again")

    d = run(plain, tmp_path, scenario)
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
def test_crash_while_an_approval_is_pending_resumes_into_the_same_interrupt(tmp_path: Path) -> None:
    email = ToolCall("call_1", "send_email", json.dumps({"to": "a@b.c", "body": "hi"}))

    async def scenario(d: Drive) -> None:
        await d.user("mail")
        await d.reply(calls=(email,))
        await d.crash()
        await d.resume()
        await d.approve("call_1", True)
        await d.complete("call_1", "sent")
        await d.reply("mailed")

    d = run(example("langgraph_guarded"), tmp_path, scenario)
    assert d.harness.approvals == ["call_1", "call_1"]
    assert d.harness.started == ["call_1"]
    assert d.outcome() == "returned"
    assert errors(d.last) == []


@pytest.mark.slow
def test_the_same_schedule_gives_the_same_requests(tmp_path: Path) -> None:
    def once(where: Path) -> str:
        where.mkdir()

        async def scenario(d: Drive) -> None:
            await batch_of_two(d)
            await d.crash()
            await d.resume()
            await d.complete("call_1")
            await d.reply("ok")

        d = run(plain, where, scenario)
        assert len(d.harness.requests) == 2
        return json.dumps(d.harness.requests, sort_keys=True)

    assert once(tmp_path / "a") == once(tmp_path / "b")


_NO_PRUNECHECK = (
    "import runpy, sys; sys.modules['prunecheck'] = None; "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _script_run(tmp_path: Path, spec: str, steps: list[Step], *, block: bool) -> Any:
    schedule = schedule_to_json(steps, target=spec, framework="langgraph", seed=1)
    text = LangGraphAdapter().script(spec, schedule)
    imports = [ln.strip() for ln in text.splitlines() if "import" in ln]
    assert not [ln for ln in imports if ln.startswith(("from prunecheck", "import prunecheck"))]
    path = tmp_path / "reproduce.py"
    path.write_text(text)
    argv = (
        [sys.executable, "-c", _NO_PRUNECHECK, str(path)] if block else [sys.executable, str(path)]
    )
    root = EXAMPLES.parent.parent
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300, check=False)


_TWO_TURNS: list[Step] = [
    User("look both up"),
    ReplyStep(calls=(call(1), call(2))),
    Complete("call_2", "b found"),
    Complete("call_1", "a found"),
    ReplyStep(text="both found"),
    User("and now?"),
]


@pytest.mark.slow
def test_standalone_script_shows_the_broken_request_with_langchain_alone(tmp_path: Path) -> None:
    proc = _script_run(tmp_path, "examples/loops/langgraph_trim.py:agent", _TWO_TURNS, block=True)
    assert proc.returncode == 1, proc.stderr
    assert f"BROKEN REQUEST 3 (after step 6): 400 {RESULT_WITHOUT_CALL}" in proc.stdout


@pytest.mark.slow
def test_standalone_script_shows_the_ledger_mismatch_after_a_cancel(tmp_path: Path) -> None:
    steps: list[Step] = [*_TWO_TURNS[:3], Cancel(), User("still there?")]
    proc = _script_run(tmp_path, "examples/loops/langgraph_trim.py:agent", steps, block=True)
    assert proc.returncode == 1, proc.stderr
    assert f"400 {CALLS_WITHOUT_RESULTS}call_1, call_2" in proc.stdout
    assert "LEDGER MISMATCH: call_2 finished, its result never reached the model" in proc.stdout


@pytest.mark.slow
def test_standalone_script_of_the_guarded_agent_finds_nothing(tmp_path: Path) -> None:
    proc = _script_run(
        tmp_path, "examples/loops/langgraph_guarded.py:agent", _TWO_TURNS, block=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no broken request, no ledger mismatch" in proc.stdout


def per_call_hitl(model: Any, checkpointer: Any = None) -> Any:
    """Both tools gated, one interrupt per call (``interrupt_mode="per_call"``)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Search the web."""
        raise AssertionError("the user's tool body must never run")

    gate = HumanInTheLoopMiddleware(interrupt_on={"search": True}, interrupt_mode="per_call")
    return create_agent(model, tools=[search], middleware=[gate], checkpointer=checkpointer)


@pytest.mark.slow
def test_per_call_approvals_resume_once_every_call_is_decided(tmp_path: Path) -> None:
    assert Capability.INTERRUPT in LangGraphAdapter().capabilities(per_call_hitl)

    async def scenario(d: Drive) -> None:
        await d.user("two searches")
        await d.reply(calls=(call(1), call(2)))
        assert sorted(d.harness.approvals) == ["call_1", "call_2"]
        assert d.harness.started == []
        await d.approve("call_2", True)
        assert d.harness.started == []  # call_1 is still undecided
        await d.approve("call_1", False)
        assert d.harness.started == ["call_2"]
        await d.complete("call_2", "found")
        await d.reply("one search done")

    d = run(per_call_hitl, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert errors(d.last) == []
    contents = {
        m.get("tool_call_id"): m["content"] for m in d.last["messages"] if m["role"] == "tool"
    }
    assert contents["call_2"] == "found" and "rejected" in contents["call_1"]


@pytest.mark.slow
def test_standalone_script_replays_an_approval(tmp_path: Path) -> None:
    email = ToolCall("call_2", "send_email", json.dumps({"to": "a@b.c", "body": "hi"}))
    steps: list[Step] = [
        User("search and mail"),
        ReplyStep(calls=(call(1), email)),
        Approve("call_2", True),
        Complete("call_1", "found"),
        Complete("call_2", "sent"),
        ReplyStep(text="done"),
    ]
    proc = _script_run(tmp_path, "examples/loops/langgraph_guarded.py:agent", steps, block=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "skipped" not in proc.stdout
    assert "no broken request, no ledger mismatch" in proc.stdout
