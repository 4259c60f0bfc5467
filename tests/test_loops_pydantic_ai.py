"""The pydantic-ai adapter driven through the loop harness (issue 21).

Each test plays a schedule against an example agent of ``examples/loops/``
in pydantic-ai's own loop, on the core's harness (:class:`LoopRun`: virtual
time, a ledger, the judge), and records what pydantic-ai 2.68 really does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from loops_play import EXAMPLES, call, kinds, load_example, play, roles, run_script, tool_text

from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import Persist, PydanticAIAdapter
from prunecheck.sim.subjects.loops.steps import (
    Advance,
    Approve,
    Cancel,
    Complete,
    Crash,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    User,
    schedule_to_json,
)


@pytest.fixture(autouse=True)
def _framework() -> None:
    """Skip without the framework; imported when a test runs, not at collection
    (every xdist worker collects every module)."""
    pytest.importorskip("pydantic_ai")


KEEP_LAST = "pydantic_ai_keep_last"
TURNS = "pydantic_ai_turns"
INTERRUPTED = "The tool call was interrupted before a result was produced."

#: A parallel batch of two: call_2 finishes, call_1 still runs.
MID_BATCH: list[Step] = [
    User("fix the bug"),
    ReplyStep("", (call(1), call(2))),
    Complete("call_2", "two"),
]


def test_parallel_batch_completing_out_of_order_is_a_valid_request() -> None:
    adapter = PydanticAIAdapter()
    agent = load_example(TURNS, "agent")
    assert adapter.accepts(agent) and adapter.accepts(lambda: agent)
    assert not adapter.accepts(object())
    assert [t.name for t in adapter.tools(agent)] == ["read_file", "run_tests", "delete_file"]
    assert adapter.capabilities(agent) == frozenset(Capability)
    steps = [*MID_BATCH, Complete("call_1", "one"), ReplyStep("done")]
    with play(adapter, agent, steps) as run:
        assert roles(run, 0) == ["S", "U"]
        assert roles(run) == ["S", "U", "A(call_1,call_2)", "T(call_1)", "T(call_2)"]
        assert (tool_text(run, "call_1"), tool_text(run, "call_2")) == ("one", "two")
        assert kinds(run) == []
        assert run.ledger.outcomes == [(4, "send returned")]
        assert [m["role"] for m in run.loop.history()] == [
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
        ]


def batches(first: int, n: int, width: int) -> list[Step]:
    """``n`` replies of ``width`` calls from ``call_<first>`` on, each completed last first."""
    steps: list[Step] = []
    for k in range(n):
        ids = range(first + k * width, first + (k + 1) * width)
        steps.append(ReplyStep("", tuple(call(i) for i in ids)))
        steps += [Complete(f"call_{i}", f"out {i}") for i in reversed(ids)]
    return steps


@pytest.mark.slow
def test_keep_last_cuts_a_call_from_its_result_and_pydantic_ai_drops_the_result() -> None:
    """The docs' keep-last-5 processor keeps call_1's result without its call;
    pydantic-ai 2.68 drops orphaned results before every request, so the
    model gets a valid request without call_1's unit (a whole unit gone: no
    incident) — and without the user's prompt."""
    adapter = PydanticAIAdapter()
    agent = load_example(KEEP_LAST, "agent")
    assert Capability.TRIM_HOOK in adapter.capabilities(agent)
    steps = [User("fix the bug"), *batches(1, 3, 1), ReplyStep("done")]
    with play(adapter, agent, steps) as run:
        assert roles(run, 2) == ["S", "U", "A(call_1)", "T(call_1)", "A(call_2)", "T(call_2)"]
        # the processor returns [T(call_1), A(call_2), T(call_2), A(call_3), T(call_3)]
        assert roles(run) == ["S", "A(call_2)", "T(call_2)", "A(call_3)", "T(call_3)"]
        assert kinds(run) == []
        held = run.loop.history()
        assert held[0] == {"role": "tool", "tool_call_id": "call_1", "content": "out 1"}


