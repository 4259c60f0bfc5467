"""The held-back user agents of issue 31 (``tests/held_back/``) stay well-formed.

They are a measure, not a training set: nothing here runs ``prunecheck`` on them
(``tests/held_back/RESULTS.md`` records how each fared).  Importing one needs a
provider key and costs seconds (pydantic-ai and LangChain build their clients at
import), so this test reads each module's source instead: it must parse, state its
expected verdict in its docstring, and define the attributes its ``loop:`` specs name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from held_back_rounds import top_level_names

HERE = Path(__file__).parent / "held_back"

# module -> the ATTRs of its ``loop:tests/held_back/MODULE.py:ATTR`` specs
SPECS: dict[str, tuple[str, ...]] = {
    "pa_truncate_returns": ("agent",),
    "pa_sync_token_window": ("agent",),
    "pa_summary_fallback": ("agent",),
    "lc_trim_chars_hook": (
        "build_agent",
        "agent",
    ),
    "lc_context_editing_placeholder": (
        "build_agent",
        "agent",
    ),
    "lc_summarize_never_fires": (
        "build_agent",
        "agent",
    ),
    "lg_sync_node_budget": (
        "build_graph",
        "graph",
    ),
    "oa_token_budget_session": ("app",),
    "oa_session_limit_never_fires": ("app",),
    "ag_head_tail_provider_client": ("agent",),
}


def test_every_held_back_module_is_listed() -> None:
    on_disk = {p.stem for p in HERE.glob("*.py") if p.stem != "__init__"}
    assert on_disk == set(SPECS)


@pytest.mark.parametrize("module", sorted(SPECS))
def test_held_back_module_states_its_verdict_and_defines_its_attr(module: str) -> None:
    tree = ast.parse((HERE / f"{module}.py").read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert re.search(r"Expected verdict \(written before running\): \*\*(unsafe|safe|vacuous)", doc)
    assert set(SPECS[module]) <= top_level_names(tree)
