"""The LangGraph adapter (sim/subjects/loops/frameworks/langgraph.py) driven through the
loop contract: LangChain v1 ``create_agent`` with its own ToolNode,
middleware, SQLite checkpointer and interrupts, the model and the tools
answered by the core's harness step by step (tests/loops_play.py's Drive).

What these tests record is what langchain 1.5.2 / langgraph 1.2.24 really do.
"""

from __future__ import annotations

import json
import subprocess
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
    play,
    played,
    roles,
)
from loops_play import search_call as call

from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.frameworks.langgraph import LangGraphAdapter
from prunecheck.sim.subjects.loops.steps import Approve, Cancel, Complete, ReplyStep, Step, User


@pytest.fixture(autouse=True)
def _framework() -> None:
    """Skip without the framework (imported when a test runs, not at collection)."""
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langgraph.checkpoint.sqlite")


def plain(model: Any, checkpointer: Any = None) -> Any:
    """An untrimmed agent with one tool and a durable checkpointer."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Search the web."""
        raise AssertionError("the user's tool body must never run")

    return create_agent(model, tools=[search], system_prompt="You help.", checkpointer=checkpointer)


def run(target: Any, tmp_path: Path, scenario: Callable[[Drive], None]) -> Drive:
    return played(LangGraphAdapter(), target, tmp_path, scenario)


BIG = " lorem ipsum" * 40  # 120 tokens: two batches of two pass the guard (300), one not


def batch_of_two(d: Drive, first: str = "call_2", size: str = "") -> None:
    """A user turn whose reply issues call_1 and call_2 in parallel; ``first`` completes first."""
    d.user("look both up")
    d.reply(calls=(call(1), call(2)))
    assert sorted(d.running_tools) == ["call_1", "call_2"]
    d.complete(first, f"{first} result{size}")


def test_parallel_calls_completing_out_of_order_are_a_valid_request(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d, first="call_2")
        assert d.pending_models == 0  # the batch is not closed yet
        d.complete("call_1", "call_1 result")
        d.reply("both found")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.requests) == 2
    second = d.requests[1]
    assert roles(second) == [
        "S",
        "U",
        "A(call_1,call_2)",
        "T(call_1)",
        "T(call_2)",
    ]
    assert errors(second) == []
    assert [t["function"]["name"] for t in second["tools"]] == ["search"]
    assert d.started == ["call_1", "call_2"]
    assert d.finished == ["call_2", "call_1"]
    assert [m["role"] for m in d.history()] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_adapter_reads_tools_and_capabilities_from_the_factory() -> None:
    adapter = LangGraphAdapter()
    trim, guarded = load_example("langgraph_trim"), load_example("langgraph_guarded")
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


def two_turns(d: Drive, size: str = "") -> None:
    batch_of_two(d, size=size)
    d.complete("call_1", f"call_1 result{size}")
    d.reply("both found")
    d.user("and now?")


@pytest.mark.slow
def test_docs_trimming_middleware_sends_a_result_without_its_call(tmp_path: Path) -> None:
    d = run(load_example("langgraph_trim"), tmp_path, two_turns)
    broken = d.last
    assert roles(broken) == ["S", "U", "T(call_2)", "A", "U"]
    assert errors(broken) == [RESULT_WITHOUT_CALL]


