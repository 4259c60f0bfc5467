"""The pytest plugin's bad input is one paragraph (issue 36): a bad marker
argument, ``--prunecheck-out`` naming a file or ``/proc``, a missing or
raising loop or policy spec — never prunecheck's internal frames."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRIM = f"{EXAMPLES}/openai_commit_boundary.py:trim"

BAD = f"""
import pytest

TRIM = "{TRIM}"

@pytest.mark.prunecheck(gate="sometimes")
def test_bad_gate(prunecheck):
    prunecheck.assert_policy_safe(TRIM, format="openai")

@pytest.mark.prunecheck(levels=5)
def test_bad_levels(prunecheck):
    prunecheck.assert_policy_safe(TRIM, format="openai")

@pytest.mark.prunecheck(nonsense=3)
def test_unknown_option(prunecheck):
    prunecheck.assert_policy_safe(TRIM, format="openai")

@pytest.mark.parametrize("prunecheck", [{{"placements": "before_invoke"}}], indirect=True)
def test_bad_indirect(prunecheck):
    prunecheck.check(TRIM, format="openai")

def test_unknown_call_option(prunecheck):
    prunecheck.check(TRIM, format="openai", frobnicate=1)

def test_missing_policy(prunecheck):
    prunecheck.assert_policy_safe("nope.py:trim", format="openai")

def test_missing_loop(prunecheck):
    prunecheck.assert_loop_safe("loop:nope.py:agent")

def test_raising_loop(prunecheck):
    prunecheck.assert_loop_safe("loop:raising.py:agent")
"""
#: (test, error at setup?, the phrase its one paragraph holds)
EXPECTED = [
    ("test_bad_gate", True, "gate='sometimes': is not a gate. Hint: one of none"),
    ("test_bad_levels", True, "levels=5: is not a list."),
    ("test_unknown_option", True, "option nonsense=3: is not an option of check_policy"),
    ("test_bad_indirect", True, "placements='before_invoke': is not a list of placements"),
    ("test_unknown_call_option", False, "option frobnicate=1: is not an option"),
    ("test_missing_policy", False, "file nope.py does not exist"),
    ("test_missing_loop", False, "loop spec 'loop:nope.py:agent': file nope.py does not exist"),
    ("test_raising_loop", False, "importing raising.py raised RuntimeError: boom at import"),
]
INTERNAL = ("sim/", "pytest_plugin.py", "Traceback", "During handling", "prunecheck/model/")


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    importlib.import_module("prunecheck.sim.api.check")  # see test_pytest_plugin.py
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("COLUMNS", "400")
    pytester.makepyfile(test_bad=BAD)
    pytester.makepyfile(raising="raise RuntimeError('boom at import')\n")
    return pytester


def test_each_bad_input_is_one_paragraph_without_internal_frames(run: pytest.Pytester) -> None:
    result = run.runpytest_inprocess("-p", "prunecheck.pytest_plugin", "-p", "no:cacheprovider")
    setup = sum(1 for _, at_setup, _ in EXPECTED if at_setup)
    result.assert_outcomes(errors=setup, failed=len(EXPECTED) - setup)
    text = result.stdout.str()
    for name, at_setup, phrase in EXPECTED:
        header = f"ERROR at setup of {name}" if at_setup else f" {name} "
        section = text.split(header, 1)[1].split("\n____", 1)[0].split("\n====", 1)[0]
        lines = [line for line in section.splitlines()[1:] if line.strip()]
        assert len(lines) == 1 and phrase in lines[0], (name, section)
        assert " Hint: " in lines[0], lines[0]
    for word in INTERNAL:
        assert word not in text, word


@pytest.mark.parametrize("where", ["file", "under-file", "/proc"])
def test_a_prunecheck_out_no_bundle_can_go_in_is_a_usage_error(
    run: pytest.Pytester, where: str
) -> None:
    a_file = run.path / "afile"
    a_file.write_text("mine\n", encoding="utf-8")
    out = {"file": a_file, "under-file": a_file / "repro", "/proc": Path("/proc")}[where]
    result = run.runpytest_inprocess(
        "-p", "prunecheck.pytest_plugin", "--prunecheck-out", str(out), "-k", "missing_policy"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    said = [line for line in err.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith(f"ERROR: --prunecheck-out {out}: "), err
    assert "Hint:" in said[0] and "Traceback" not in err + result.stdout.str()
    assert a_file.read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in run.path.iterdir() if p.name.startswith(".prunecheck")) == []
