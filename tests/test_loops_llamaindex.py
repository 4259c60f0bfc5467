"""The LlamaIndex adapter (sim/subjects/loops/frameworks/llamaindex.py) driven
through the loop contract: LlamaIndex's own workflow agent and memory, its
test model (``MockFunctionCallingLLM``) and the tools answered by the core's
harness step by step (tests/loops_play.py's Drive).

What these tests record is what llama-index-core 0.14.25 really does.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from loops_play import RESULT_WITHOUT_CALL, Drive, kinds, load_example, replay_script, roles
from loops_play import call as tool_call

from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.steps import Cancel, Complete, ReplyStep, Step, User

WINDOW = "examples/loops/llamaindex_window.py:agent"


@pytest.fixture(autouse=True)
def _framework() -> None:
    """Skip without the framework (imported when a test runs, not at collection)."""
    pytest.importorskip("llama_index.core")
    pytest.importorskip("llama_index.llms.anthropic")


@functools.cache
def _example(name: str, attr: str = "agent") -> Any:
    """An example's agent or factory, loaded once."""
    return load_example(name, attr)


def _adapter(plain: bool = False) -> Any:
    from prunecheck.sim.subjects.loops.frameworks.llamaindex import LlamaIndexAdapter

    return LlamaIndexAdapter(plain=plain)


def search(n: int) -> ToolCall:
    return tool_call(n, "search", query=f"query-{n}")


#: A parallel batch, its answer, then three more user turns: a window of eight
#: messages cuts between the batch's call and its results.
ROUND: list[Step] = [
    User("user message 1"),
    ReplyStep("", (search(1), search(2))),
    Complete("call_2", "result 2"),
    Complete("call_1", "result 1"),
    ReplyStep("answer 1"),
    User("user message 2"),
    ReplyStep("answer 2"),
    User("user message 3"),
    ReplyStep("answer 3"),
    User("user message 4"),
]


def _drive(target: object, tmp_path: Path, steps: list[Step], plain: bool = False) -> Drive:
    drive = Drive(_adapter(plain), target, tmp_path / "store")
    drive.step(*steps)
    return drive


def test_the_adapter_takes_an_agent_and_a_factory_and_finds_the_apps_memory() -> None:
    from llama_index.core.memory import ChatMemoryBuffer

    from prunecheck.sim.subjects.loops.frameworks.llamaindex import _memory

    adapter = _adapter()
    agent, factory = _example("llamaindex_window"), _example("llamaindex_window", "with_memory")
    assert adapter.accepts(agent) and adapter.accepts(factory)
    assert adapter.accepts(_example("llamaindex_buffer"))
    assert not adapter.accepts(lambda: "not an agent")
    assert [t.name for t in adapter.tools(agent)] == ["search", "send_email"]
    assert adapter.tools(agent)[0].parameters["required"] == ["query"]
    assert type(_memory(agent)).__name__ == "WindowMemory"  # the module's memory
    assert type(_memory(factory)).__name__ == "WindowMemory"  # the factory's
    assert isinstance(_memory(_example("llamaindex_buffer")), ChatMemoryBuffer)


def test_capabilities_and_budget_follow_the_configuration() -> None:
    buffer = _example("llamaindex_buffer")
    assert _adapter().capabilities(buffer) == {Capability.CANCEL, Capability.TRIM_HOOK}
    assert _adapter(plain=True).capabilities(buffer) == {Capability.CANCEL}
    assert _adapter().budget(buffer).text() == "2,000 tokens (ChatMemoryBuffer(token_limit=2000))"
    plain = _example("llamaindex_plain")  # no memory of the app's: LlamaIndex's default loop
    assert _adapter().capabilities(plain) == {Capability.CANCEL}
    assert _adapter().budget(plain) is None


def test_a_memory_whose_own_aget_reads_a_constant_keys_on_it_not_on_its_token_limit() -> None:
    """Round 37's TurnCappedMemory (a ChatMemoryBuffer, token_limit 3,000 by
    default) keeps the last MAX_USER_TURNS = 200 user turns in its own aget."""
    import importlib

    agent = importlib.import_module("tests.user_agents.held_back_r37.li_turn_cap_never").agent
    budget = _adapter().budget(agent)
    assert budget is not None and (budget.amount, budget.unit) == (200, "user turns")
    assert "MAX_USER_TURNS = 200" in budget.text() and "TurnCappedMemory.aget" in budget.text()
    assert _adapter(plain=True).budget(agent) is None


