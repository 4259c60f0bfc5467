"""What ``prunecheck check`` prints reads the same however its verdict was
reached (issue 36): a rerun the failure database answers prints the table of
the first run, marking the placements it answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.api.verdict import FROM_DATABASE
from prunecheck.sim.cli.app import main

POLICIES = Path(__file__).resolve().parent / "policies"


def _rows(text: str) -> tuple[list[str], list[str]]:
    """The scenario rows and the placement rows of a check's table."""
    lines = text.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("checks at      scenario")))
    scenarios = lines[first + 1 : lines.index("", first)]
    second = lines.index(next(line for line in lines if "search runs" in line))
    placements = lines[second + 1 : second + 4]
    return scenarios, placements


def _verdict(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("verdict: "))


def test_a_rerun_the_failure_database_answers_prints_the_first_runs_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run (with --json: its text on stderr) and the rerun the
    failure database answers print the same rows and classes; and the
    first run's --json details are the record its verdict line reads.

    They disagreed: details.incidents held classes the line does not name
    (costs and outcomes: hard_ceiling_overrun, session_abort), with nothing
    to tell them apart."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRUNECHECK_JOBS", "1")  # the placements in this process: cheaper
    policy = tmp_path / "trim_policy.py"
    policy.write_text((POLICIES / "keeps_batch_call.py").read_text(encoding="utf-8"))
    argv = [
        "check",
        f"{policy}:select",
        "--levels",
        "0.6",
        "--seeds",
        "1",
        "--slow-levels",
        "none",
        "--max-examples",
        "0",  # the suite finds it: the search would only cost time here
        "--failures",
        str(tmp_path / "failures"),
    ]
    assert main([*argv, "--json"]) == 1
    document, first = capsys.readouterr()
    assert main(argv) == 1
    again = capsys.readouterr().out
    rows, placements = _rows(first)
    rows_again, placements_again = _rows(again)
    assert len(rows) == 3 and rows_again == rows  # one scenario a placement, the same
    assert all(FROM_DATABASE not in p for p in placements)
    assert all(p.endswith(FROM_DATABASE) for p in placements_again if "UNSAFE" in p)
    assert any("UNSAFE" in p for p in placements_again)
    # the placement rows agree but for the search runs and the mark
    for was, now in zip(placements, placements_again, strict=True):
        assert was.split()[:3] == now.split()[:3]  # placement, scenarios, violations
        assert (
            now.split()[4:] == (was + (f" {FROM_DATABASE}" if "UNSAFE" in was else "")).split()[4:]
        )
    assert _verdict(again) == _verdict(first)  # the same classes
    classes = first.split("incident classes met: ")[1].splitlines()[0]
    classes_again = again.split("incident classes met: ")[1].splitlines()[0]
    assert [c.split(" ", 1)[1] for c in classes.split(", ")] == [
        c.split(" ", 1)[1] for c in classes_again.split(", ")
    ]
    # --json: one record, two renderings
    details = json.loads(document)["details"]
    line = _verdict(first)
    assert details["verdict_line"] == line
    named = line.removeprefix("verdict: UNSAFE — ").split(";")[0].split(", ")
    assert named == [k.replace("_", " ") for k in details["violations"]]
    assert details["costs"], "the case needs classes the line does not name"
    assert not set(details["costs"]) & set(details["violations"])
    assert details["incidents"] == dict(
        sorted({**details["violations"], **details["costs"]}.items())
    )
    assert set(details["unsafe_at"]) | set(details["safe_at"]) == {
        "after_append",
        "after_batch",
        "before_invoke",
    }