@pytest.mark.slow
def test_guarded_trimming_keeps_every_request_valid(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        two_turns(d, size=BIG)
        d.reply(calls=(call(3), call(4)))
        d.complete("call_4", BIG)
        d.complete("call_3", BIG)
        d.reply("done")

    d = run(load_example("langgraph_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    assert len(d.requests) == 4
    assert all(errors(r) == [] for r in d.requests)
    # the guard did trim: the first unit (the first batch) is gone from the last request
    assert "A(call_1,call_2)" not in roles(d.last)
    assert roles(d.last)[-3:] == ["A(call_3,call_4)", "T(call_3)", "T(call_4)"]


@pytest.mark.slow
def test_approval_interrupt_pauses_the_batch_and_resumes_it(tmp_path: Path) -> None:
    email = ToolCall("call_2", "send_email", json.dumps({"to": "a@b.c", "body": "hi"}))

    def scenario(d: Drive) -> None:
        d.user("search and mail")
        d.reply(calls=(call(1), email))
        assert d.outcome() == "returned"  # interrupted: the turn returns
        assert d.run.approvals == ["call_2"]
        assert d.started == []  # the whole batch waits for the decision
        d.approve("call_2", False)
        assert d.started == ["call_1"]
        d.complete("call_1")
        d.reply("done without mail")

    d = run(load_example("langgraph_guarded"), tmp_path, scenario)
    assert d.outcome() == "returned"
    # the middleware writes the rejection's tool message first, the approved result after it
    assert roles(d.requests[1])[-2:] == ["T(call_2)", "T(call_1)"]
    rejected = d.requests[1]["messages"][-2]
    assert "rejected" in rejected["content"]
    assert errors(d.requests[1]) == []


@pytest.mark.slow
def test_cancel_mid_batch_then_a_new_message_sends_calls_without_results(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)  # call_2 has run (its side effect happened)
        d.cancel()
        assert d.outcome() == "cancelled"
        assert d.cancelled == ["call_1"]
        d.user("still there?")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["S", "U", "A(call_1,call_2)", "U"]
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]
    # the finished call_2 is gone too: its result was never checkpointed
    assert d.finished == ["call_2"]


@pytest.mark.slow
def test_crash_mid_batch_then_resume_reruns_only_the_unfinished_call(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)
        d.crash()
        d.resume()
        assert d.running_tools == ["call_1"]
        d.complete("call_1", "call_1 again")
        d.reply("resumed")

    d = run(plain, tmp_path, scenario)
    assert d.outcome() == "returned"
    assert d.started == ["call_1", "call_2", "call_1"]  # call_2 not re-run
    assert roles(d.last)[-3:] == ["A(call_1,call_2)", "T(call_1)", "T(call_2)"]
    assert errors(d.last) == []
    tool_2 = d.last["messages"][-1]
    assert tool_2["content"] == "call_2 result"  # the pending write survived the crash


@pytest.mark.slow
def test_crash_mid_batch_then_a_new_message_sends_calls_without_results(tmp_path: Path) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)
        d.crash()
        d.new_message("hello again")

    d = run(plain, tmp_path, scenario)
    assert roles(d.last) == ["S", "U", "A(call_1,call_2)", "U"]
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["fail", "timeout"])
def test_a_failing_tool_ends_the_turn_and_poisons_the_thread(tmp_path: Path, how: str) -> None:
    def scenario(d: Drive) -> None:
        batch_of_two(d)
        if how == "fail":
            d.fail("call_1", "connection reset")
            assert d.outcome() == "raised ToolFailed"
        else:  # the tool's own timeout: ToolNode's default handler re-raises it too
            d.timeout("call_1")
            assert d.outcome() == "raised TimeoutError"
        d.user("try again")

    d = run(plain, tmp_path, scenario)
    assert errors(d.last) == [CALLS_WITHOUT_RESULTS + "call_1, call_2"]


@pytest.mark.slow
def test_crash_while_an_approval_is_pending_resumes_into_the_same_interrupt(tmp_path: Path) -> None:
    email = ToolCall("call_1", "send_email", json.dumps({"to": "a@b.c", "body": "hi"}))

    def scenario(d: Drive) -> None:
        d.user("mail")
        d.reply(calls=(email,))
        assert d.run.approvals == ["call_1"]
        d.crash()
        assert d.run.approvals == []
        d.resume()
        assert d.run.approvals == ["call_1"]  # asked again, from the checkpoint
        d.approve("call_1", True)
        d.complete("call_1", "sent")
        d.reply("mailed")

    d = run(load_example("langgraph_guarded"), tmp_path, scenario)
    assert d.started == ["call_1"]
    assert d.outcome() == "returned"
    assert errors(d.last) == []


@pytest.mark.slow
def test_the_same_schedule_gives_the_same_requests(tmp_path: Path) -> None:
    def once(where: Path) -> str:
        where.mkdir()

        def scenario(d: Drive) -> None:
            batch_of_two(d)
            d.crash()
            d.resume()
            d.complete("call_1")
            d.reply("ok")

        d = run(plain, where, scenario)
        assert len(d.requests) == 2
        return json.dumps(d.requests, sort_keys=True)

    assert once(tmp_path / "a") == once(tmp_path / "b")


TRIM = "examples/loops/langgraph_trim.py:agent"
GUARDED = "examples/loops/langgraph_guarded.py:agent"
ROOT = Path(__file__).resolve().parent.parent
_TWO_TURNS: list[Step] = [
    User("look both up"),
    ReplyStep(calls=(call(1), call(2))),
    Complete("call_2", "b found"),
    Complete("call_1", "a found"),
    ReplyStep(text="both found"),
    User("and now?"),
]


