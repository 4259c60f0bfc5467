"""Bad-input cases of the server-side events (issue 34), run by the machinery
of ``tests/test_bad_inputs.py``: a chained invocation, a server compaction
or a ``clear_tool_uses`` edit that is malformed, or impossible for the
trace's provider or history, is refused by ``prunecheck replay`` with exit
2, one paragraph naming the file and the event, no traceback, and no file
of the case's folder changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

case_dir = test_bad_inputs.case_dir  # the fixture

_START = [{"kind": "system", "tokens": 10}, {"kind": "user", "tokens": 10}]
_ROUND = [
    {"kind": "invoke"},
    {"kind": "batch", "calls": [{"tool": "grep"}], "tokens": 5},
    {"kind": "result", "call": "c1", "tokens": 5},
]

#: name -> (provider, events, trace version)
TRACES: dict[str, tuple[str, list[object], int]] = {
    "chained_anthropic": ("anthropic", [*_START, *_ROUND, {"kind": "invoke", "chained": True}], 2),
    "chained_first": ("openai-responses", [*_START, {"kind": "invoke", "chained": True}], 2),
    "chained_yes": ("openai-responses", [*_START, {"kind": "invoke", "chained": "yes"}], 2),
    "compaction_openai": ("openai", [*_START, *_ROUND, {"kind": "compaction", "tokens": 9}], 2),
    "compaction_first": ("openai-responses", [*_START, {"kind": "compaction", "tokens": 9}], 2),
    "compaction_no_tokens": ("openai-responses", [*_START, {"kind": "compaction"}], 2),
    "compaction_keep": (
        "openai-responses",
        [*_START, {"kind": "compaction", "tokens": 9, "keep": 2}],
        2,
    ),
    "clear_openai": ("openai", [*_START, {"kind": "clear_tool_uses"}], 2),
    "clear_keep_negative": ("anthropic", [*_START, {"kind": "clear_tool_uses", "keep": -1}], 2),
    "clear_trigger_text": (
        "anthropic",
        [*_START, {"kind": "clear_tool_uses", "trigger": "100k"}],
        2,
    ),
    "clear_exclude_text": (
        "anthropic",
        [*_START, {"kind": "clear_tool_uses", "exclude_tools": "memory"}],
        2,
    ),
    "clear_exclude_numbers": (
        "anthropic",
        [*_START, {"kind": "clear_tool_uses", "exclude_tools": [1]}],
        2,
    ),
    "clear_inputs_text": (
        "anthropic",
        [*_START, {"kind": "clear_tool_uses", "clear_tool_inputs": "true"}],
        2,
    ),
    "version_3": ("openai-responses", [*_START, *_ROUND, {"kind": "invoke", "chained": True}], 3),
}

CASES = [
    _c("server-chained-anthropic", "replay {tmp}/chained_anthropic.json",
       needle="events[5] (invoke): a chained invocation (previous_response_id) under provider "
       "anthropic"),
    _c("server-chained-first", "replay {tmp}/chained_first.json",
       needle="with no stored response before it"),
    _c("server-chained-yes", "replay {tmp}/chained_yes.json",
       needle="events[2]: field 'chained' must be true or false, got 'yes'."),
    _c("server-compaction-openai", "replay {tmp}/compaction_openai.json",
       needle="a server compaction with no stored response"),
    _c("server-compaction-first", "replay {tmp}/compaction_first.json",
       needle="events[2] (compaction): a server compaction with no stored response"),
    _c("server-compaction-no-tokens", "replay {tmp}/compaction_no_tokens.json",
       needle="event 'compaction' is missing field(s) ['tokens']"),
    _c("server-compaction-keep", "replay {tmp}/compaction_keep.json",
       needle="event 'compaction' has unknown field(s) ['keep']"),
    _c("server-clear-openai", "replay {tmp}/clear_openai.json",
       needle="clear_tool_uses is Anthropic's server-side context editing; the trace's "
       "provider is openai."),
    _c("server-clear-keep-negative", "replay {tmp}/clear_keep_negative.json",
       needle="field 'keep' must be a non-negative integer, got -1."),
    _c("server-clear-trigger-text", "replay {tmp}/clear_trigger_text.json",
       needle="field 'trigger' must be a non-negative integer, got '100k'."),
    _c("server-clear-exclude-text", "replay {tmp}/clear_exclude_text.json",
       needle="field 'exclude_tools' must be a list of tool names, got 'memory'."),
    _c("server-clear-exclude-numbers", "replay {tmp}/clear_exclude_numbers.json",
       needle="field 'exclude_tools' must be a list of tool names, got [1]."),
    _c("server-clear-inputs-text", "replay {tmp}/clear_inputs_text.json",
       needle="field 'clear_tool_inputs' must be true or false, got 'true'."),
    _c("server-version-3", "replay {tmp}/version_3.json",
       needle="trace version 3 is not supported (this prunecheck reads versions 1 and 2)."),
]  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_trace_has_a_case() -> None:
    named = {a.split("/")[-1] for c in CASES for a in c.argv if a.endswith(".json")}
    assert named == {f"{name}.json" for name in TRACES}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, (provider, events, version) in TRACES.items():
        trace = {
            "format": "prunecheck-trace",
            "version": version,
            "policy": "recency",
            "config": {"provider": provider},
            "events": events,
        }
        (case_dir / f"{name}.json").write_text(json.dumps(trace), encoding="utf-8")
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert case.argv[1].format(tmp=case_dir) in err  # the paragraph names the file
    assert out == ""  # a file read whole is told whole or not at all
    assert _tree(case_dir) == before
