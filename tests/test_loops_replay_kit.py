"""The engine of the adapters' standalone scripts (sim/loops/frameworks/replay_kit.py):
its pairing check against prunecheck's own, the assembly of a script from
source, and one in-process replay per framework (the scripts themselves run
in subprocesses in the slow tests of test_loops_langgraph/test_loops_autogen).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_doubles import call, errors

from prunecheck.sim.adapters.user_code import find_object
from prunecheck.sim.loops.frameworks import replay_kit
from prunecheck.sim.loops.frameworks.replay_kit import openai_errors, replay, standalone_script
from prunecheck.sim.loops.steps import Complete, ReplyStep, Step, User, step_to_json

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "loops"


def _assistant(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": "", "tool_calls": calls}


def _tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


USER = {"role": "user", "content": "hi"}


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
def test_pairing_check_agrees_with_prunecheck(messages: list[dict[str, Any]]) -> None:
    request = {"messages": messages}
    assert openai_errors(request) == errors(request)


def test_a_script_inlines_its_modules_without_importing_prunecheck() -> None:
    schedule = json.dumps({"format": "prunecheck-loop-schedule/1", "steps": [{"kind": "cancel"}]})
    text = standalone_script("Nothing", [json], "None", "app.py:agent", schedule)
    code = [ln.strip() for ln in text.splitlines()]
    assert not [ln for ln in code if ln.startswith(("from prunecheck", "import prunecheck"))]
    assert code.count("from __future__ import annotations") == 1
    assert "TARGET = 'app.py:agent'" in code and "def load_target(spec):" in code
    compile(text, "reproduce.py", "exec")
    assert "# ---- replay_kit ----" in text and replay_kit.__doc__ is not None


def _steps(steps: list[Step]) -> list[dict[str, object]]:
    return [step_to_json(s) for s in steps]


_TWO_TURNS: list[Step] = [
    User("look both up"),
    ReplyStep(calls=(call(1), call(2))),
    Complete("call_2", "b found"),
    Complete("call_1", "a found"),
    ReplyStep(text="both found"),
    User("and now?"),
]


def test_replay_of_the_langgraph_trimming_example_prints_the_400(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langgraph.checkpoint.sqlite")
    from prunecheck.sim.loops.frameworks.langgraph import LangGraphAdapter

    target = find_object(str(EXAMPLES / "langgraph_trim.py"), "agent", "the example")
    found = replay(lambda h: LangGraphAdapter().open(target, h), _steps(_TWO_TURNS), tmp_path)
    out = capsys.readouterr().out
    assert found == 1
    assert (
        "BROKEN REQUEST 3 (after step 6): 400 Invalid parameter: messages with role 'tool'" in out
    )
    assert [ln[:7] for ln in out.splitlines() if ln.startswith("step ")] == [
        f"step {n:2}" for n in range(1, 7)
    ]


def test_replay_of_the_autogen_token_limited_example_prints_the_400(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("autogen_agentchat")
    from prunecheck.sim.loops.frameworks.autogen import AutoGenAdapter

    target = find_object(str(EXAMPLES / "autogen_token_limited.py"), "agent", "the example")
    wide = "x" * 650
    steps = [*_TWO_TURNS[:2], Complete("call_2", wide), Complete("call_1", wide)]
    found = replay(lambda h: AutoGenAdapter().open(target, h), _steps(steps), tmp_path)
    out = capsys.readouterr().out
    assert found == 1
    assert (
        "BROKEN REQUEST 2 (after step 4): 400 Invalid parameter: messages with role 'tool'" in out
    )
