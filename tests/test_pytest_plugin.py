"""The pytest plugin: a failing check reads as a pytest assertion (first line
the violation, then the reproduction); --prunecheck-out writes the bundle and
a rerun replaces it; the marker and an indirect parameter give the runtime."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from timeline_sketch import timeline_sketched

pytest_plugins = ("pytester",)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# One placement and a small suite, without the search (whose shrinking is
# most of a check's time: its own tests are check's), keep each inner check
# short; the module's marker is what gives them (the plugin's marker under
# test).  The first test below runs it with a search too, in make test-all.
TEST_FILE = f"""
import pytest

pytestmark = pytest.mark.prunecheck(
    levels=(0.6,), seeds=(1,), max_examples=0, placements=["after_append"]
)

def test_keep_last_trim(prunecheck):
    prunecheck.assert_policy_safe("{EXAMPLES}/openai_keep_last.py:trim", format="openai")

def test_boundary_trim(prunecheck):
    result = prunecheck.assert_policy_safe("{EXAMPLES}/openai_commit_boundary.py:trim",
                                           format="openai")
    assert [p.config.check_at.value for p in result.placements] == ["after_append"]
"""

RUNTIMES = f"""
import pytest

SMALL = dict(levels=(0.6,), seeds=(1,), max_examples=0)
TRIM = "{EXAMPLES}/openai_commit_boundary.py:trim"

@pytest.mark.prunecheck(gate="commit", placements=["before_invoke"], **SMALL)
def test_marker_gives_the_runtime(prunecheck):
    result = prunecheck.assert_policy_safe(TRIM, format="openai")
    assert str(result.config.gate) == "commit"
    assert [p.config.check_at.value for p in result.placements] == ["before_invoke"]

@pytest.mark.prunecheck(placements=["before_invoke"], **SMALL)
@pytest.mark.parametrize("prunecheck", [{{"placements": ["after_batch"]}}], indirect=True)
def test_indirect_parameter_overrides_the_marker(prunecheck):
    result = prunecheck.check(TRIM, format="openai")
    assert [p.config.check_at.value for p in result.placements] == ["after_batch"]

@pytest.mark.prunecheck(placements=["before_invoke"], **SMALL)
def test_the_calls_keywords_win(prunecheck):
    result = prunecheck.check(TRIM, format="openai", placements=["after_append"])
    assert [p.config.check_at.value for p in result.placements] == ["after_append"]

@pytest.mark.prunecheck(placements=["before_invoke"], **SMALL)
def test_assert_safe_is_a_deprecated_alias(prunecheck):
    with pytest.deprecated_call(match="assert_policy_safe"):
        assert prunecheck.assert_safe(TRIM, format="openai").safe
