"""The failure database (sim/evidence/failures.py): a found counterexample is
saved, replayed first on the next check and search, and bad saved state is
reported and discarded."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from prunecheck import Verdict, check_policy
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import SystemPrompt, UserMessage
from prunecheck.model.trace import Trace
from prunecheck.sim.cli.app import main
from prunecheck.sim.evidence.failures import FailureDatabase, database

POLICIES = Path(__file__).resolve().parent / "policies"
#: The suite alone finds the buggy version: what is saved and replayed is the
#: point, not how thoroughly the search looks (tests/test_check.py has it).
SMALL: dict[str, Any] = {
    "levels": (0.6,),
    "seeds": (1,),
    "max_examples": 0,
    "placements": ("after_append",),
}


def _policy(tmp_path: Path, version: str) -> str:
    """One policy file, rewritten to its correct or buggy version."""
    path = tmp_path / "trim_policy.py"
    name = "keeps_batch_call.py" if version == "buggy" else "regress_correct.py"
    source = POLICIES / name
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    return f"{path}:select"


def test_a_fixed_bug_that_comes_back_is_caught_first_by_the_saved_failure(tmp_path: Path) -> None:
    db = FailureDatabase(tmp_path / "failures")
    spec = _policy(tmp_path, "buggy")
    first = check_policy(spec, failures=db, **SMALL)
    assert first.verdict is Verdict.UNSAFE and first.scenarios  # found the usual way
    assert len(db.entries(spec, first.config)) == 1
    _policy(tmp_path, "correct")  # the fix
    fixed = check_policy(spec, failures=db, **SMALL)
    assert fixed.verdict is Verdict.SAFE and fixed.scenarios
    assert len(db.entries(spec, first.config)) == 1  # kept: the bug may come back
    _policy(tmp_path, "buggy")  # the revert
    # a search is asked for: the saved failure decides instead; the suite runs
    # for its table (issue 36: the same rows as the first time)
    back = check_policy(spec, failures=db, **{**SMALL, "max_examples": 30})
    assert back.verdict is Verdict.UNSAFE
    assert back.scenarios == first.scenarios and back.search_examples == 0  # no search
    assert back.reproduction is not None
    found = back.reproduction.meta["found_by"]
    assert found["driver"] == "failure database"
    assert found["policy_digest"].startswith("sha256:")
    assert db.problems == []


def test_bad_saved_state_is_reported_and_skipped_never_fatal(tmp_path: Path) -> None:
    db = FailureDatabase(tmp_path / "failures")
    spec = _policy(tmp_path, "correct")
    config = RuntimeConfig()
    folder = db.folder(spec, config)
    folder.mkdir(parents=True)
    (folder / "garbage.json").write_text("{not json", encoding="utf-8")
    (folder / "other.json").write_text('{"format": "something else"}', encoding="utf-8")
    impossible = {
        "format": "prunecheck-failure",
        "version": 1,
        "trace": {
            "format": "prunecheck-trace",
            "version": 1,
            "policy": spec,
            "config": {},
            "events": [{"kind": "result", "call": "c9", "tokens": 5}],
        },
    }
    (folder / "impossible.json").write_text(json.dumps(impossible), encoding="utf-8")
    (folder / ".half-written.json.123.tmp").write_text("{", encoding="utf-8")
    result = check_policy(spec, failures=db, **SMALL)
    assert result.verdict is Verdict.SAFE and result.scenarios
    assert len(db.problems) == 3
    # what is not an entry of ours is skipped and left; our stale entry is discarded
    skipped = sorted(p for p in db.problems if "skipped and left in place" in p)
    assert len(skipped) == 2 and "garbage.json" in skipped[0] and "other.json" in skipped[1]
    assert sum("it was discarded" in p and "impossible.json" in p for p in db.problems) == 1
    assert sorted(p.name for p in folder.iterdir()) == [
        ".half-written.json.123.tmp",
        "garbage.json",
        "other.json",
    ]


def _save_many(root: str, worker: int) -> None:
    db = FailureDatabase(Path(root))
    for i in range(20):
        trace = Trace("recency", RuntimeConfig(), (SystemPrompt(10 + worker), UserMessage(i + 1)))
        db.save(trace)
    assert db.problems == []


def test_concurrent_processes_never_leave_a_half_written_entry(tmp_path: Path) -> None:
    root = tmp_path / "failures"
    context = multiprocessing.get_context("fork")  # spawn imported prunecheck in each
    workers = [context.Process(target=_save_many, args=(str(root), w)) for w in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    db = FailureDatabase(root)
    entries = db.entries("recency", RuntimeConfig())
    assert db.problems == [] and 0 < len(entries) <= 16  # capped per policy and runtime
    assert not [p for p in root.rglob("*") if p.name.endswith(".tmp")]


def test_the_database_is_configurable_and_off_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert database(False) is None
    monkeypatch.setenv("PRUNECHECK_FAILURES", "off")
    assert database(None) is None and database(True) is None
    monkeypatch.setenv("PRUNECHECK_FAILURES", str(tmp_path))
    found = database(None)
    assert found is not None and found.root == tmp_path
    monkeypatch.delenv("PRUNECHECK_FAILURES")
    for default in (database(None), database(True)):  # one default, every entry point
        assert default is not None and default.root == Path(".prunecheck/failures")
    assert database(tmp_path / "x") is not None


def test_check_and_search_replay_saved_failures_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _policy(tmp_path, "buggy")
    where = str(tmp_path / "failures")
    small = [
        "--levels",
        "0.6",
        "--seeds",
        "1",
        "--max-examples",
        "0",
        "--check-at",
        "after_append",
        "--failures",
        where,
    ]
    assert main(["check", spec, *small]) == 1
    assert "replayed first" not in capsys.readouterr().out
    assert main(["check", spec, *small]) == 1
    out = capsys.readouterr().out
    assert "replayed first: the saved failure" in out and "still fails" in out
    assert main(["search", "--policy", spec, "--max-examples", "30", "--failures", where]) == 1
    assert "a saved failure still fails" in capsys.readouterr().out
    assert main(["check", spec, *small, "--no-failures"]) == 1
    assert "replayed first" not in capsys.readouterr().out