def test_the_window_memory_starts_a_request_with_results_whose_call_is_gone(
    tmp_path: Path,
) -> None:
    with _drive(_example("llamaindex_window"), tmp_path, ROUND) as drive:
        run = drive.run
        assert roles(run, 1) == ["S", "U", "A(call_1,call_2)", "T(call_2)", "T(call_1)"]
        assert roles(run)[:3] == ["S", "T(call_2)", "T(call_1)"]  # the window's edge
        # the example's LLM is LlamaIndex's Anthropic: Anthropic's rule and text, not OpenAI's
        texts = {i.text for i in run.incidents}
        assert RESULT_WITHOUT_CALL not in texts
        assert any("unexpected `tool_use_id` found in `tool_result` blocks: call_2" in t
                   for t in texts)  # fmt: skip
        assert {i.reason for i in run.incidents if i.reason} <= {"anthropic:result_without_call"}
        assert ("orphaned_result", ("call_2",)) in kinds(run)


def test_the_token_buffer_steps_over_the_tool_round_at_its_cut(tmp_path: Path) -> None:
    steps = [s if not isinstance(s, Complete) else Complete(s.call, "word " * 1200) for s in ROUND]
    with _drive(_example("llamaindex_buffer"), tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "U", "A", "U", "A", "U"]  # the batch dropped whole
        assert drive.run.incidents == []


def test_the_plain_agent_keeps_every_message(tmp_path: Path) -> None:
    with _drive(_example("llamaindex_window"), tmp_path, ROUND, plain=True) as drive:
        assert len(roles(drive.run)) == 11 and drive.run.incidents == []


def test_a_failed_tool_is_llamaindexs_error_result(tmp_path: Path) -> None:
    steps: list[Step] = [User("two"), ReplyStep("", (search(1), search(2)))]
    with _drive(_example("llamaindex_buffer"), tmp_path, steps) as drive:
        assert drive.run.waiting_calls() == ["call_1", "call_2"]  # both bodies started
        drive.fail("call_2", "boom")
        drive.complete("call_1", "one")
        messages = drive.run.ledger.requests[-1].body["messages"]
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        assert results == {"call_1": "one", "call_2": "boom"}


def test_a_cancel_drops_the_runs_tool_round_from_the_memory(tmp_path: Path) -> None:
    """LlamaIndex writes a run's scratchpad to the memory when the run ends:
    a cancelled run's tool that ran is never told (the framework's silent loss)."""
    steps: list[Step] = [User("go"), ReplyStep("", (search(1),)), Complete("call_1", "done"),
                         Cancel(), User("again")]  # fmt: skip
    with _drive(_example("llamaindex_buffer"), tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "U", "U"]
        assert kinds(drive.run) == [("silent_loss", ("call_1",))]


def test_the_script_renders_the_schedule_as_llamaindex_code() -> None:
    from prunecheck.sim.subjects.loops.frameworks.llamaindex_repro import script_text
    from prunecheck.sim.subjects.loops.steps import schedule_to_json

    expect = {"expect": ["orphaned_result", "provider_rejection"]}  # the cell's violations
    schedule = schedule_to_json(ROUND, target=WINDOW, framework="llamaindex", seed=1, extra=expect)
    text = script_text(WINDOW, schedule, memory_name="memory")
    compile(text, "repro.py", "exec")
    assert "answer('', ('call_1', 'search', " in text and "memory = app.memory" in text
    assert "prunecheck.sim" not in text and len(text.splitlines()) <= 80
    assert json.loads(schedule)["framework"] == "llamaindex"


