"""``--json`` (issue 23): every checking command prints one document on
stdout, valid against the committed schema ``schemas/verdict-3.json``; the
human text goes to stderr; exit statuses are unchanged."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from check_runs import QUICK_FIND, SMALL_SUITE, CheckRun
from timeline_sketch import timeline_sketched

from prunecheck.sim.api.documents import SCHEMA_NAME, SCHEMA_VERSION, VERDICT_OF_STATUS
from prunecheck.sim.cli.app import main

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / f"verdict-{SCHEMA_VERSION}.json"
CORPUS = ROOT / "tests" / "corpus"


@pytest.fixture(autouse=True)
def _no_timeline_drawn() -> Iterator[None]:
    """The bundles written here are read for their trace, narrative or
    request, not their timeline's pixels (tests/timeline_sketch.py)."""
    with timeline_sketched():
        yield


@cache
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    """Run a command with --json: its status, its document (all of stdout), stderr."""
    status = main([*argv, "--json"])
    out, err = capsys.readouterr()
    doc = json.loads(out)  # stdout holds the document and nothing else
    validator().validate(doc)
    assert doc["exit_status"] == status
    assert doc["verdict"] == VERDICT_OF_STATUS[status] or doc["command"] == "sweep"
    return status, doc, err


def test_the_schema_is_draft_2020_12_and_names_its_version() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"]["const"] == SCHEMA_NAME
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    # The schema can fail: a document missing its verdict, or with a made-up one, is refused.
    with pytest.raises(jsonschema.ValidationError):
        validator().validate({"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION})
    bad = {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "command": "check",
        "policy": None,
        "verdict": "probably fine",
        "exit_status": 0,
        "runtime": None,
        "placements": [],
        "exercised": {},
        "first_violation": None,
        "reproduction": None,
        "error": None,
        "details": {},
    }
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(bad)
    validator().validate({**bad, "verdict": "safe"})


def checked(run: CheckRun) -> tuple[int, dict[str, Any], str]:
    """A shared ``check --json`` run (tests/check_runs.py), validated as run_json does."""
    validator().validate(run.doc)
    assert run.doc["exit_status"] == run.status
    assert run.doc["verdict"] == VERDICT_OF_STATUS[run.status]
    return run.status, run.doc, run.err


def test_the_schema_takes_a_budget_in_any_unit_the_code_names() -> None:
    """A loop's budget may be counted in what the user's code slices
    (``outputs[-KEEP_OUTPUTS:]``: outputs), items, turns, or an unknown unit
    (``KEEP = 3``): the schema refuses none of them, and still refuses an empty one."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    found = [n["properties"]["budget"] for n in _walk(schema)
             if "oneOf" in (n.get("properties") or {}).get("budget", {})]  # fmt: skip
    assert found, "the schema has no loop budget (amount, unit, where)"
    for budget in found:
        check = jsonschema.Draft202012Validator(budget)
        for unit in ("tokens", "characters", "messages", "seconds", "outputs", "items", "unknown"):
            check.validate({"amount": 3, "unit": unit, "where": "module constant KEEP = 3"})
        with pytest.raises(jsonschema.ValidationError):
            check.validate({"amount": 3, "unit": "", "where": "x"})


def _walk(node: object) -> Iterator[dict[str, Any]]:
    """Every object of a JSON document, depth first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def test_check_json_holds_a_verdict_per_placement(unsafe_check: CheckRun) -> None:
    """A trimmer safe on complete histories: safe before model calls, unsafe
    after every append; each unsafe placement names its first violation and
    its bundle."""
    status, doc, err = checked(unsafe_check)
    assert status == 1 and doc["verdict"] == "unsafe" and doc["command"] == "check"
    assert "verdict: safe if your runtime trims only before model calls" in err  # human text
    verdicts = {p["check_at"]: p["verdict"] for p in doc["placements"]}
    assert list(verdicts) == ["after_append", "after_batch", "before_invoke"]
    assert verdicts["after_append"] == "unsafe" and verdicts["before_invoke"] == "safe"
    assert doc["details"]["safe_at"] == ["before_invoke"]
    assert doc["runtime"]["provider"] == "openai" and doc["runtime"]["check_at"] == "after_append"
    for placement in doc["placements"]:
        if placement["verdict"] == "unsafe":
            first = placement["first_violation"]
            assert first is not None and first["step"] >= 1 and first["ids"]
            bundle = Path(placement["reproduction"])
            assert (bundle / "trace.json").is_file()
            trace = json.loads((bundle / "trace.json").read_text())
            assert trace["config"]["check_at"] == placement["check_at"]
            assert placement["reproduction_events"] == len(trace["events"])
            assert first["step"] <= len(trace["events"])
        else:
            assert placement["first_violation"] is None and placement["reproduction"] is None
    assert doc["reproduction"] == str(unsafe_check.out)
    assert doc["first_violation"] == doc["placements"][0]["first_violation"]
    scenarios = [s for p in doc["placements"] for s in p["scenarios"]]
    # per placement, the one level and seed given and the slow-call run at that seed
    assert doc["exercised"]["scenarios"] == len(scenarios) == 3 * 2
    assert [s["slow_calls"] for s in scenarios] == [False, True] * 3
    assert doc["exercised"]["invocations"] == sum(s["invocations"] for s in scenarios) > 0


def test_check_json_of_a_safe_policy(safe_check: CheckRun) -> None:
    status, doc, _ = checked(safe_check)
    assert status == 0 and doc["verdict"] == "safe"
    assert doc["first_violation"] is None and doc["reproduction"] is None
    assert all(p["verdict"] == "safe" for p in doc["placements"])
    assert doc["exercised"]["search_examples"] > 0


@pytest.mark.parametrize(
    "suite",
    [
        # the suite alone (make test; the search's determinism: tests/test_search.py),
        # and with a search whose counterexample is shrunk (make test-all)
        pytest.param(["--levels", "0.6", "--seeds", "1", "--max-examples", "0"], id="suite"),
        pytest.param(list(SMALL_SUITE), id="search", marks=pytest.mark.slow),
    ],
)
def test_the_same_seed_gives_the_same_document(
    suite: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", "recency", "--check-at", "after_append", *suite, "--json"]
    texts = []
    for _ in range(2):
        main(argv)
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1] and json.loads(texts[0])["placements"][0]["check_at"]


def test_exit_status_is_the_same_with_and_without_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the statuses are the point: a short search says safe as well
    for policy, expected, options in (
        ("recency", 1, ["--max-examples", "30", *QUICK_FIND]),
        ("unit_safe", 0, ["--max-examples", "10"]),
    ):
        argv = ["search", policy, *options]
        assert main(argv) == expected
        plain = capsys.readouterr().out
        status, doc, err = run_json(capsys, *argv)
        assert status == expected and doc["policy"] == policy
        assert untimed(err) == untimed(plain)  # the human text, moved to stderr


def untimed(text: str) -> str:
    return re.sub(r"[0-9.]+ s\b", "N s", text)


def _baseline(tmp_path: Path) -> Path:
    base = tmp_path / "base.json"
    suite = ["--levels", "0.6", "--seeds", "1-2", "--horizon", "200"]
    argv = ["baseline", "--out", str(base), "lowest_salience", "--gate", "commit", *suite]
    assert main(argv) == 0
    return base


def test_every_checking_command_prints_a_valid_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok = tmp_path / "ok.json"
    ok.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    orphan = tmp_path / "orphan.json"
    orphan.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_1", "content": "42"},
            ]
        ),
        encoding="utf-8",
    )
    base = _baseline(tmp_path)
    capsys.readouterr()
    trace = str(CORPUS / "orphan_in_flight_batch.json")
    runs: list[tuple[list[str], int]] = [
        (["search", "recency", "--max-examples", "30", *QUICK_FIND], 1),
        (["explore", "unit_safe", "--depth", "3"], 0),
        (["explore", "recency", "--depth", "6"], 1),
        (["replay", trace], 1),
        (["validate", str(ok), "--format", "openai"], 0),
        (["validate", str(orphan), "--format", "openai"], 1),
        (["import", str(ROOT / "examples" / "incident" / "spans.otlp.jsonl")], 1),
        (["regress", "--baseline", str(base)], 0),
        (["regress", "--baseline", str(base), "--gate", "none"], 1),
        (
            [
                "sweep",
                "--out",
                str(tmp_path / "r.jsonl"),
                "recency",
                "--gate",
                "none",
                "--levels",
                "0.6",
                "--seeds",
                "1",
                "--horizon",
                "100",
                "--jobs",
                "1",
            ],
            0,
        ),
    ]
    for argv, expected in runs:
        status, doc, err = run_json(capsys, *argv)
        assert (status, doc["command"]) == (expected, argv[0]), err[-2000:]
        assert doc["exercised"], argv
        if argv[0] in ("search", "explore", "replay", "import") and status == 1:
            first = doc["first_violation"]
            assert first is not None, argv
            assert f"{first['class'].replace('_', ' ')}" in err  # the human text names it
        if argv[0] == "replay":
            assert doc["reproduction"] == trace and doc["runtime"] is not None
            step = doc["first_violation"]["step"]
            assert doc["exercised"]["events"] >= step
        if argv[0] == "validate" and status == 1:
            errors = doc["details"]["errors"]
            assert errors and errors[0]["provider_text"] in err
        if argv[0] == "regress" and status == 1:
            assert doc["details"]["regressions"]
        if argv[0] == "sweep":
            group = doc["details"]["groups"][0]
            assert group["policy"] == "recency" and group["sessions"] > 0
            assert doc["verdict"] == (
                "unsafe" if group["sessions_met"]["any_violation"] else "safe"
            )