@pytest.mark.slow
def test_unit_safe_processor_is_safe_over_three_turns() -> None:
    adapter = PydanticAIAdapter()
    agent = load_example(TURNS, "agent")
    steps: list[Step] = []
    for k, text in enumerate(("one", "two", "three")):
        steps += [User(text), *batches(1 + 4 * k, 2, 2), ReplyStep("done")]
    with play(adapter, agent, steps) as run:
        assert kinds(run) == []
        assert roles(run)[:2] == ["S", "U"] and roles(run).count("U") == 2


@pytest.mark.slow
def test_cancel_keeps_finished_results_and_closes_the_rest_as_interrupted() -> None:
    """``AgentRun.cancel()`` mid-batch: call_1's body is cancelled, the turn
    raises ``RunCancelled`` carrying call_2's result; the next request holds
    call_1 closed by pydantic-ai's 'interrupted' placeholder: no incident."""
    adapter = PydanticAIAdapter()
    agent = load_example(KEEP_LAST, "plain_agent")
    steps = [*MID_BATCH, Cancel(), User("go on"), ReplyStep("ok")]
    with play(adapter, agent, steps) as run:
        assert run.ledger.outcomes[0] == (
            3,
            "send raised RunCancelled: The agent run was cancelled.",
        )
        assert [(b.call, b.end.value) for b in run.ledger.bodies] == [
            ("call_1", "cancelled"),
            ("call_2", "ok"),
        ]
        assert roles(run) == ["S", "U", "A(call_1,call_2)", "T(call_1)", "T(call_2)", "U"]
        assert (tool_text(run, "call_1"), tool_text(run, "call_2")) == (INTERRUPTED, "two")
        assert kinds(run) == []


@pytest.mark.slow
def test_crash_then_resume_runs_the_finished_call_again() -> None:
    """Saved after every node, the history ends with the batch's calls and
    no result (the tools' node never finished); ``resume`` runs both calls
    again: call_2's body runs twice for one call."""
    adapter = PydanticAIAdapter(persist=Persist.NODE)
    agent = load_example(KEEP_LAST, "plain_agent")
    steps = [*MID_BATCH, Crash(), Resume(), Complete("call_1", "one"), Complete("call_2", "two")]
    with play(adapter, agent, steps) as run:
        assert [(b.call, b.end.value, b.epoch) for b in run.ledger.bodies] == [
            ("call_1", "dropped", 0),
            ("call_2", "ok", 0),
            ("call_1", "ok", 1),
            ("call_2", "ok", 1),
        ]
        assert kinds(run) == [("duplicated_side_effect", ("call_2",))]


@pytest.mark.slow
def test_crash_then_resume_with_history_saved_per_run_loses_the_turn() -> None:
    """Saved once per run, a crash loses the whole turn: ``resume`` sends the
    instructions alone, and nothing tells the model call_2 ran."""
    adapter = PydanticAIAdapter(persist=Persist.RUN)
    agent = load_example(KEEP_LAST, "plain_agent")
    with play(adapter, agent, [*MID_BATCH, Crash(), Resume()]) as run:
        assert roles(run) == ["S"]
        assert kinds(run) == [("silent_loss", ("call_2",))]


@pytest.mark.slow
def test_crash_then_new_message_is_refused() -> None:
    """A new prompt on a saved history with unanswered calls: pydantic-ai
    raises ``UserError`` and sends nothing."""
    adapter = PydanticAIAdapter()
    agent = load_example(KEEP_LAST, "plain_agent")
    with play(adapter, agent, [*MID_BATCH, Crash(), NewMessage("are you there?")]) as run:
        assert len(run.ledger.requests) == 1
        (step, outcome) = run.ledger.outcomes[0]
        assert step == 4 and outcome.startswith("send raised UserError: Cannot provide a new")
        assert kinds(run) == []


@pytest.mark.slow
def test_crash_then_new_message_after_repair_invents_call_2s_result() -> None:
    """The app that repairs the history first, as the ``UserError`` advises,
    sends call_2 closed out as 'interrupted' although its body ran and
    returned "two": the model is told a result no tool produced."""
    adapter = PydanticAIAdapter(repair_on_new_message=True)
    agent = load_example(KEEP_LAST, "plain_agent")
    steps = [*MID_BATCH, Crash(), NewMessage("are you there?"), ReplyStep("yes")]
    with play(adapter, agent, steps) as run:
        assert roles(run) == ["S", "U", "A(call_1,call_2)", "T(call_1)", "T(call_2)", "U"]
        assert tool_text(run, "call_2") == INTERRUPTED
        assert ("synthesized_result", ("call_2",)) in kinds(run)


