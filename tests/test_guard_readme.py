"""The "Deploy the commit gate" example (docs/how-to/deploy-guard.md) runs as
written and leaves a valid history, at its own budget and at one small
enough to prune (tests/test_docs_examples.py runs the page as a reader
would)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.provider.rules import validate
from prunecheck.model.provider.vocabulary import Provider

PAGE = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "deploy-guard.md"


def _example() -> str:
    text = PAGE.read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    found = [b for b in blocks if "CommitGuard(" in b]
    assert len(found) == 1
    return found[0]


def _call(cid: str) -> dict[str, Any]:
    arguments = json.dumps({"path": "src/app.py"})
    return {"id": cid, "type": "function", "function": {"name": "read", "arguments": arguments}}


def keep_last(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A list function with no tool awareness: the last two messages."""
    return messages[-2:]


def _run(code: str, tmp_path: Path) -> list[dict[str, Any]]:
    names: dict[str, Any] = {
        "my_trim": keep_last,
        "user_msg": {"role": "user", "content": "fix the bug in src/app.py"},
        "call_msg": {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1"), _call("c2")],
        },
        "result1": {"role": "tool", "tool_call_id": "c1", "content": "def main(): ..."},
        "result2": {"role": "tool", "tool_call_id": "c2", "content": "tests pass"},
    }
    here = Path.cwd()
    os.chdir(tmp_path)  # store="spill.db" is relative
    try:
        exec(compile(code, "deploy-guard.md", "exec"), names)
    finally:
        os.chdir(here)
    return list(names["history"].values())


def test_the_readme_example_runs_and_keeps_a_valid_history(tmp_path: Path) -> None:
    history = _run(_example(), tmp_path)
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    assert validate(history, Provider.OPENAI) == []
    assert (tmp_path / "spill.db").exists()


@pytest.mark.parametrize("budget", [300, 100])
def test_the_readme_example_prunes_whole_units_at_a_small_budget(
    tmp_path: Path, budget: int
) -> None:
    code = _example()
    assert "budget=32_000, hard_ceiling=40_000" in code
    small = code.replace("budget=32_000, hard_ceiling=40_000", f"budget={budget}, hard_ceiling=600")
    history = _run(small, tmp_path)
    # keep_last keeps the two results and drops their call: the guard drops
    # the whole unit instead (the user message is the latest: protected)
    assert [m["role"] for m in history] == ["user"]
    assert validate(history, Provider.OPENAI) == []
