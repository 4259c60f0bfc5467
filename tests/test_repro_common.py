"""What every framework's reproduction does alike (tests/repro_check.py): a
failing import of the framework, after the version check passed, is "could
not run" (exit 2), never "reproduced" (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from repro_check import Cell, cells, check_a_failing_import_exits_2

#: One cell per framework, and a module of its framework the script imports.
CASES = {
    "langgraph_plain-agent-parallel": "langchain_core.language_models",
    "autogen_plain-agent-cancel": "autogen_ext.models",
    "openai_agents_keep_last-agent-cancel": "agents.models",
    "pydantic_ai_turns-agent-crash_new_message": "pydantic_ai.models",
}


def _cell(name: str) -> Cell:
    found = [c for c in cells(name) if c.schedule.stem == name]
    assert found, f"no reports/loops/{name}.json"
    return found[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_failing_framework_import_is_could_not_run(name: str, tmp_path: Path) -> None:
    check_a_failing_import_exits_2(_cell(name), CASES[name], tmp_path)
