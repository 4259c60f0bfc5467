"""Vacuity, printed (issue 20): ``check``, ``search`` and ``explore`` say
"safe, but vacuous" of a policy that never proposes anything, name what was
never exercised and the flag that widens it, and keep exit status 0 unless
``--fail-vacuous``; a genuinely exercised safe policy (the commit-boundary
reference policy ``unit_safe``) is not called vacuous."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

from prunecheck.sim.api.documents import SCHEMA_VERSION
from prunecheck.sim.api.vacuity import HINTS, vacuous_clause
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.limits import EXIT_VACUOUS
from prunecheck.sim.drivers.coverage import Coverage, Gap

SMALL_CHECK = ["--levels", "0.6", "--seeds", "1", "--max-examples", "20", "--no-failures"]
#: A policy that never proposes is vacuous however long the search: a short one.
NOOP_CHECK = ["--levels", "0.6", "--seeds", "1", "--max-examples", "5", "--no-failures"]
SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / f"verdict-{SCHEMA_VERSION}.json"


@pytest.fixture
def noop(tmp_path: Path) -> str:
    """A policy that never proposes anything."""
    path = tmp_path / "noop.py"
    path.write_text("def select(view, need):\n    return []\n", encoding="utf-8")
    return f"{path}:select"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().out


def _document(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    """Run with --json: the status, the document (valid against the schema)
    and the text, which --json sends to stderr."""
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    doc: dict[str, Any] = json.loads(captured.out)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(doc)
    assert doc["exit_status"] == status
    return status, doc, captured.err


def test_every_gap_has_a_hint_for_every_command() -> None:
    for command, hints in HINTS.items():
        assert set(hints) == set(Gap), command
    clause = vacuous_clause(Coverage(checks=3), "explore")
    assert clause is not None and clause.startswith("safe, but vacuous: ")
    assert "--max-users 2" in clause and "--depth" in clause
    assert vacuous_clause(None, "check") is None


def test_check_calls_a_policy_that_never_proposes_vacuous(
    noop: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["check", noop, "--check-at", "after_append", *NOOP_CHECK]
    # one check for the text (on stderr beside --json), the document and the JUnit report
    junit = tmp_path / "check.xml"
    status, doc, out = _document(capsys, *args, "--junit", str(junit))
    assert status == 0
    line = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert line.startswith("verdict: safe, but vacuous: the policy proposed nothing in ")
    assert "--budget" in line  # the flag that widens it
    assert "coverage: " in out and "0 non-empty proposal(s)" in out
    status, _ = _run(capsys, *args, "--fail-vacuous", "--quiet")
    assert status == EXIT_VACUOUS
    assert doc["verdict"] == "vacuous"  # schema 3: not "safe"
    assert doc["coverage"]["vacuous"] is True and doc["coverage"]["gaps"] == ["no_proposal"]
    assert doc["placements"][0]["coverage"]["proposals"] == 0
    # the JUnit report says so too: the passing suite carries its vacuity
    (suite,) = ElementTree.parse(junit).getroot()
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert suite.get("failures") == "0"
    assert props == {"vacuous": "true", "vacuous_gaps": "no_proposal"}


def test_search_calls_a_policy_that_never_proposes_vacuous(
    noop: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["search", noop, "--max-examples", "5", "--no-failures"]
    status, out = _run(capsys, *args)
    assert status == 0
    assert "verdict: safe, but vacuous: the policy proposed nothing in " in out
    assert _run(capsys, *args, "--fail-vacuous")[0] == EXIT_VACUOUS


def test_explore_calls_a_policy_that_never_proposes_vacuous(
    noop: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["explore", noop, "--depth", "4", "--max-users", "2"]
    status, out = _run(capsys, *args)
    assert status == 0
    assert "verdict: safe, but vacuous: " in out and "proposed nothing" in out
    assert _run(capsys, *args, "--fail-vacuous")[0] == EXIT_VACUOUS
    status, doc, _ = _document(capsys, *args, "--fail-vacuous")
    assert status == EXIT_VACUOUS and doc["verdict"] == "vacuous"
    assert doc["command"] == "explore" and doc["coverage"]["vacuous"] is True
    assert doc["coverage"]["runs"] == doc["exercised"]["transitions"]


def test_the_reference_policy_is_not_vacuous(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = _run(capsys, "check", "unit_safe", "--check-at", "after_append", *SMALL_CHECK)
    assert status == 0, out
    line = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert line.startswith("verdict: safe — ") and "vacuous" not in out
    status, out = _run(capsys, "explore", "unit_safe", "--depth", "4", "--max-users", "2")
    assert status == 0 and "vacuous" not in out, out
    assert "user message(s) arrived mid-batch" in out
    status, out = _run(
        capsys, "search", "unit_safe", "--max-examples", "40", "--no-failures", "--fail-vacuous"
    )
    assert status == 0 and "vacuous" not in out, out


# --------------------------------------------------------------- from Python
#: The suite alone, one scenario at one placement, in-process: cheap.
TINY: dict[str, Any] = {
    "levels": (0.6,),
    "seeds": (1,),
    "slow_levels": (),
    "max_examples": 0,
    "placements": ["after_append"],
    "failures": False,
}


def _never(view: object, need: int) -> list[str]:
    """A policy that never proposes anything (in-process: cheap)."""
    return []


def test_assert_policy_safe_warns_of_a_vacuous_safe_and_fails_if_told() -> None:
    import warnings

    from prunecheck import PrunecheckVacuousWarning, assert_policy_safe

    with pytest.warns(PrunecheckVacuousWarning, match="is safe, but vacuous: the policy") as got:
        result = assert_policy_safe(_never, name="never", **TINY)
    assert result.safe and result.vacuous
    assert got[0].filename == __file__  # it names the caller's line
    with warnings.catch_warnings():  # as -W error::prunecheck.PrunecheckVacuousWarning does
        warnings.simplefilter("error", PrunecheckVacuousWarning)
        with pytest.raises(PrunecheckVacuousWarning, match="widen: "):
            assert_policy_safe(_never, name="never", **TINY)
    with warnings.catch_warnings():  # an exercised safe says nothing
        warnings.simplefilter("error", PrunecheckVacuousWarning)
        assert not assert_policy_safe("unit_safe", **TINY).vacuous


def test_an_agent_loop_that_never_trimmed_is_vacuous_in_its_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Schema 3: the top-level verdict of a loop whose code never changed its
    history is ``vacuous``, not ``safe`` (exit 0; 4 under --fail-vacuous);
    an exercised safe loop stays ``safe``."""
    fake = f"loop:{Path(__file__).resolve().parent / 'loops_fake.py'}:careful"
    short = ["check", fake, "--scenario", "parallel", "--max-examples", "4", "--seed", "1"]
    status, doc, _ = _document(capsys, *short, "--max-events", "1")
    assert (status, doc["verdict"], doc["details"]["vacuous"]) == (0, "vacuous", True)
    status, doc, _ = _document(capsys, *short, "--max-events", "1", "--fail-vacuous")
    assert (status, doc["verdict"]) == (EXIT_VACUOUS, "vacuous")
    status, doc, _ = _document(capsys, *short)
    assert (status, doc["verdict"], doc["details"]["vacuous"]) == (0, "safe", False)
