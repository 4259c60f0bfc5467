"""``--junit FILE`` on ``check`` and ``regress`` (issue 23): JUnit XML that CI
viewers read, a test case per placement × scenario, failures carrying the
first violation and the reproduction's path."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest
from check_runs import CheckRun

from prunecheck.sim.cli.app import main


def failing(root: ElementTree.Element) -> list[ElementTree.Element]:
    return [case for case in root.iter("testcase") if case.find("failure") is not None]


def test_check_junit_fails_one_case_per_unsafe_placement(unsafe_check: CheckRun) -> None:
    """The run (tests/check_runs.py) wrote --junit, --json and --out together."""
    doc = unsafe_check.doc
    assert unsafe_check.status == 1
    root = ElementTree.parse(unsafe_check.junit).getroot()
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {f"prunecheck.check.{p['check_at']}" for p in doc["placements"]}
    for suite in suites.values():  # the counts CI viewers show agree with the cases
        cases = suite.findall("testcase")
        assert suite.get("tests") == str(len(cases))
        assert suite.get("failures") == str(sum(c.find("failure") is not None for c in cases))
    unsafe = {p["check_at"]: p for p in doc["placements"] if p["verdict"] == "unsafe"}
    assert unsafe and "before_invoke" not in unsafe
    per_placement = Counter(c.get("classname") for c in failing(root))
    assert per_placement == Counter({f"prunecheck.check.{at}": 1 for at in unsafe})
    assert root.get("failures") == str(len(unsafe))
    for case in failing(root):
        placement = unsafe[str(case.get("classname")).rsplit(".", 1)[1]]
        failure = case.find("failure")
        assert failure is not None and failure.text is not None
        assert f"reproduction: {placement['reproduction']}" in failure.text
        assert Path(placement["reproduction"], "trace.json").is_file()
        first = placement["first_violation"]
        message = str(failure.get("message"))
        assert f"{first['class'].replace('_', ' ')} at step {first['step']}" in message
    # A case per placement × scenario, and the search of each placement.
    names = [c.get("name") for c in suites["prunecheck.check.before_invoke"].findall("testcase")]
    assert names[:-1] == [s["name"] for s in doc["placements"][2]["scenarios"]]
    assert str(names[-1]).startswith("adversarial search")


def test_check_junit_of_a_safe_policy_has_no_failure(safe_check: CheckRun) -> None:
    assert safe_check.status == 0
    root = ElementTree.parse(safe_check.junit).getroot()
    # per placement: the scenario, the slow-call scenario at its seed, the search
    assert failing(root) == [] and int(str(root.get("tests"))) == 3 * 3
    # each placement's suite says it was not vacuous (unit_safe is exercised)
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props == {"vacuous": "false"}, suite.get("name")


def test_check_junit_without_json_keeps_the_text_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "safe.xml"
    argv = ["check", "unit_safe", "--junit", str(report), "--check-at", "before_invoke"]
    assert main([*argv, "--levels", "0.6", "--seeds", "1", "--max-examples", "10"]) == 0
    assert "verdict:" in capsys.readouterr().out  # without --json, the text stays on stdout
    root = ElementTree.parse(report).getroot()
    assert failing(root) == [] and int(str(root.get("tests"))) == 3  # +1: the slow-call run


def test_regress_junit_fails_the_classes_that_regressed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.json"
    suite = ["--levels", "0.6", "--seeds", "1-2", "--horizon", "200"]
    assert (
        main(["baseline", "--out", str(base), "lowest_salience", "--gate", "commit", *suite]) == 0
    )
    same, worse = tmp_path / "same.xml", tmp_path / "worse.xml"
    assert main(["regress", "--baseline", str(base), "--junit", str(same)]) == 0
    assert failing(ElementTree.parse(same).getroot()) == []
    # measured times (issue 36: every one was 0.000): the suite re-run and each corpus replay
    cases = {
        c.get("name"): float(str(c.get("time"))) for c in ElementTree.parse(same).iter("testcase")
    }
    rerun = next(name for name in cases if str(name).startswith("suite re-run, 2 runs compared"))
    assert cases[rerun] > 0
    corpus = [c for c in ElementTree.parse(same).iter("testcase")
              if c.get("classname") == "prunecheck.regress.corpus"]  # fmt: skip
    assert corpus and all(float(str(c.get("time"))) > 0 for c in corpus)
    assert main(["regress", "--baseline", str(base), "--gate", "none", "--junit", str(worse)]) == 1
    text = capsys.readouterr().out
    root = ElementTree.parse(worse).getroot()
    failed = failing(root)
    assert failed  # each regression the table names is a failing case, and only those
    lines = text.splitlines()
    for case in failed:
        name, failure = str(case.get("name")), case.find("failure")
        assert failure is not None
        if case.get("classname") == "prunecheck.regress.corpus":
            assert f"corpus {name}: REGRESSION" in text
            assert f"reproduction: {name}" in str(failure.text)
        else:
            row = next(x for x in lines if x.startswith(name.replace("_", " ") + " "))
            assert row.endswith("REGRESSION")
            assert f"baseline: {base}" in str(failure.text)
    regressed_rows = [x for x in lines if x.endswith("  REGRESSION")]
    classes = [c for c in failed if c.get("classname") == "prunecheck.regress.classes"]
    assert len(classes) == len(regressed_rows)


def test_check_junit_times_are_measured_and_add_up(safe_check: CheckRun) -> None:
    """Each case's time is what it took (issue 36: they were all 0.000); a
    suite's time is the sum of its cases', the file's the sum of its suites'."""
    root = ElementTree.parse(safe_check.junit).getroot()
    suites = list(root.iter("testsuite"))
    for suite in suites:
        times = [float(str(c.get("time"))) for c in suite.iter("testcase")]
        assert times and all(t > 0 for t in times), times
        assert abs(float(str(suite.get("time"))) - sum(times)) <= 1e-6 * (len(times) + 1)
    assert [s.get("name") for s in suites] == [
        f"prunecheck.check.{p['check_at']}" for p in safe_check.doc["placements"]
    ]
    total = sum(float(str(s.get("time"))) for s in suites)
    assert abs(float(str(root.get("time"))) - total) <= 1e-6 * (len(suites) + 1)
