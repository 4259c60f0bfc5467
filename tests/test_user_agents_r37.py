"""Held-back user agents of round 37 (issue 31), each held to the verdict a user expects.

``tests/user_agents/held_back_r37/`` holds eight agents written last, the way users
write them, on eight frameworks, that prunecheck was **not changed for**: each
module's docstring states the verdict expected before anything ran (committed to
main before any check ran on them), and ``reports/user-agents.md`` ("Held back,
round 37") records how each fared when ``check`` ran once on it.  A row whose
verdict is not the expected one is a strict ``xfail`` saying what ``check`` gives:
whoever fixes it removes the mark (the strict xfail then fails).

Each row runs a full ``check`` (seconds to minutes of CPU): the table is ``slow``
(``make test-all``), run by the machinery of ``tests/test_user_agents.py`` (no
provider key in the child's environment, ``--no-failures``).  Its fast twin reads
each module's source only (importing one builds framework clients and costs
seconds): every module has a row, states its expected verdict and defines the
attribute its row names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from held_back_rounds import assert_every_module_has_a_row, assert_module_states_its_verdict, param
from test_user_agents import STRUCTURAL, Expect, Row, _check, _hold

FOLDER = "held_back_r37"
HERE = Path(__file__).parent / "user_agents" / FOLDER


def _row(spec: str, expect: Expect, kinds: frozenset[str] = frozenset(), **kw: str | None) -> Row:
    return Row(f"{FOLDER}/{spec}", expect, kinds, **kw)


ROWS: tuple[Row, ...] = (
    # a pydantic-ai Hooks capability capping the tool calls a request carries (tuned on
    # after the round: caught once the ladder climbs after a change)
    _row(
        "pa_tool_call_count.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    # a LangChain async @after_agent middleware removing all but the newest ToolMessage
    # of each tool, the AIMessage calls kept: the next message sends calls unanswered
    # (tuned on after the round: a user's after_agent middleware is trimming)
    _row(
        "lc_superseded_results.py:agent",
        Expect.UNSAFE,
        STRUCTURAL | {"silent_loss"},
        scenario=None,
    ),
    # an AutoGen context: the last 2 user turns, then the newest 9 messages (a turn split)
    # (tuned on after the round: the ladder climbs after the turn cap's first change)
    _row(
        "ag_recent_turns_capped.py:agent",
        Expect.UNSAFE,
        STRUCTURAL,
    ),
    # a Google ADK after_tool_callback cutting any response over 6,000 characters silently
    # (tuned on after the round: a tool-output hook is trimming, outputs grown past it)
    _row(
        "adk_after_tool_truncate.py:root_agent",
        Expect.UNSAFE,
        frozenset({"truncated_payload"}),
        scenario=None,
    ),
    # an Agents SDK tool output guardrail withholding outputs over 20,000 characters, saying so
    # (tuned on: the placeholder rule reads "Ask for a narrower time range" as advice;
    # the texts of tests/data/placeholder_heldout*.json measure the rule instead)
    _row("oa_output_guardrail_withhold.py:agent", Expect.SAFE),
    # a Strands AfterInvocationEvent callback deleting whole turns older than the last 2
    _row("st_after_invocation_turns.py:agent", Expect.SAFE),
    # Agent Framework's own ToolResultCompactionStrategy, the agent built by a factory
    _row("maf_tool_result_compaction.py:build_agent", Expect.SAFE),
    # a LlamaIndex memory whose aget cuts past MAX_USER_TURNS = 200 user turns: never
    # (tuned on: a memory class's own aget that reads a budget constant keys on it)
    _row("li_turn_cap_never.py:agent", Expect.VACUOUS, figure="200"),
)


def _param(row: Row) -> object:
    return param(row, FOLDER)


@pytest.mark.slow
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_held_back_r37_verdict(row: Row) -> None:
    _hold(row, _check(row.spec))


# -- the fast twin: the modules stay well-formed (source only, nothing imported) -------


def test_every_module_has_a_row() -> None:
    assert_every_module_has_a_row(HERE, FOLDER, ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id.removeprefix(f"{FOLDER}/"))
def test_module_states_its_verdict_and_defines_its_attribute(row: Row) -> None:
    assert_module_states_its_verdict(HERE, FOLDER, row)
