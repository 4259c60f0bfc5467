"""A user's hook that rewrites tool outputs is the configuration's trimming.

Google ADK's ``after_tool_callback`` (a dict it returns replaces the tool's
response) and the OpenAI Agents SDK's tool output guardrails (a
``reject_content(message)`` is sent as the call's output) sit on a tool
output's way to the history: the trim hook, whose plain agent is built
without them, whose threshold (a module constant the hook reads) is one on a
single tool output, and past which the ladder grows outputs so that the hook
fires and is judged.  A silent cut is a ``truncated_payload`` of the
configuration; an honest "[output withheld: N characters]" is no violation,
and the history changed.

The agents are written the way users write them (``tests/user_agents/``:
``adk_after_tool_cut``, ``adk_after_tool_withhold``, ``oa_guardrail_withhold``,
``oa_guardrail_cut``); the fast tests drive each a few steps through
:class:`~prunecheck.sim.subjects.loops.scheduler.LoopRun`, the slow ones run
``check`` on its trimming class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.api.loop_reach import Figures
from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.ladder import ladder
from prunecheck.sim.subjects.loops.reach import CHARS_PER_TOKEN, Budget, budget_of
from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, Step, User
from prunecheck.sim.subjects.loops.target import load_target

AGENTS = Path(__file__).parent / "user_agents"

#: (file, attribute, tool, arguments, framework module) of each user-style agent.
_ADK_CUT = ("adk_after_tool_cut.py", "root_agent", "fetch_page", '{"url": "u"}', "google.adk")
_ADK_WITHHOLD = ("adk_after_tool_withhold.py", "root_agent", "list_orders",
                 '{"customer": "c"}', "google.adk")  # fmt: skip
_OA_WITHHOLD = ("oa_guardrail_withhold.py", "agent", "read_ticket", '{"ticket_id": "t"}',
                "agents")  # fmt: skip
_OA_CUT = ("oa_guardrail_cut.py", "agent", "query_metrics", '{"service": "s"}', "agents")


def _loaded(agent: tuple[str, ...]) -> Any:
    pytest.importorskip(agent[4])
    return load_target(f"loop:{AGENTS / agent[0]}:{agent[1]}")


def _drive(adapter: Any, target: Any, agent: tuple[str, ...], size: int) -> tuple[set[str], int]:
    """The incidents' kinds and the requests the user's code changed, after a
    call whose tool returns ``size`` characters and the model's answer."""
    from prunecheck.sim.subjects.loops.scheduler import LoopRun

    steps: list[Step] = [User("go"), ReplyStep("", (ToolCall("call_1", agent[2], agent[3]),)),
             Complete("call_1", "row " * (size // 4)), ReplyStep("done")]  # fmt: skip
    with LoopRun(adapter, target) as run:
        for step in steps:
            run.apply(step)
        return {str(i.kind) for i in run.incidents}, run.watch.changed


# ------------------------------------------------------------------ the ladder, the figures
def test_a_threshold_on_one_output_grows_outputs_past_it_on_the_first_rung() -> None:
    """A history budget's first rung reaches its budget at most; a threshold on
    one output gets outputs just under it, just over it and twice it."""
    history = ladder(Budget(6_000, "characters", "a history budget"))
    assert max(history[0].shape.sizes) * CHARS_PER_TOKEN == 6_000  # never past it
    rungs = ladder(Budget(6_000, "characters", "a hook's", per_output=True))
    first = [s * CHARS_PER_TOKEN for s in rungs[0].shape.sizes]
    assert any(5_900 < s <= 6_000 for s in first)
    assert any(6_000 < s < 6_500 for s in first) and max(first) == 12_000
    assert min(rungs[1].shape.sizes) * CHARS_PER_TOKEN > min(first)


def test_the_figures_hold_a_per_output_threshold_against_the_largest_output() -> None:
    budget = Budget(20_000, "characters", "module constant LIMIT_CHARS = 20,000", per_output=True)
    figures = Figures(60, 0, True, 3, 9, 4_000, 1_000, "estimated", budget, output=2_000)
    text = figures.text()
    assert "the trimmer never fired in 60 schedules" in text
    assert "largest tool output 2,000 characters against its threshold of 20,000" in text


@pytest.mark.parametrize(
    "text",
    ["[output withheld: 12,000 characters]",
     "[output withheld: 12,000 characters, over the 8,000-character limit; ask for a smaller "
     "output instead]",
     "Result not shown: it exceeds the 2,000-token limit."],
)  # fmt: skip
def test_a_withholding_note_with_its_limit_is_an_honest_placeholder(text: str) -> None:
    from prunecheck.sim.subjects.loops.placeholder import ruling

    judged = ruling(text, ran="ok", call_words=("read_ticket", "call_1"))
    assert judged.honest and judged.rule == "cleared", judged.why
    invented = ruling("File a: a 120-line excerpt (rest withheld)", ran="ok", call_words=())
    assert not invented.honest  # 'file', 'excerpt', 'rest' speak of the world


# ------------------------------------------------------------------ Google ADK
@pytest.mark.parametrize("agent", [_ADK_CUT, _ADK_WITHHOLD], ids=["cut", "withhold"])
def test_an_adk_after_tool_callback_is_the_trim_hook_with_its_threshold(
    agent: tuple[str, ...],
) -> None:
    loaded = _loaded(agent)
    adapter, target = loaded.adapter, loaded.target
    assert Capability.TRIM_HOOK in adapter.capabilities(target)
    budget = budget_of(adapter, target)
    assert budget is not None and budget.per_output and budget.unit == "characters"
    assert budget.amount == (3_000 if agent is _ADK_CUT else 4_000)
    assert "after_tool_callback" in budget.where
    plain = adapter.without_trimming()
    assert Capability.TRIM_HOOK not in plain.capabilities(target)


def test_an_adk_callback_cutting_silently_is_a_truncated_payload_the_plain_agent_lacks() -> None:
    loaded = _loaded(_ADK_CUT)
    kinds, changed = _drive(loaded.adapter, loaded.target, _ADK_CUT, 8_000)
    assert kinds == {"truncated_payload"} and changed >= 1
    assert _drive(loaded.adapter.without_trimming(), loaded.target, _ADK_CUT, 8_000) == (set(), 0)
    assert _drive(loaded.adapter, loaded.target, _ADK_CUT, 2_000) == (set(), 0)  # under it


def test_an_adk_callback_withholding_honestly_changes_the_history_without_a_violation() -> None:
    loaded = _loaded(_ADK_WITHHOLD)
    kinds, changed = _drive(loaded.adapter, loaded.target, _ADK_WITHHOLD, 8_000)
    assert kinds == set() and changed >= 1
    plain = loaded.adapter.without_trimming()
    assert _drive(plain, loaded.target, _ADK_WITHHOLD, 8_000) == (set(), 0)


# ------------------------------------------------------------------ OpenAI Agents SDK
@pytest.mark.parametrize("agent", [_OA_WITHHOLD, _OA_CUT], ids=["withhold", "cut"])
def test_a_tool_output_guardrail_is_the_trim_hook_with_its_threshold(
    agent: tuple[str, ...],
) -> None:
    loaded = _loaded(agent)
    adapter, target = loaded.adapter, loaded.target
    assert Capability.TRIM_HOOK in adapter.capabilities(target)
    budget = budget_of(adapter, target)
    assert budget is not None and budget.per_output and budget.unit == "characters"
    assert budget.amount == (8_000 if agent is _OA_WITHHOLD else 5_000)
    assert "tool output guardrail" in budget.where
    assert Capability.TRIM_HOOK not in adapter.without_trimming().capabilities(target)


def test_a_guardrail_that_withholds_honestly_changes_the_history_without_a_violation() -> None:
    loaded = _loaded(_OA_WITHHOLD)
    kinds, changed = _drive(loaded.adapter, loaded.target, _OA_WITHHOLD, 12_000)
    assert kinds == set() and changed >= 1
    plain = loaded.adapter.without_trimming()
    assert _drive(plain, loaded.target, _OA_WITHHOLD, 12_000) == (set(), 0)


def test_a_guardrail_that_cuts_silently_is_a_truncated_payload_the_plain_agent_has_not() -> None:
    loaded = _loaded(_OA_CUT)
    kinds, changed = _drive(loaded.adapter, loaded.target, _OA_CUT, 12_000)
    assert kinds == {"truncated_payload"} and changed >= 1
    assert _drive(loaded.adapter.without_trimming(), loaded.target, _OA_CUT, 12_000) == (set(), 0)


# ------------------------------------------------------------------ check, the trimming class
def _trim_cell(agent: tuple[str, ...]) -> Any:
    from prunecheck import check_loop
    from prunecheck.sim.subjects.loops.scenarios import ScenarioClass

    result = check_loop(_loaded(agent), seed=0, scenarios=[ScenarioClass.TRIM], failures=False)
    (cell,) = [c for c in result.cells if c.scenario.name is ScenarioClass.TRIM]
    return cell


@pytest.mark.slow
@pytest.mark.parametrize("agent", [_ADK_CUT, _OA_CUT], ids=["adk", "openai-agents"])
def test_check_finds_the_silent_cut_the_configurations_truncated_payload(
    agent: tuple[str, ...],
) -> None:
    from prunecheck.sim.api.loop_owner import Owner

    cell = _trim_cell(agent)
    assert str(cell.verdict) == "UNSAFE" and cell.configuration_unsafe, cell.note
    owned = {k for f in cell.findings if f.owner is Owner.CONFIGURATION for k in f.kinds}
    assert "truncated_payload" in owned


@pytest.mark.slow
@pytest.mark.parametrize("agent", [_ADK_WITHHOLD, _OA_WITHHOLD], ids=["adk", "openai-agents"])
def test_check_calls_the_honest_withholding_safe_and_exercised(agent: tuple[str, ...]) -> None:
    cell = _trim_cell(agent)
    assert str(cell.verdict) == "safe", cell.note
    assert cell.figures is not None and cell.figures.fired, cell.note
    assert "the user's code changed the history in" in cell.note