@pytest.mark.slow
@pytest.mark.parametrize("approved", [True, False])
def test_approval_pauses_the_run_and_continues_it(approved: bool) -> None:
    adapter = PydanticAIAdapter()
    agent = load_example(TURNS, "agent")
    steps = [
        User("clean up"),
        ReplyStep("", (call(1, "delete_file"), call(2))),
        Complete("call_2", "read"),
        Approve("call_1", approved),
        *([Complete("call_1", "deleted")] if approved else []),
        ReplyStep("done"),
    ]
    with play(adapter, agent, steps) as run:
        assert [o for _, o in run.ledger.outcomes] == ["send returned", "approve returned"]
        assert roles(run) == ["S", "U", "A(call_1,call_2)", "T(call_1)", "T(call_2)"]
        assert kinds(run) == []
        if not approved:
            assert [b.call for b in run.ledger.bodies] == ["call_2"]
            assert "denied" in tool_text(run, "call_1").lower()


@pytest.mark.slow
def test_tool_timeout_fires_on_virtual_time_and_becomes_a_retry_prompt() -> None:
    adapter = PydanticAIAdapter()
    agent = load_example(TURNS, "agent")
    steps = [User("test it"), ReplyStep("", (call(1, "run_tests"),)), Advance(31.0)]
    with play(adapter, agent, [*steps, ReplyStep("it hung")]) as run:
        assert [(b.call, b.end.value) for b in run.ledger.bodies] == [("call_1", "cancelled")]
        assert roles(run) == ["S", "U", "A(call_1)", "T(call_1)"]
        assert "Timed out after 30" in tool_text(run, "call_1")
        assert kinds(run) == []


@pytest.mark.slow
def test_standalone_script_shows_the_invented_result(tmp_path: Path) -> None:
    """The short script (pydantic-ai alone, the agent's module imported by its
    path relative to the script) replays the crash and the repaired new
    message, and tells the invented result apart from the same schedule's safe
    prefix."""
    adapter = PydanticAIAdapter(repair_on_new_message=True)
    spec = f"examples/loops/{KEEP_LAST}.py:plain_agent"
    steps: list[Step] = [*MID_BATCH, Crash(), NewMessage("are you there?"), ReplyStep("yes")]
    schedule = schedule_to_json(steps, target=spec, framework="pydantic-ai")
    text = adapter.script(spec, schedule, folder=tmp_path)
    assert len(text.splitlines()) <= 80 and "repair_messages(history)" in text
    done = run_script(text, tmp_path, "pydantic-ai")
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.splitlines()[-1]
    assert last == (
        "reproduced: synthesized_result: the result of call_2 is not what its tool returned, "
        "nor an honest placeholder: it says the call was not run, but its tool ran and returned"
    )
    # the safe path of the same schedule: no finding
    safe = PydanticAIAdapter().script(
        spec, schedule_to_json(MID_BATCH, target=spec), folder=tmp_path
    )
    clean = run_script(safe, tmp_path, "pydantic-ai")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.splitlines()[-1] == "not reproduced"


@pytest.mark.slow
@pytest.mark.parametrize("after", [Resume(), NewMessage("hello?")])
def test_crash_while_an_approval_waits_closes_the_call_as_interrupted(after: Step) -> None:
    """The approval lives in the run's output (``DeferredToolRequests``), not
    in the saved history: after a crash, resume and a new message alike
    send delete_file's call closed as 'interrupted'; nobody is asked again."""
    adapter = PydanticAIAdapter()
    agent = load_example(TURNS, "agent")
    steps = [
        User("clean up"),
        ReplyStep("", (call(1, "delete_file"), call(2))),
        Complete("call_2", "read"),
        Crash(),
        after,
    ]
    with play(adapter, agent, steps) as run:
        assert tool_text(run, "call_1") == INTERRUPTED
        assert [b.call for b in run.ledger.bodies] == ["call_2"] and run.approvals == []
        assert kinds(run) == []


