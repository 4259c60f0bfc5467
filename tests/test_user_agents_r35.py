"""Held-back user agents of round 35 (issue 31), each held to the verdict a user expects.

``tests/user_agents/held_back_r35/`` holds eight agents written last, the way users
write them, on seven frameworks, that prunecheck was **not changed for**: each
module's docstring states the verdict expected before anything ran (committed to
main before any check ran on them), and ``reports/user-agents.md`` ("Held back,
round 35") records how each fared when ``check`` ran once on it.  A row whose
verdict is not the expected one is a strict ``xfail`` saying what ``check`` gives:
whoever fixes it removes the mark (the strict xfail then fails).  The three
agents missed when held back (``st_hook_token_budget``, ``lg_summary_node``,
``maf_recent_history_provider``) were tuned on afterwards
(``tests/test_loops_users35.py`` drives agents of the same kinds): no row is an
xfail any more.

Each row runs a full ``check`` (seconds to minutes of CPU): the table is ``slow``
(``make test-all``), run by the machinery of ``tests/test_user_agents.py`` (no
provider key in the child's environment, ``--no-failures``).  Its fast twin reads
each module's source only (importing one builds framework clients and costs
seconds): every module has a row, states its expected verdict and defines the
attribute its row names.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from held_back_rounds import assert_every_module_has_a_row, assert_module_states_its_verdict, param
from test_user_agents import STRUCTURAL, Expect, Row, _check, _hold

FOLDER = "held_back_r35"
HERE = Path(__file__).parent / "user_agents" / FOLDER


def _row(spec: str, expect: Expect, kinds: frozenset[str] = frozenset(), **kw: str | None) -> Row:
    return Row(f"{FOLDER}/{spec}", expect, kinds, **kw)


ROWS: tuple[Row, ...] = (
    # token budget, sync hook (Strands); character budget, App plugin (Google ADK)
    # tuned after it was held back (round 35's fixes: a Strands hook callback is the trim
    # hook; a module-level compiled StateGraph is driven; a history provider subclass trims)
    _row("st_hook_token_budget.py:agent", Expect.UNSAFE, STRUCTURAL),
    _row("adk_plugin_char_budget.py:app", Expect.UNSAFE, STRUCTURAL),
    # a summarizer that calls its own model (Agent Framework)
    _row("maf_summarization_client.py:agent", Expect.SAFE),
    # a summarizer that can raise, sync nodes (LangGraph): the fault named, and the
    # docs' [:-2] cut after a tool round
    _row("lg_summary_node.py:graph", Expect.FAULT, scenario=None),
    _row("lg_summary_node.py:graph", Expect.UNSAFE, STRUCTURAL, scenario=None),
    # a custom memory subclass (Agent Framework history provider)
    _row("maf_recent_history_provider.py:agent", Expect.UNSAFE, STRUCTURAL, scenario=None),
    # an honest placeholder (LlamaIndex memory, sync get)
    _row("li_placeholder_memory.py:agent", Expect.SAFE),
    # whole tool rounds dropped (pydantic-ai, google: provider string)
    _row("pa_drop_whole_rounds.py:agent", Expect.SAFE),
    # a trimmer that never fires (AutoGen): its tail of 400, or the 402 it cuts past
    _row("ag_head_tail_never.py:agent", Expect.VACUOUS, figure="400|402"),
)


def _hold_r35(row: Row) -> None:
    out = _check(row.spec)
    figures = (row.figure or "").split("|")
    if row.expect is not Expect.VACUOUS or len(figures) < 2:
        _hold(row, out)
        return
    failures: list[AssertionError] = []
    for figure in figures:  # any of the figures stated before running
        try:
            _hold(replace(row, figure=figure), out)
            return
        except AssertionError as exc:
            failures.append(exc)
    raise failures[-1]


def _param(row: Row) -> object:
    return param(row, FOLDER)


@pytest.mark.slow
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_held_back_r35_verdict(row: Row) -> None:
    _hold_r35(row)


# -- the fast twin: the modules stay well-formed (source only, nothing imported) -------


def test_every_module_has_a_row() -> None:
    assert_every_module_has_a_row(HERE, FOLDER, ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id.removeprefix(f"{FOLDER}/"))
def test_module_states_its_verdict_and_defines_its_attribute(row: Row) -> None:
    assert_module_states_its_verdict(HERE, FOLDER, row)
