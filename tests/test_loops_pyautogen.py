"""The AutoGen 0.2 (pyautogen) loop adapter's pure parts, in the main venv (pyautogen
needs openai<2: the adapter itself runs in the known-bug corpus's venvs, where
``known_bugs/run.py`` and the slow ``tests/test_loop_releases.py`` drive it)."""

from __future__ import annotations

import json
from typing import Any

from prunecheck.sim.subjects.loops.frameworks.pyautogen import render_messages
from prunecheck.sim.subjects.loops.frameworks.pyautogen_repro import script_text
from prunecheck.sim.subjects.loops.target import adapter_named


def _call(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "calc", "arguments": "{}"}}


def test_tool_responses_are_unrolled_as_autogen_sends_them() -> None:
    held: list[dict[str, Any]] = [
        {"role": "user", "name": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        {
            "role": "tool",
            "content": "1\n\n2",
            "tool_responses": [
                {"role": "tool", "tool_call_id": "c1", "content": "1"},
                {"role": "tool", "tool_call_id": "c2", "content": "2"},
            ],
        },
    ]
    out = render_messages(held)
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "tool"]
    assert [m.get("tool_call_id") for m in out[2:]] == ["c1", "c2"]
    assert out[1]["content"] is None and len(out[1]["tool_calls"]) == 2  # type: ignore[arg-type]


def test_the_reproduction_is_a_short_script_of_the_schedule(tmp_path: object) -> None:
    schedule = {
        "format": "prunecheck-loop-schedule/1",
        "scenario": "trim",
        "expect": ["orphaned_result"],
        "seed": 3,
        "steps": [
            {"kind": "user", "text": "what is 1+1?"},
            {"kind": "reply", "text": "", "calls": [
                {"id": "call_1", "name": "calc", "arguments": "{\"a\": 1}"},
                {"id": "call_2", "name": "calc", "arguments": "{\"a\": 2}"}]},
            {"kind": "fail", "call": "call_2", "error": "boom"},
            {"kind": "complete", "call": "call_1", "output": "2"},
            {"kind": "reply", "text": "2"},
        ],
    }  # fmt: skip
    text = script_text("agent.py:assistant", json.dumps(schedule))
    assert len(text.splitlines()) <= 80
    compile(text, "repro.py", "exec")
    assert "TURNS = ['what is 1+1?']" in text
    # outcomes per tool in the calls' order, whatever order they finished in
    assert "OUTCOMES = {'calc': [('ok', '2'), ('fail', 'boom')]}" in text
    assert "getattr(importlib.import_module('agent'), 'assistant')" in text


def test_the_adapter_loads_without_autogen_and_takes_nothing_else() -> None:
    adapter = adapter_named("pyautogen")
    assert adapter.framework == "pyautogen"
    assert adapter.accepts(object()) is False