#: Schedules through every step kind the short script writes (none is a violation).
EVERY_STEP: dict[str, list[Step]] = {
    "approve": [
        User("clean up"),
        ReplyStep("", (call(1, "delete_file"), call(2))),
        Complete("call_2", "read"),
        Approve("call_1", False),
        ReplyStep("done"),
    ],
    "cancel": [User("hi"), ReplyStep("", (call(1), call(2))), Complete("call_1", "one"), Cancel()],
    "advance": [User("test it"), ReplyStep("", (call(1, "run_tests"),)), Advance(31.0)],
}


@pytest.mark.parametrize("name", sorted(EVERY_STEP))
def test_script_writes_every_step_kind_as_code(name: str, tmp_path: Path) -> None:
    """Each step is a line of plain code in main() (the script compiles; no
    violation: it checks nothing and says so)."""
    spec = f"examples/loops/{TURNS}.py:agent"
    schedule = schedule_to_json(EVERY_STEP[name], target=spec, framework="pydantic-ai")
    text = PydanticAIAdapter().script(spec, schedule, folder=tmp_path)
    compile(text, "reproduce.py", "exec")
    main = text[text.index("async def main():") :]
    numbered = [n for n in range(1, len(EVERY_STEP[name]) + 1) if f"# {n}." in main]
    assert numbered == list(range(1, len(EVERY_STEP[name]) + 1))
    assert "return None  # prunecheck found no violation" in main
    assert {"approve": "await approve(", "cancel": "await cancel()", "advance": "replace(tool"}[
        name
    ] in text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["approve", "cancel"])
def test_script_plays_approvals_and_cancels(name: str, tmp_path: Path) -> None:
    """The approval and the cancel play in pydantic-ai alone to the end (a step
    the framework did not make possible would stop the script with exit 2)."""
    spec = f"examples/loops/{TURNS}.py:agent"
    schedule = schedule_to_json(EVERY_STEP[name], target=spec, framework="pydantic-ai")
    text = PydanticAIAdapter().script(spec, schedule, folder=tmp_path)
    done = run_script(text, tmp_path, "pydantic-ai")
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "not reproduced"), done.stderr


def test_script_follows_the_adapters_settings_and_rebuilds_a_factorys_agent(
    tmp_path: Path,
) -> None:
    """Saved once per run (Persist.RUN), the agent of a factory built again by
    each new process, the user's module imported from its folder relative to
    the script."""
    spec = "examples/loops/pydantic_ai_guarded.py:agent"
    steps: list[Step] = [
        User("hi"),
        ReplyStep("", (call(1),)),
        Complete("call_1", "one"),
        Crash(),
        Resume(),
    ]
    schedule = schedule_to_json(steps, target=spec, framework="pydantic-ai")
    text = PydanticAIAdapter(persist=Persist.RUN).script(spec, schedule, folder=tmp_path)
    main = text[text.index("async def main():") :]
    assert main.count("agent = build()") == 2  # the first process, and the one after the crash
    assert "from pydantic_ai_guarded import agent as build" in main
    assert "saves.append(Saved.dump_json(run.all_messages()))" in text
    assert "when each run ends" in text and "async for _node in run:\n" in text
    folder = os.path.relpath(Path("examples/loops").resolve(), tmp_path)
    assert f'sys.path.insert(0, str(Path(__file__).resolve().parent / "{folder}"))' in main


def test_script_imports_a_module_whose_file_name_is_no_python_name(tmp_path: Path) -> None:
    """``my-agent.py`` cannot be written in an import statement: the script
    imports it by its name from its folder, relative to the script."""
    user = tmp_path / "app" / "my-agent.py"
    user.parent.mkdir()
    user.write_text((EXAMPLES / f"{TURNS}.py").read_text(encoding="utf-8"), encoding="utf-8")
    spec = f"{user}:agent"
    schedule = schedule_to_json([User("hi"), ReplyStep("hello")], target=spec)
    text = PydanticAIAdapter().script(spec, schedule, folder=tmp_path / "bundle")
    compile(text, "reproduce.py", "exec")
    assert 'parent / "../app"))\n    agent = __import__("my-agent").agent\n' in text
