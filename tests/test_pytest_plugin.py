"""The pytest plugin: a failing check prints the minimal reproduction;
--prunecheck-out writes the bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

TEST_FILE = f"""
import pytest

SMALL = dict(levels=(0.6,), seeds=(1,), max_examples=30)

def test_keep_last_trim(prunecheck):
    prunecheck.assert_safe("{EXAMPLES}/openai_keep_last.py:trim", format="openai", **SMALL)

def test_boundary_trim(prunecheck):
    result = prunecheck.assert_safe("{EXAMPLES}/openai_commit_boundary.py:trim",
                                    format="openai", **SMALL)
    assert result.safe
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Load exactly this plugin, whether or not the entry point is installed.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_trim=TEST_FILE)
    return pytester


def test_unsafe_policy_fails_with_the_minimal_reproduction(run: pytest.Pytester) -> None:
    result = run.runpytest_inprocess("-p", "prunecheck.pytest_plugin")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*prunecheck: policy *openai_keep_last.py:trim@openai is UNSAFE*",
            "*minimal reproduction (* events):*",
            "*VIOLATION: orphaned result*",
        ]
    )
    assert "sim/check.py" not in result.stdout.str()  # no traceback into prunecheck


def test_prunecheck_out_writes_the_bundle(run: pytest.Pytester, tmp_path: Path) -> None:
    out = tmp_path / "repro"
    result = run.runpytest_inprocess(
        "-p", "prunecheck.pytest_plugin", "--prunecheck-out", str(out), "-k", "keep_last"
    )
    result.assert_outcomes(failed=1)
    bundle = out / "test_keep_last_trim"
    assert (bundle / "trace.json").is_file()
    result.stdout.fnmatch_lines([f"*reproduction bundle: {bundle}*"])