def test_shrink_json_names_the_shrunk_trace_and_its_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = str(CORPUS / "orphan_in_flight_batch.json")
    out = tmp_path / "shrunk"
    status, doc, err = run_json(capsys, "shrink", trace, "--out", str(out))
    assert (status, doc["command"], doc["verdict"]) == (1, "shrink", "unsafe")
    assert doc["policy"] == "lowest_salience" and doc["runtime"]["gate"] == "none"
    assert doc["reproduction"] == str(out) and doc["details"]["trace"] == trace
    bundled = json.loads((out / "trace.json").read_text(encoding="utf-8"))
    exercised, shrunk = doc["exercised"], bundled["meta"]["shrunk"]
    assert exercised["shrunk_events"] == len(bundled["events"])
    assert shrunk["to"] == exercised["shrunk_events"] - doc["details"]["harm_events"]
    assert shrunk["to"] <= exercised["events"] and exercised["replays"] > 0
    first = doc["first_violation"]
    assert first["class"] in doc["details"]["kinds"] and first["step"] <= len(bundled["events"])
    assert doc["details"]["summary"] in err  # the human line, on stderr


def test_search_json_of_a_saved_failure_is_the_replayed_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A saved failure that still fails decides search at once; with --json the
    document is that failure, replayed (not an empty verdict)."""
    argv = ["search", "recency", "--max-examples", "30", *QUICK_FIND]
    argv += ["--failures", str(tmp_path / "db")]
    status, found, _ = run_json(capsys, *argv)
    assert status == 1 and "saved_failure" not in found["details"]
    status, doc, err = run_json(capsys, *argv, "--out", str(tmp_path / "bundle"))
    assert status == 1 and doc["verdict"] == "unsafe" and "a saved failure still fails" in err
    saved = Path(doc["details"]["saved_failure"])
    assert saved.is_file() and saved.is_relative_to(tmp_path / "db")
    assert doc["exercised"] == {"examples": 0, "saved_failures_replayed": 1}
    assert doc["first_violation"] is not None
    assert doc["first_violation"]["class"] == found["first_violation"]["class"]
    assert doc["reproduction"] == str(tmp_path / "bundle")
    assert (tmp_path / "bundle" / "trace.json").is_file()