def replay(spec: str, steps: list[Step], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The adapter's script of ``steps`` on ``spec`` (from the repository's root),
    written to ``tmp_path`` and run from there with LangChain alone (an agent built
    on prunecheck's guard keeps it)."""
    from prunecheck.sim.reports.alone import run_alone
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    schedule = schedule_to_json(steps, target=spec, framework="langgraph", seed=1)
    text = LangGraphAdapter().script(str(ROOT / spec), schedule, folder=tmp_path)
    assert "import prunecheck" not in text and "from prunecheck" not in text
    script = tmp_path / "repro.py"
    script.write_text(text)
    guarded = "prunecheck.guard" in (ROOT / spec.rsplit(":", 1)[0]).read_text()
    return run_alone(script, "langgraph", tmp_path, keep_guard=guarded, timeout=120)


@pytest.mark.slow
def test_standalone_script_shows_the_broken_request_with_langchain_alone(tmp_path: Path) -> None:
    proc = replay(TRIM, _TWO_TURNS, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    sent = json.loads(proc.stdout.split("request #3: ", 1)[1].splitlines()[0])
    assert [m["role"] for m in sent] == ["system", "user", "tool", "assistant", "user"]
    assert f"openai says: {RESULT_WITHOUT_CALL}" in proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        "reproduced: orphaned_result: request #3 sends the result of call_2 without its call"
    )


@pytest.mark.slow
def test_standalone_script_shows_the_broken_request_after_a_cancel(tmp_path: Path) -> None:
    steps: list[Step] = [*_TWO_TURNS[:3], Cancel(), User("still there?")]
    proc = replay(TRIM, steps, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"openai says: {CALLS_WITHOUT_RESULTS}call_1, call_2" in proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        "reproduced: provider_rejection: request #2 sends call_1, call_2 without a result"
    )


@pytest.mark.slow
def test_standalone_script_of_the_guarded_agent_finds_nothing(tmp_path: Path) -> None:
    proc = replay(GUARDED, _TWO_TURNS, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["not reproduced"]


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

    def scenario(d: Drive) -> None:
        d.user("two searches")
        d.reply(calls=(call(1), call(2)))
        assert sorted(d.run.approvals) == ["call_1", "call_2"]
        assert d.started == []
        d.approve("call_2", True)
        assert d.started == []  # call_1 is still undecided
        d.approve("call_1", False)
        assert d.started == ["call_2"]
        d.complete("call_2", "found")
        d.reply("one search done")

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
    proc = replay(GUARDED, steps, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines() == ["not reproduced"]


def _asks_a_human() -> Callable[..., Any]:
    """A prebuilt ``create_react_agent`` whose ``ask_human`` tool calls LangGraph's
    ``interrupt()`` (langgraph issue 3126's agent) beside a plain tool."""
    import warnings

    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def ask_human(query: str) -> str:
        """Ask a human."""
        return str(interrupt({"query": query}))

    @tool
    def search(query: str) -> str:
        """Search."""
        return query

    def agent(model: Any, checkpointer: Any = None) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1
            from langgraph.prebuilt import create_react_agent

            return create_react_agent(model, [ask_human, search], checkpointer=checkpointer)

    return agent


def test_a_tool_that_calls_interrupt_is_an_approval_and_its_sibling_runs_once() -> None:
    """A tool whose function calls ``interrupt()`` pauses the run for a human
    (the interrupt class applies); approved, it goes on, and its parallel
    sibling, finished before the pause, does not run again (LangGraph 1's
    per-call tasks keep its result; 0.3's one tool node ran it twice)."""
    from prunecheck.sim.subjects.loops.frameworks.lc_doubles import asks_human

    adapter, agent = LangGraphAdapter(), _asks_a_human()
    assert [t.name for t in adapter._shape_of(agent).tools if asks_human(t)] == ["ask_human"]
    assert Capability.INTERRUPT in adapter.capabilities(agent)
    steps: list[Step] = [
        User("ask and search"),
        ReplyStep(
            calls=(
                ToolCall("call_1", "ask_human", '{"query": "q"}'),
                ToolCall("call_2", "search", '{"query": "s"}'),
            )
        ),
        Complete("call_2", "s found"),
        Approve("call_1", True),
        Complete("call_1", "the human says yes"),
    ]
    with play(adapter, agent, steps) as run:
        assert run.approvals == [] and len(run.ledger.bodies_of("call_2")) == 1
        assert [i.kind.value for i in run.incidents] == []
        assert sorted(roles(run)[-2:]) == ["T(call_1)", "T(call_2)"]
