"""The one engine of the adapters' standalone scripts (sim/loops/frameworks/_scripts.py):
the assembly of a script from source, and its judge — the pairing check
against prunecheck's own, the ledger checks against the core judge's rules.
The scripts themselves run in subprocesses in the adapters' slow tests and
in test_loops_table_scripts.py.
"""

from __future__ import annotations

import json
import keyword
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest
from loops_play import call, errors

from prunecheck.sim.loops.frameworks._scripts import script_text

_SCHEDULE = json.dumps({"format": "prunecheck-loop-schedule/1", "steps": []})


@pytest.fixture(scope="module")
def engine() -> Iterator[dict[str, Any]]:
    """A script's namespace, executed as a module (not as ``__main__``: nothing replays)."""
    text = script_text([keyword], "Nothing", "app.py:agent", _SCHEDULE, "None")
    module = types.ModuleType("prunecheck_reproduce_probe")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(compile(text, "reproduce.py", "exec"), module.__dict__)
        yield module.__dict__
    finally:
        del sys.modules[module.__name__]


def test_a_script_inlines_its_modules_without_importing_prunecheck() -> None:
    text = script_text([keyword], "Nothing", "app.py:agent", _SCHEDULE, "None")
    code = [ln.strip() for ln in text.splitlines()]
    assert not [ln for ln in code if ln.startswith(("from prunecheck", "import prunecheck"))]
    assert not [ln for ln in code if ln.startswith("from .")]
    assert code.count("from __future__ import annotations") == 1
    assert "TARGET = 'app.py:agent'" in code and "def run_schedule(adapter, target, steps):" in code
    assert [ln for ln in code if ln.startswith("# ---") and ln.endswith(" keyword (Nothing)")]


def _assistant(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def _tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "hi"}


def _findings(engine: dict[str, Any], request: dict[str, Any], **ledger: Any) -> list[str]:
    harness = engine["Harness"](None)
    for name, value in ledger.items():
        setattr(harness, name, value)
    harness.judge(request)
    return list(harness.findings)


@pytest.mark.parametrize(
    "messages",
    [
        [USER],
        [USER, _assistant("a", "b"), _tool("b"), _tool("a")],
        [USER, _tool("a")],
        [USER, _assistant("a", "b"), _tool("a"), USER],
        [USER, _assistant("a"), USER, _tool("a")],
        [USER, _assistant("a", "b")],
        [USER, _assistant("a"), _tool("a"), _assistant("b"), _tool("a")],
    ],
    ids=["plain", "closed", "orphan-result", "open-batch", "late-result", "trailing", "stale-id"],
)
def test_pairing_check_agrees_with_prunecheck(
    engine: dict[str, Any], messages: list[dict[str, Any]]
) -> None:
    request = {"messages": messages}
    raw = _findings(engine, request)
    found = [f.split(": ", 2)[2] for f in raw]
    assert sorted(set(found)) == sorted(set(errors(request)))
    assert all(f.startswith("BROKEN REQUEST (HTTP 400): messages.") for f in raw)


def _ledger(engine: dict[str, Any], *batches: tuple[str, ...]) -> dict[str, Any]:
    """Issued batches (each at its own step, after user message 'hi' at step 0), every body done."""
    issued, bodies = {}, {}
    for step, batch in enumerate(batches, 1):
        for cid in batch:
            n = int(cid.split("_")[1])
            issued[cid] = (engine["ToolCall"](cid, "read_file", call(n).arguments), batch, step)
            bodies[cid] = [["ok", f"out {cid}"]]
    return {"issued": issued, "bodies": bodies, "users": [(0, "hi")]}


def test_an_executed_call_gone_without_a_trim_is_a_ledger_mismatch(
    engine: dict[str, Any],
) -> None:
    ledger = _ledger(engine, ("call_1",))
    found = _findings(engine, {"messages": [USER, USER]}, **ledger)
    assert found == [
        "LEDGER MISMATCH: call_1 ran (it returned 'out call_1') but the model no longer sees "
        "its call nor its result: no trim removed it"
    ]


def test_a_trimmed_whole_unit_from_the_front_is_no_mismatch(engine: dict[str, Any]) -> None:
    ledger = _ledger(engine, ("call_1",), ("call_2",))
    request = {"messages": [_assistant("call_2"), _tool("call_2", "out call_2")]}
    assert _findings(engine, request, trims=True, **ledger) == []
    # ... but a cut batch, or an older call still sent, is one even where the loop trims
    ledger = _ledger(engine, ("call_1", "call_2"))
    request = {"messages": [_assistant("call_2"), _tool("call_2", "out call_2")]}
    assert _findings(engine, request, trims=True, **ledger) == [
        "LEDGER MISMATCH: call_1 ran (it returned 'out call_1') but the model no longer sees "
        "its call nor its result: its parallel batch was cut (call_2 kept)"
    ]


def test_a_result_no_tool_returned_is_a_ledger_mismatch(engine: dict[str, Any]) -> None:
    ledger = _ledger(engine, ("call_1",))
    request = {"messages": [USER, _assistant("call_1"), _tool("call_1", "made up")]}
    assert _findings(engine, request, **ledger) == [
        "LEDGER MISMATCH: the model is told call_1 returned 'made up'; its tool body returned "
        "'out call_1'"
    ]
    ledger["bodies"] = {"call_1": [["dropped", ""]]}
    assert _findings(engine, request, **ledger) == [
        "LEDGER MISMATCH: the model is told call_1 returned 'made up'; its body was dropped "
        "by a crash"
    ]
    placeholder = {"messages": [USER, _assistant("call_1"), _tool("call_1", "Interrupted.")]}
    assert _findings(engine, placeholder, **ledger) == []
