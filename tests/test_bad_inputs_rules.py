"""Bad-input cases of issue 34's new providers: ``prunecheck validate
--format NAME`` on a body that is not that provider's request at all (a
Gemini body without ``contents``, Converse content that is not a block list,
a Responses item without a type, ...).

They reuse :mod:`test_bad_inputs`' machinery (:class:`Case`, ``_c``, ``_run``
and its ``case_dir`` fixture) and assert what it asserts: exit status 2, no
traceback, one paragraph on stderr naming the bad part and a hint, nothing
on stdout, and no file changed but the one the case wrote.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_bad_inputs import Case, _c, _run, case_dir

__all__ = ["case_dir"]  # the fixture, imported for pytest

_CALL = {"type": "function_call", "name": "read_file", "arguments": "{}"}
#: case name -> (provider, the body written to {tmp}/body.json, a phrase of the paragraph)
BODIES: dict[str, tuple[str, object, str]] = {
    "gemini-no-contents": ("gemini", {"messages": []}, "without 'contents'"),
    "gemini-parts-not-a-list": (
        "gemini", {"contents": [{"role": "user", "parts": "hi"}]}, "a content holds a list"
    ),
    "gemini-role": ("gemini", {"contents": [{"role": "assistant", "parts": []}]},
                    "a Gemini message's role is one of user, model"),
    "gemini-call-without-name": (
        "gemini", {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
        "neither a string 'id' nor a 'name'",
    ),
    "bedrock-content-a-string": (
        "bedrock", {"messages": [{"role": "user", "content": "hi"}]}, "a list of blocks"
    ),
    "bedrock-tool-use-in-user": (
        "bedrock",
        {"messages": [{"role": "user", "content": [{"toolUse": {"toolUseId": "t1"}}]}]},
        "is a toolUse block in a user message",
    ),
    "bedrock-result-without-id": (
        "bedrock", {"messages": [{"role": "user", "content": [{"toolResult": {}}]}]},
        "without a string 'toolUseId'",
    ),
    "responses-no-input": ("openai-responses", {"messages": []}, "without 'input'"),
    "responses-item-without-type": (
        "openai-responses", {"input": [{"call_id": "c1", "output": "x"}]}, "without a string 'type'"
    ),
    "responses-call-without-id": ("openai-responses", {"input": [_CALL]}, "'call_id'"),
    "mistral-role": (
        "mistral", {"messages": [{"role": "developer", "content": "x"}]}, "a Mistral message's role"
    ),
}  # fmt: skip
CASES = [
    _c(name, f"validate {{tmp}}/body.json --format {provider}", needle=needle)
    for name, (provider, _, needle) in BODIES.items()
]


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_not_that_providers_body(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (case_dir / "body.json").write_text(json.dumps(BODIES[case.name][1]), encoding="utf-8")
    before = _snapshot(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
    assert len(paragraph) == 1, err[-2000:]
    assert case.needle in paragraph[0], paragraph[0]
    assert "Hint:" in paragraph[0]
    assert out == ""
    assert _snapshot(case_dir) == before
