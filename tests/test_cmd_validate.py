"""Tests of ``prunecheck validate`` (prunecheck.sim.cli.validate)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main

DATA = Path(__file__).parent / "data" / "transcripts"

ANTHROPIC_ORPHAN = (
    "HTTP 400 (anthropic): messages.3.content.0: unexpected `tool_use_id` found in "
    "`tool_result` blocks: toolu_01Q8sTRf2bYc5NnmKx6wEv1A. Each `tool_result` block must "
    "have a corresponding `tool_use` block in the previous message."
)
ANTHROPIC_MISSING = (
    "HTTP 400 (anthropic): messages.1: `tool_use` ids were found without `tool_result` "
    "blocks immediately after: toolu_01Q8sTRf2bYc5NnmKx6wEv1A. Each `tool_use` block must "
    "have a corresponding `tool_result` block in the next message."
)
OPENAI_ORPHAN = (
    "HTTP 400 (openai): Invalid parameter: messages with role 'tool' must be a response to "
    "a preceeding message with 'tool_calls'."
)
OPENAI_MISSING = (
    "HTTP 400 (openai): An assistant message with 'tool_calls' must be followed by tool "
    "messages responding to each 'tool_call_id'. The following tool_call_ids did not have "
    "response messages: call_Jp3YtD8uGfW6nK2oXq5bMs4v"
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["validate", *argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("name", "fmt", "count"),
    [("anthropic_ok.json", "anthropic", 5), ("openai_ok.json", "openai", 7)],
)
def test_clean_transcript(
    capsys: pytest.CaptureFixture[str], name: str, fmt: str, count: int
) -> None:
    status, out, err = run(capsys, str(DATA / name), "--format", fmt)
    assert (status, err) == (0, "")
    assert out == f"ok: {count} messages, no tool pairing errors ({fmt})\n"


@pytest.mark.parametrize(
    ("name", "fmt", "line"),
    [
        ("anthropic_orphan_result.json", "anthropic", ANTHROPIC_ORPHAN),
        ("anthropic_missing_result.json", "anthropic", ANTHROPIC_MISSING),
        ("openai_orphan_result.json", "openai", OPENAI_ORPHAN),
        ("openai_missing_result.json", "openai", OPENAI_MISSING),
    ],
)
def test_rejected_transcript(
    capsys: pytest.CaptureFixture[str], name: str, fmt: str, line: str
) -> None:
    path = str(DATA / name)
    status, out, err = run(capsys, path, "--format", fmt)
    assert (status, err) == (1, "")
    assert out == f"{path}: 1 tool pairing error ({fmt} reports only the first):\n{line}\n"


def test_several_errors_all_printed_first_is_the_answer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "two.json"
    path.write_text(
        '[{"role": "tool", "tool_call_id": "call_a", "content": "x"},'
        ' {"role": "assistant", "content": null, "tool_calls": [{"id": "call_b",'
        ' "type": "function", "function": {"name": "read", "arguments": "{}"}}]}]'
    )
    status, out, _ = run(capsys, str(path), "--format", "openai")
    assert status == 1
    assert out.splitlines() == [
        f"{path}: 2 tool pairing errors (openai reports only the first):",
        OPENAI_ORPHAN,
        OPENAI_MISSING.replace("call_Jp3YtD8uGfW6nK2oXq5bMs4v", "call_b"),
    ]


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    text = (DATA / "openai_orphan_result.json").read_text()
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status, out, _ = run(capsys, "-", "--format", "openai")
    assert status == 1
    assert out.startswith("<stdin>: 1 tool pairing error (openai reports only the first):\n")


def test_wrong_format_is_not_a_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "openai_ok.json")
    status, out, err = run(capsys, path, "--format", "anthropic")
    assert (status, out) == (2, "")
    assert err == (
        f"prunecheck validate: {path}: is not an Anthropic transcript: messages[2] has "
        "'tool_calls', as OpenAI Chat Completions messages do. Hint: validate it with "
        "--format openai.\n"
    )


def test_not_json(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "not_json.txt")
    status, out, err = run(capsys, path, "--format", "anthropic")
    assert (status, out) == (2, "")
    assert err.startswith(
        f"prunecheck validate: {path}: is not JSON: Expecting value at line 4, column 3. Hint: "
    )
    assert err.count("\n") == 1


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(tmp_path / "nope.json")
    status, out, err = run(capsys, path, "--format", "openai")
    assert (status, out) == (2, "")
    assert err == (
        f"prunecheck validate: {path}: does not exist. "
        "Hint: Check the path, or pass '-' to read stdin.\n"
    )


def test_not_a_message_list(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "body.json"
    path.write_text('{"messages": "hello"}')
    status, out, err = run(capsys, str(path), "--format", "openai")
    assert (status, out) == (2, "")
    assert err.startswith(f"prunecheck validate: {path}: holds a JSON string where a list")
    assert err.count("\n") == 1


def test_unknown_format_is_one_paragraph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(DATA / "openai_ok.json"), "--format", "cohere"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'cohere'" in err
    assert err.count("\n") == 1


def test_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "prunecheck validate request.json --format anthropic" in out
    assert "exit status: 0 clean, 1" in out


def test_module_run_on_bad_json_has_no_traceback() -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "prunecheck", "validate", str(DATA / "not_json.txt"),
         "--format", "openai"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "is not JSON" in proc.stderr
