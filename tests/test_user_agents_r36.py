"""Held-back user agents of round 36 (issue 31), each held to the verdict a user expects.

``tests/user_agents/held_back_r36/`` holds eight agents written last, the way users
write them, on eight frameworks, that prunecheck was **not changed for**: each
module's docstring states the verdict expected before anything ran (committed to
main before any check ran on them), and ``reports/user-agents.md`` ("Held back,
round 36") records how each fared when ``check`` ran once on it.  A row whose
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

FOLDER = "held_back_r36"
HERE = Path(__file__).parent / "user_agents" / FOLDER


def _row(spec: str, expect: Expect, kinds: frozenset[str] = frozenset(), **kw: str | None) -> Row:
    return Row(f"{FOLDER}/{spec}", expect, kinds, **kw)


ROWS: tuple[Row, ...] = (
    # token budget in the Agents SDK's session_input_callback (a sync callback): an
    # output kept without its call on a later message of the session
    _row("oa_session_input_tokens.py:app", Expect.UNSAFE, STRUCTURAL, scenario=None),
    # character budget in the app's own CompactionStrategy (Agent Framework)
    _row("maf_own_strategy_chars.py:agent", Expect.UNSAFE, STRUCTURAL),
    # a summarizer on the agent's own client that raises (AutoGen model context subclass)
    # (fixed on r36fix: the context's own model call is asked aside and failed by model_error)
    _row("ag_own_client_summary.py:agent", Expect.FAULT, scenario=None),
    # whole tool rounds of older turns left out (LlamaIndex memory subclass, sync get)
    _row("li_turn_age_memory.py:agent", Expect.SAFE),
    # whole tool rounds dropped by age (Google ADK sync before_model_callback)
    _row("adk_age_rounds_drop.py:root_agent", Expect.SAFE),
    # an honest placeholder from a custom conversation manager's sync hook (Strands)
    _row("st_clear_results_manager.py:agent", Expect.SAFE),
    # a trimmer keyed on time that never fires (pydantic-ai sync processor, provider client)
    # (fixed on r36fix: MAX_AGE_SECONDS read as a threshold in time, quoted in the note)
    _row("pa_age_never_fires.py:agent", Expect.VACUOUS, figure="21600"),
    # LangChain's summarizer and clearer together, models by provider strings (the
    # summarizer's own "openai:gpt-4.1-mini" on the double since r36fix: no connection out)
    _row("lc_summary_and_clearing.py:agent", Expect.SAFE),
)


def _param(row: Row) -> object:
    return param(row, FOLDER)


@pytest.mark.slow
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_held_back_r36_verdict(row: Row) -> None:
    _hold(row, _check(row.spec))


# -- the fast twin: the modules stay well-formed (source only, nothing imported) -------


def test_every_module_has_a_row() -> None:
    assert_every_module_has_a_row(HERE, FOLDER, ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id.removeprefix(f"{FOLDER}/"))
def test_module_states_its_verdict_and_defines_its_attribute(row: Row) -> None:
    assert_module_states_its_verdict(HERE, FOLDER, row)