"""


@pytest.fixture(autouse=True)
def _drawing_loaded_before_the_inner_run() -> None:
    """An in-process pytester run drops the modules first imported inside it,
    and numpy (under matplotlib, which a bundle's timeline imports) cannot be
    imported twice in one process: load them here, before any inner run, so
    the test after this one in the same worker still can.  prunecheck's own
    check is loaded here too: the ``prunecheck`` package (the outer run's
    plugin) keeps what it resolved lazily, so an inner run that imported the
    check anew would raise one copy of an error class where the other is
    caught (a worker that ran no other prunecheck test before this file)."""
    importlib.import_module("prunecheck.sim.api.check")
    for name in ("matplotlib.backends.backend_agg", "matplotlib.figure", "matplotlib.patches"):
        with contextlib.suppress(ImportError):  # without matplotlib, bundles draw no timeline
            importlib.import_module(name)


@pytest.fixture(autouse=True)
def _no_timeline_drawn(_drawing_loaded_before_the_inner_run: None) -> Iterator[None]:
    """The inner runs' bundles are read for their files and messages, not
    their timeline's pixels (tests/timeline_sketch.py)."""
    with timeline_sketched():
        yield


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # Load exactly this plugin, whether or not the entry point is installed.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_trim=TEST_FILE)
    return pytester


@pytest.mark.parametrize("search", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_unsafe_policy_fails_as_an_assertion_naming_the_violation(
    run: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, search: bool
) -> None:
    if search:  # the suite and a short search, whose counterexample is shrunk
        run.makepyfile(test_trim=TEST_FILE.replace("max_examples=0", "max_examples=10"))
    monkeypatch.setenv("COLUMNS", "400")  # the short summary is cut at the terminal's width
    result = run.runpytest_inprocess("-p", "prunecheck.pytest_plugin", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            # the test's own line, as assertion rewriting shows it
            ">*prunecheck.assert_policy_safe(*openai_keep_last.py:trim*",
            "E*prunecheck.UnsafePolicy: prunecheck: policy *openai_keep_last.py:trim@openai "
            "is UNSAFE: * at step * of *: *(gate none, checks after_append)",
            "E*reproduction: * events, narrated below*",
            "*minimal reproduction (* events*):*",
            "*VIOLATION: orphaned result*",
        ]
    )
    # the short summary's line is the readable first line too
    result.stdout.fnmatch_lines(
        [
            "FAILED test_trim.py::test_keep_last_trim - prunecheck.UnsafePolicy: prunecheck: "
            "policy *openai_keep_last.py:trim@openai is UNSAFE: * at step *"
        ]
    )
    text = result.stdout.str()
    assert "sim/api/check.py" not in text and "pytest_plugin.py" not in text


def test_prunecheck_out_writes_the_bundle_and_a_rerun_replaces_it(
    run: pytest.Pytester, tmp_path: Path
) -> None:
    out = tmp_path / "repro"
    bundle = out / "test_keep_last_trim"
    args = ("-p", "prunecheck.pytest_plugin", "--prunecheck-out", str(out), "-k", "keep_last")
    first = run.runpytest_inprocess(*args)
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines([f"E*reproduction bundle: {bundle}"])
    assert (bundle / "trace.json").is_file() and (bundle / ".prunecheck-pytest").is_file()
    (bundle / "stale.txt").write_text("from the run before", encoding="utf-8")

    again = run.runpytest_inprocess(*args)  # pytest has no --force: a rerun just works
    again.assert_outcomes(failed=1)
    assert "already holds files" not in again.stdout.str()
    assert (bundle / "trace.json").is_file() and not (bundle / "stale.txt").exists()


def test_a_rerun_removes_the_bundle_of_a_test_now_safe(
    run: pytest.Pytester, tmp_path: Path
) -> None:
    out = tmp_path / "repro"
    old = out / "test_boundary_trim"
    old.mkdir(parents=True)
    (old / ".prunecheck-pytest").write_text("test_boundary_trim\n", encoding="utf-8")
    (old / "trace.json").write_text("{}", encoding="utf-8")
    result = run.runpytest_inprocess(
        "-p", "prunecheck.pytest_plugin", "--prunecheck-out", str(out), "-k", "boundary"
    )
    result.assert_outcomes(passed=1)
    assert not old.exists()


def test_a_folder_the_plugin_did_not_write_needs_prunecheck_force(
    run: pytest.Pytester, tmp_path: Path
) -> None:
    out = tmp_path / "repro"
    mine = out / "test_keep_last_trim"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("my own notes", encoding="utf-8")
    args = ("-p", "prunecheck.pytest_plugin", "--prunecheck-out", str(out), "-k", "keep_last")

    refused = run.runpytest_inprocess(*args)
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(
        [f"*--prunecheck-out folder {mine} already holds files*--prunecheck-force*"]
    )
    assert "Traceback" not in refused.stdout.str() and not (mine / "trace.json").exists()

    forced = run.runpytest_inprocess(*args, "--prunecheck-force")
    forced.assert_outcomes(failed=1)
    assert (mine / "trace.json").is_file() and (mine / "notes.txt").is_file()


def test_the_marker_and_an_indirect_parameter_give_the_runtime(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_runtimes=RUNTIMES)
    result = pytester.runpytest_inprocess("-p", "prunecheck.pytest_plugin")
    result.assert_outcomes(passed=4)


def test_the_marker_takes_keywords_only(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(
        test_bad="""
import pytest

@pytest.mark.prunecheck("commit")
def test_x(prunecheck):
    pass
"""
    )
    result = pytester.runpytest_inprocess("-p", "prunecheck.pytest_plugin")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the marker takes keyword options only*"])


VACUOUS = """
import pytest

def never(view, need):
    return []

@pytest.mark.prunecheck(levels=(0.6,), seeds=(1,), slow_levels=(), max_examples=0,
                        placements=["after_append"], failures=False)
def test_never_trims(prunecheck):
    assert prunecheck.assert_policy_safe(never, name="never").safe
"""


def test_a_vacuous_safe_passes_with_a_warning_and_fails_under_w_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two inner runs in this process: the machinery is imported out here
    # first, so that the second run meets the same classes as the first
    importlib.import_module("prunecheck.sim.api.check")
    importlib.import_module("prunecheck.sim.drivers.simulator")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_vacuous=VACUOUS)
    passed = pytester.runpytest_inprocess("-p", "prunecheck.pytest_plugin")
    passed.assert_outcomes(passed=1, warnings=1)
    passed.stdout.fnmatch_lines(
        [
            "*test_vacuous.py:*: PrunecheckVacuousWarning: prunecheck: policy never is safe, "
            "but vacuous: *(widen: *",
        ]
    )
    strict = pytester.runpytest_inprocess(
        "-p", "prunecheck.pytest_plugin", "-W", "error::prunecheck.PrunecheckVacuousWarning"
    )
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*PrunecheckVacuousWarning: prunecheck: policy never is safe*"])
