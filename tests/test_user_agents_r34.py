"""Held-back user agents of round 34 (issue 31), each held to the verdict a user expects.

``tests/user_agents/held_back_r34/`` holds agents written last, the way users write
them, that prunecheck was **not changed for**: each module's docstring states the
verdict expected before anything ran, and ``reports/user-agents.md`` ("Held back,
round 34") records how each fared when ``check`` ran once on it.  Two missed then
(an Agent Framework chat middleware, a pydantic-ai ``Hooks`` trimmer) and prunecheck
was changed for them after: they are tuned on now, no longer held back.  A row whose
verdict is wrong is a strict ``xfail`` saying what ``check`` gives: whoever fixes it
removes the mark (the strict xfail then fails).

Each row runs a full ``check`` (seconds to a minute of CPU): the table is ``slow``
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

FOLDER = "held_back_r34"
HERE = Path(__file__).parent / "user_agents" / FOLDER


def _row(spec: str, expect: Expect, kinds: frozenset[str] = frozenset(), **kw: str) -> Row:
    return Row(f"{FOLDER}/{spec}", expect, kinds, **kw)


ROWS: tuple[Row, ...] = (
    # Strands Agents
    _row("st_char_budget_manager.py:agent", Expect.UNSAFE, STRUCTURAL),
    _row("st_window_never_fills.py:agent", Expect.VACUOUS, figure="500"),
    # Google ADK
    _row("adk_callback_token_trim.py:root_agent", Expect.UNSAFE, STRUCTURAL),
    _row("adk_callback_clear_outputs.py:root_agent", Expect.SAFE),
    # Microsoft Agent Framework
    # tuned on after round 34 (no longer held back): a chat middleware is a trim hook now
    _row("maf_chat_middleware_chars.py:agent", Expect.UNSAFE, STRUCTURAL),
    _row("maf_truncation_tokens.py:agent", Expect.SAFE),
    # LlamaIndex
    _row(
        "li_drop_tool_outputs_memory.py:agent",
        Expect.UNSAFE,
        STRUCTURAL | {"silent_loss"},
    ),
    _row("li_summary_memory.py:agent", Expect.SAFE),
    # pydantic-ai, LangChain, OpenAI Agents SDK, AutoGen
    # tuned on after round 34 (no longer held back): a Hooks before_model_request is a trim hook
    _row(
        "pa_hooks_drop_returns.py:agent",
        Expect.UNSAFE,
        frozenset({"synthesized_result", "unanswered_call", "silent_loss"}),
    ),
    _row("lc_remove_oldest_tokens.py:agent", Expect.UNSAFE, STRUCTURAL),
    _row("oa_session_clear_outputs.py:app", Expect.SAFE),
    _row("ag_summarizing_context.py:agent", Expect.SAFE),
)


def _param(row: Row) -> object:
    return param(row, FOLDER)


@pytest.mark.slow
@pytest.mark.parametrize("row", [_param(row) for row in ROWS])
def test_held_back_r34_verdict(row: Row) -> None:
    _hold(row, _check(row.spec))


# -- the fast twin: the modules stay well-formed (source only, nothing imported) -------


def test_every_module_has_a_row() -> None:
    assert_every_module_has_a_row(HERE, FOLDER, ROWS)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.spec.removeprefix(f"{FOLDER}/"))
def test_module_states_its_verdict_and_defines_its_attribute(row: Row) -> None:
    assert_module_states_its_verdict(HERE, FOLDER, row)