@pytest.mark.slow
def test_the_script_reproduces_alone(tmp_path: Path) -> None:
    done = replay_script(_adapter(), WINDOW, ROUND, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("reproduced: orphaned_result")


def test_a_memory_on_a_database_file_outlives_a_crash_without_the_runs_tool_round(
    tmp_path: Path,
) -> None:
    """LlamaIndex's ``Memory`` (its SQL store replaced by the harness's, on the
    run's store): what finished turns wrote survives a crash; the run in
    flight had its tool round in its scratchpad only, so the tool that ran is
    never told (a silent loss, the framework's)."""
    from prunecheck.sim.subjects.loops.frameworks.llamaindex_memory import MEMORY_FILE

    agent = _example("llamaindex_memory")
    assert Capability.CRASH_NEW_MESSAGE in _adapter().capabilities(agent)
    assert _adapter().budget(agent).amount == 2100  # 3,000 tokens x 0.7 for the chat history
    with _drive(agent, tmp_path, ROUND[:5]) as drive:
        drive.user("user message 2")
        drive.reply(calls=(search(3),))
        drive.complete("call_3", "result 3")
        drive.crash()
        assert (tmp_path / "store" / MEMORY_FILE).is_file()
        drive.new_message("after the crash")
        assert roles(drive.run) == ["S", "U", "A(call_1,call_2)", "T(call_2)", "T(call_1)", "A",
                                    "U", "U"]  # fmt: skip
        assert ("silent_loss", ("call_3",)) in kinds(drive.run)


def test_the_memory_archives_whole_turns_past_its_limit(tmp_path: Path) -> None:
    steps = [s if not isinstance(s, Complete) else Complete(s.call, "word " * 1200) for s in ROUND]
    with _drive(_example("llamaindex_memory"), tmp_path, steps) as drive:
        assert roles(drive.run)[:2] == ["S", "U"] and "T(call_1)" not in roles(drive.run)
        assert drive.run.incidents == []


def test_the_memory_scripts_crash_reopens_its_database() -> None:
    from prunecheck.sim.subjects.loops.frameworks.llamaindex_repro import script_text
    from prunecheck.sim.subjects.loops.steps import Crash, NewMessage, schedule_to_json

    steps = [*ROUND[:4], Crash(), NewMessage("again")]
    spec = "examples/loops/llamaindex_memory.py:agent"
    schedule = schedule_to_json(steps, target=spec, framework="llamaindex", seed=1,
                                extra={"expect": ["silent_loss"]})  # fmt: skip
    text = script_text(spec, schedule, memory_name="memory", durable=True)
    compile(text, "repro.py", "exec")
    assert "agent = build(user)  # a new process" in text and "tempfile.mkdtemp()" in text
    assert len(text.splitlines()) <= 80


def test_the_openai_agent_adapter_leaves_workflow_agents_to_the_llamaindex_one() -> None:
    """LlamaIndex 0.11's ``OpenAIAgent`` adapter (the corpus's issue 13715) is tried
    before the workflow agents' one: it takes an agent by its class's module, so it
    imports nothing a release lacks, and leaves a FunctionAgent to ``llamaindex`` (detection
    itself, which imports every installed framework, runs in test_bad_inputs_llama.py)."""
    from prunecheck.sim.subjects.loops.frameworks.llamaindex_openai_agent import (
        LlamaIndexOpenAIAgentAdapter,
    )
    from prunecheck.sim.subjects.loops.target import FRAMEWORKS

    names = list(FRAMEWORKS)
    assert names.index("llamaindex-openai-agent") < names.index("llamaindex")
    legacy = LlamaIndexOpenAIAgentAdapter()
    assert not legacy.accepts(_example("llamaindex_window"))
    assert not legacy.accepts(_example("llamaindex_window", "with_memory"))


def test_an_agent_workflow_runs_its_root_agent_with_the_apps_memory(tmp_path: Path) -> None:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.core.memory import ChatMemoryBuffer

    window = _example("llamaindex_window")
    writer = FunctionAgent(name="writer", description="Writes the email", llm=window.llm,
                           tools=[window.tools[1]], system_prompt="Write.")  # fmt: skip
    researcher = FunctionAgent(name="researcher", description="Searches", llm=window.llm,
                               tools=[window.tools[0]], can_handoff_to=["writer"])  # fmt: skip
    workflow = AgentWorkflow(agents=[researcher, writer], root_agent="researcher")

    def app() -> tuple[Any, Any]:
        return workflow, ChatMemoryBuffer.from_defaults(token_limit=3000)

    assert [t.name for t in _adapter().tools(app)] == ["search", "send_email"]
    steps: list[Step] = [User("go"), ReplyStep("", (search(1),)), Complete("call_1", "found"),
                         ReplyStep("done"), User("again")]  # fmt: skip
    with _drive(app, tmp_path, steps) as drive:
        assert roles(drive.run) == ["U", "A(call_1)", "T(call_1)", "A", "U"]  # no system prompt
        assert drive.run.incidents == []


def test_a_summary_memory_summarizes_the_older_turns_on_its_double(tmp_path: Path) -> None:
    """``ChatSummaryMemoryBuffer``: its model (the user's) is replaced by a double
    answering the summary; the turn whose result does not fit goes whole into it."""
    from llama_index.core.memory import ChatSummaryMemoryBuffer

    from prunecheck.sim.subjects.loops.frameworks.llamaindex_doubles import SUMMARY

    agent = _example("llamaindex_window")

    def app() -> tuple[Any, Any]:
        return agent, ChatSummaryMemoryBuffer.from_defaults(llm=agent.llm, token_limit=300)

    assert _adapter().budget(app).text() == "300 tokens (ChatSummaryMemoryBuffer(token_limit=300))"
    steps: list[Step] = [User("go"), ReplyStep("", (search(1),)), Complete("call_1", "word " * 400),
                         ReplyStep("done"), User("again")]  # fmt: skip
    with _drive(app, tmp_path, steps) as drive:
        assert roles(drive.run) == ["S", "S", "U"]
        assert drive.run.ledger.requests[-1].body["messages"][1]["content"] == SUMMARY
        assert drive.run.incidents == []
