"""``prunecheck replay``: narrative, exit status 0 / 1 / 2, and one-paragraph
errors for bad input (never a traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import build_parser, main
from prunecheck.sim.cli.trusted import load_trace

CORPUS = Path(__file__).parent / "corpus"
PARALLEL = str(CORPUS / "seed_parallel_batch.json")
STREAMING = str(CORPUS / "seed_streaming_result.json")


def trace_file(
    tmp_path: Path, events: list[dict[str, object]], policy: str = "recency", **extra: object
) -> str:
    path = tmp_path / "trace.json"
    data = {
        "format": "prunecheck-trace",
        "version": 1,
        "policy": policy,
        "config": {"budget": 100, "hard_ceiling": 200},
        "events": events,
        **extra,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_exit_1_on_a_documented_incident_with_a_narrative(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", PARALLEL]) == 1
    out = capsys.readouterr().out
    assert out.startswith("policy lowest_salience · gate none · checks after_append")
    assert "[  7] result for c1 (3240 tokens)" in out
    assert "!! VIOLATION: orphaned result: result m6 for call c1" in out
    assert (
        "HTTP 400: messages.2.content.0: unexpected `tool_use_id` found in `tool_result` "
        "blocks: c1."
    ) in out
    assert out.rstrip().endswith(
        "verdict: 10 violation(s) (4 invalid prune, 4 orphaned "
        "result, 1 provider rejection, 1 duplicated side effect)."
    )


def test_exit_0_under_the_commit_gate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", STREAMING, "--gate", "commit", "--quiet"]) == 0
    assert capsys.readouterr().out == "verdict: no violation; costs: 3 deferral.\n"


def test_policy_override_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", PARALLEL, "unit_safe", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("**policy unit_safe · gate none")
    assert "7. result for c1 (3240 tokens)" in out
    assert out.rstrip().endswith("**Verdict:** no violation.")


def test_a_bundle_folder_replays_its_trace_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trace.json").write_text(
        Path(STREAMING).read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert main(["replay", str(tmp_path), "--quiet"]) == 1
    assert "truncated payload" in capsys.readouterr().out


BAD = {
    "not_json": (
        "{not json",
        "is not JSON (Expecting property name enclosed in double quotes at line 1, column 2).",
    ),
    "wrong_format": (
        '{"format": "otel-trace", "version": 1}',
        "'format' must be 'prunecheck-trace', got 'otel-trace'.",
    ),
    "wrong_version": (
        '{"format": "prunecheck-trace", "version": 7}',
        "trace version 7 is not supported",
    ),
    "not_an_object": ("[1, 2]", "a trace must be a JSON object."),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_malformed_trace_files(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, rule = BAD[name]
    path = tmp_path / f"{name}.json"
    path.write_text(text, encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.startswith(f"prunecheck replay: {path}: ") and rule in err
    assert "Hint: " in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "events, policy, expected",
    [
        (
            [{"kind": "explode"}],
            "recency",
            "events[0]: unknown event kind 'explode'. Hint: use one "
            "of: assistant, batch, check, clear_tool_uses, compaction, failure, invoke, result, "
            "retry, session, system, user, write.",
        ),
        (
            [{"kind": "user", "tokens": -3}],
            "recency",
            "events[0]: field 'tokens' must be a non-negative integer, got -3.",
        ),
        (
            [{"kind": "user", "tokens": 5}, {"kind": "result", "call": "c9", "tokens": 5}],
            "recency",
            "events[1] (result): a result chunk for unknown call 'c9'. Hint: calls are numbered "
            "c1, c2 … in the order batches issue them.",
        ),
        (
            [
                {"kind": "batch", "calls": [{"tool": "grep"}], "tokens": 5},
                {"kind": "assistant", "tokens": 5},
            ],
            "recency",
            "events[1] (assistant): assistant text while call(s) c1 are pending",
        ),
    ],
)
def test_bad_events_name_the_file_and_the_event(
    events: list[dict[str, object]],
    policy: str,
    expected: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = trace_file(tmp_path, events, policy)
    assert main(["replay", path]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prunecheck replay: {path}")
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "spec, expected",
    [
        (
            "no_such_policy",
            "policy spec 'no_such_policy': is neither a built-in policy nor of "
            "the form module:attr or file.py:attr.",
        ),
        (
            "no_such_module_xyz:select",
            "policy spec 'no_such_module_xyz:select': module "
            "'no_such_module_xyz' cannot be imported",
        ),
        (
            "missing/file.py:select",
            "policy spec 'missing/file.py:select': file missing/file.py does not exist.",
        ),
    ],
)
def test_unknown_policy_spec(
    spec: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = trace_file(tmp_path, [{"kind": "user", "tokens": 5}], spec)
    assert main(["replay", path, "--trust-policy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prunecheck replay: {expected}")
    assert "Hint: " in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_policy_that_raises_mid_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "boom.py"
    policy.write_text(
        "def select(view, need):\n    raise RuntimeError('no scores')\n", encoding="utf-8"
    )
    path = trace_file(tmp_path, [{"kind": "user", "tokens": 150}], f"{policy}:select")
    assert main(["replay", path, "--trust-policy"]) == 2
    err = capsys.readouterr().err
    assert (
        "policy 'select' at step 1: select(view, need=50) raised RuntimeError: no scores "
        f"({policy}, line 2: raise RuntimeError('no scores'))." in err
    )  # the policy's file, line and code (issue 36)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_and_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    assert main(["replay", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"prunecheck replay: {missing}: does not exist. Hint: give the path of a trace JSON file.\n"
    )
    assert main(["replay", PARALLEL, "--gate", "sometimes"]) == 2
    err = capsys.readouterr().err
    assert "bad command-line argument" in err and "Traceback" not in err


def test_help_has_an_example() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(sub.choices, dict)
    text = sub.choices["replay"].format_help()
    assert "example:\n  prunecheck replay tests/corpus/seed_parallel_batch.json" in text
    assert "exit status: 0 no violation, 1 a violation" in text


def test_load_trace_reads_files_and_folders(tmp_path: Path) -> None:
    assert load_trace(PARALLEL).policy == "lowest_salience"
    (tmp_path / "trace.json").write_text(
        Path(PARALLEL).read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert load_trace(str(tmp_path)) == load_trace(PARALLEL)


def test_python_dash_m_bad_input_is_one_paragraph_without_traceback(tmp_path: Path) -> None:
    path = trace_file(
        tmp_path, [{"kind": "user", "tokens": 5}, {"kind": "result", "call": "c1", "tokens": 5}]
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "prunecheck", "replay", path],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"prunecheck replay: {path}: events[1] (result): ")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_python_dash_m_exit_status_1_on_a_violation() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "prunecheck", "replay", STREAMING, "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout == "verdict: 4 violation(s) (3 invalid prune, 1 truncated payload).\n"
