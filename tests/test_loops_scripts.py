"""The one engine of the adapters' standalone scripts (sim/loops/frameworks/_scripts.py):
the assembly of a script from source, and its judge — the pairing check
against prunecheck's own, the ledger checks against the core judge's rules.
The scripts themselves run in subprocesses in the adapters' slow tests and
in test_loops_table_scripts.py.
"""

from __future__ import annotations

import importlib.util
import json
import keyword
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loops_play import errors

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
    parts = [ln.rsplit(" ", 1)[-1] for ln in code if ln.startswith("# ---")]
    assert parts[1:6] == ["ledger", "judge", "_common", "keyword", "adapter"]


def _assistant(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def _tool(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


USER = {"role": "user", "content": "hi"}


Batches = tuple[tuple[str, ...], ...]


def _findings(engine: dict[str, Any], request: dict[str, Any], *, trims: bool = False,
              batches: Batches = (), done: str = "ok") -> list[str]:  # fmt: skip
    """The script harness's findings on ``request`` after user message 'hi' (step
    0) and ``batches`` issued (a step each), every body ended ``done``."""
    harness = engine["ScriptHarness"](None)
    harness.trims = trims
    ledger = harness.ledger
    ledger.users.append((0, "hi"))
    for step, batch in enumerate(batches, 1):
        ledger.issue(tuple(engine["ToolCall"](c, "read_file", "{}") for c in batch), step)
        for cid in batch:
            body = engine["Body"](cid, step)
            body.end, body.ended, body.output = engine["BodyEnd"](done), step, f"out {cid}"
            ledger.bodies.append(body)
    harness.step = len(batches) + 1
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


def test_an_executed_call_gone_without_a_trim_is_a_ledger_mismatch(
    engine: dict[str, Any],
) -> None:
    found = _findings(engine, {"messages": [USER, USER]}, batches=(("call_1",),))
    assert found == [
        "LEDGER MISMATCH: read_file ran for call_1 but the model is no longer told: no trim "
        "removed it"
    ]


def test_a_trim_of_a_whole_held_unit_is_no_mismatch_but_a_cut_batch_is(
    engine: dict[str, Any],
) -> None:
    kept = {"messages": [_assistant("call_2"), _tool("call_2", "out call_2")]}
    assert _findings(engine, kept, trims=True, batches=(("call_1",), ("call_2",))) == []
    cut = _findings(engine, kept, trims=True, batches=(("call_1", "call_2"),))
    assert cut == [
        "LEDGER MISMATCH: the trim removed call_1 (read_file, it ran) and kept call_2 of the "
        "same unit: a prune must remove whole units"
    ]


def test_a_result_no_tool_returned_is_a_ledger_mismatch(engine: dict[str, Any]) -> None:
    told = {"messages": [USER, _assistant("call_1"), _tool("call_1", "made up")]}
    assert _findings(engine, told, batches=(("call_1",),)) == [
        "LEDGER MISMATCH: the result of call_1 is not what its tool returned"
    ]
    assert _findings(engine, told, batches=(("call_1",),), done="dropped") == [
        "LEDGER MISMATCH: the result of call_1 was invented: its body was dropped by a crash"
    ]
    placeholder = {"messages": [USER, _assistant("call_1"), _tool("call_1", "Interrupted.")]}
    assert _findings(engine, placeholder, batches=(("call_1",),), done="dropped") == []


def test_two_parts_defining_one_name_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "clash.py"
    source.write_text("class Ledger:\n    pass\n")
    spec = importlib.util.spec_from_file_location("clash", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(ValueError, match="'ledger' and 'clash' both define 'Ledger'"):
        script_text([module], "X", "a.py:b", _SCHEDULE, "None")
