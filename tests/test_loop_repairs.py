"""A framework's repair layer inside its own loop, judged per provider (issue 34):
sim/subjects/loops/repair.py (what was repaired, honest or not, which providers
would have rejected the unrepaired history), its figures in a class's verdict
(sim/api/loop_reach.py) and pydantic-ai's own repair seen by the adapter.
"""

from __future__ import annotations

import pytest
from loops_play import call, kinds, load_example, play

from prunecheck.model.provider import rule
from prunecheck.sim.api.loop_reach import Figures
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.ledger import Body, BodyEnd, Ledger
from prunecheck.sim.subjects.loops.reach import Watch
from prunecheck.sim.subjects.loops.repair import RepairCounts, judge_repair, repair_figures
from prunecheck.sim.subjects.loops.steps import Complete, Crash, NewMessage, ReplyStep, User

CALL = ToolCall("call_1", "read_file", '{"path": "a"}')
OTHER = ToolCall("call_2", "read_file", '{"path": "b"}')
INTERRUPTED = "The tool call was interrupted before a result was produced."


def _assistant(*calls: ToolCall) -> dict[str, object]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in calls]}  # fmt: skip


def _tool(cid: str, text: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def _ledger(*ran: str) -> Ledger:
    """call_1 and call_2 issued in one batch; the named ones ran and returned."""
    led = Ledger()
    led.issue((CALL, OTHER), 1)
    for cid in ran:
        led.bodies.append(Body(cid, 1, BodyEnd.OK, 2, f"output of {cid}"))
    return led


USER: dict[str, object] = {"role": "user", "content": "fix the bug"}


def test_dropping_an_orphaned_result_is_silent_and_every_provider_rejected_it_unrepaired() -> None:
    before = [_tool("call_1", "output of call_1"), USER]
    repair = judge_repair("layer", before, [USER], _ledger("call_1"), 6)
    assert repair is not None
    assert (repair.dropped_results, repair.dropped_calls, repair.synthesized) == (
        ("call_1",),
        (),
        (),
    )
    assert repair.honest and repair.silent == ("call_1",)
    rejected = dict(repair.rejected_by)
    assert rejected["openai"] == rule("openai.result_without_call").template
    assert rejected["gemini"] == rule("gemini.result_without_call").template
    assert rejected["openai-responses"] == (
        "No tool call found for function call output with call_id call_1."
    )
    told = repair.text()
    assert told.startswith("layer rewrote the history before this request: dropped the result(s) "
                           "of call_1 (honest: it wrote no result; silent: call_1 ran")  # fmt: skip
    assert "would have been rejected by anthropic, openai, openai-responses, gemini" in told


def test_a_written_result_is_judged_by_the_placeholder_rule() -> None:
    before = [USER, _assistant(CALL, OTHER)]
    after = [*before, _tool("call_1", INTERRUPTED), _tool("call_2", INTERRUPTED)]
    repair = judge_repair("layer", before, after, _ledger("call_2"), 4)
    assert repair is not None and not repair.honest and repair.silent == ()
    honest = {cid: ok for cid, _, ok, _ in repair.synthesized}
    assert honest == {"call_1": True, "call_2": False}  # call_2's tool ran and returned
    assert "not honest: the result of call_2 is invented (it says the call was not run" in (
        repair.text()
    )
    assert dict(repair.rejected_by)["anthropic"].startswith(
        "messages.1: `tool_use` ids were found without `tool_result` blocks"
    )


def test_a_rewrite_that_keeps_every_call_and_result_is_not_reported() -> None:
    history = [USER, _assistant(CALL), _tool("call_1", "x")]
    merged: list[dict[str, object]] = [USER, {"role": "user", "content": "more"}]
    assert judge_repair("layer", history, list(history), _ledger(), 1) is None
    assert judge_repair("layer", merged, [{"role": "user", "content": "fix the bug more"}],
                        _ledger(), 1) is None  # fmt: skip


def test_a_classes_figures_say_what_was_repaired_and_who_rejects_it_unrepaired() -> None:
    silent = judge_repair("layer", [_tool("call_1", "o"), USER], [USER], _ledger("call_1"), 2)
    invented = judge_repair("layer", [USER, _assistant(OTHER)],
                            [USER, _assistant(OTHER), _tool("call_2", "ok, done")],
                            _ledger(), 3)  # fmt: skip
    assert silent is not None and invented is not None
    one, two = repair_figures([silent]), repair_figures([invented])
    assert one["repaired"] == 1 and one["repair_silent"] == 1 and one["repair_invented"] == 0
    assert two["repair_wrote"] == 1 and two["repair_invented"] == 1
    counts = RepairCounts.of(one) + RepairCounts.of(two)
    assert (counts.schedules, counts.dropped_results, counts.wrote, counts.invented,
            counts.silent) == (2, 1, 1, 1, 1)  # fmt: skip
    assert counts.rejected_by[:2] == ("anthropic", "openai")
    assert counts.text() == (
        "the framework's repair layer rewrote the history in 2 schedules (dropped results in 1, "
        "wrote results in 1; invented a result in 1; dropped silently what a tool that ran "
        "produced in 1; unrepaired, rejected by " + ", ".join(counts.rejected_by) + ")"
    )
    figures = Figures(3, 1, True, 1, 4, 40, 10, "chars", repairs=counts)
    assert counts.text() in figures.text()
    assert figures.to_json()["repaired"] == counts.to_json()
    assert "repair" not in Figures(3, 1, True, 1, 4, 40, 10, "chars").text()
    assert "repaired" not in Watch().figures(Ledger(), 0)  # a run without repairs: as before


# ------------------------------------------------------------------ pydantic-ai
@pytest.fixture
def _pydantic_ai() -> None:
    pytest.importorskip("pydantic_ai")


def _batches(n: int) -> list[object]:
    steps: list[object] = []
    for k in range(1, n + 1):
        steps += [ReplyStep("", (call(k),)), Complete(f"call_{k}", f"out {k}")]
    return steps


@pytest.mark.slow
@pytest.mark.usefixtures("_pydantic_ai")
def test_pydantic_ais_repair_of_a_keep_last_trim_is_told_in_the_narrative() -> None:
    """The docs' keep-last-5 processor keeps call_1's result without its call;
    pydantic-ai's own repair drops that result before the request: the request
    is valid (no incident), and the narrative says what the repair did and that
    every provider would have rejected the processor's history."""
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import PydanticAIAdapter

    steps = [User("fix the bug"), *_batches(3), ReplyStep("done")]
    with play(PydanticAIAdapter(), load_example("pydantic_ai_keep_last", "agent"), steps) as run:
        assert kinds(run) == []
        (repair,) = run.watch.repairs
        assert repair.layer == "pydantic-ai's history repair"
        assert repair.dropped_results == ("call_1",) and repair.silent == ("call_1",)
        assert {p for p, _ in repair.rejected_by} >= {"openai", "anthropic", "gemini", "bedrock"}
        assert (repair.step, repair.text()) in run.ledger.rulings


@pytest.mark.slow
@pytest.mark.usefixtures("_pydantic_ai")
def test_the_apps_repair_after_a_crash_is_told_invented_for_a_tool_that_ran() -> None:
    from prunecheck.sim.subjects.loops.frameworks.pydantic_ai import PydanticAIAdapter

    adapter = PydanticAIAdapter(repair_on_new_message=True)
    steps = [User("fix the bug"),
             ReplyStep("", (call(1), call(2))),
             Complete("call_2", "two"), Crash(), NewMessage("are you there?"),
             ReplyStep("yes")]  # fmt: skip
    with play(adapter, load_example("pydantic_ai_keep_last", "plain_agent"), steps) as run:
        assert ("synthesized_result", ("call_2",)) in kinds(run)
        (repair,) = run.watch.repairs
        assert repair.layer == "the app's repair_messages()" and not repair.honest
        assert {c: ok for c, _, ok, _ in repair.synthesized} == {"call_1": True, "call_2": False}
