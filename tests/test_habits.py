"""The project's habits are configured where the tools read them: mypy (strict,
the whole package, tests and benchmarks, from the root) and coverage (measured
by CI's ``make test COVERAGE=1`` and ``make test-all`` with a floor, omitting
only modules that exist); ``make test`` parallel, naming its slowest tests."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def _recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert found, target
    return found.group(1)


def test_plain_mypy_checks_the_package_the_tests_and_the_benchmarks() -> None:
    mypy = _pyproject()["tool"]["mypy"]
    assert mypy["strict"] is True
    ours = {"src/prunecheck", "tests", "benchmarks", "docs/gen_cli.py"}
    corpus = {f"known_bugs/{name}.py" for name in ("corpus", "venvs", "run", "report")}
    assert set(mypy["files"]) == ours | corpus  # the known-bug corpus's machinery too
    assert re.search(r"^\t\$\(VENV\)/bin/mypy$", _recipe("lint"), re.MULTILINE)


def test_no_symlink_in_the_source_tree() -> None:
    """Every import path is a file path under src/ (issue 30): a symlink there
    hides imports from mypy, IDEs and import-graph tools. The card's model/
    and sim/ live at src/prunecheck/model and src/prunecheck/sim."""
    links = [
        str(p.relative_to(ROOT))
        for folder in ("src", "tests", "benchmarks", "examples", "docs", "reports")
        for p in (ROOT / folder).rglob("*")
        if p.is_symlink()
    ]
    assert links == []
    for package in ("model", "sim", "guard"):
        assert (ROOT / "src" / "prunecheck" / package / "__init__.py").is_file(), package
    assert not (ROOT / "model").exists() and not (ROOT / "sim").exists()


def test_ci_and_test_all_measure_coverage_against_a_floor() -> None:
    assert re.search(r"\$\(PYTEST\) .*--cov\b", _recipe("test-all"))
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^PYTEST +:= .*\$\(PY\) -m pytest$", makefile, re.MULTILINE)
    # make test is measured only when asked (COVERAGE=1), and CI asks.
    assert "$(TEST_COV)" in _recipe("test") and "--cov" not in _recipe("test")
    assert re.search(r"^TEST_COV := \$\(if \$\(COVERAGE\),--cov\b", makefile, re.MULTILINE)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in ci and re.search(r"^make test COVERAGE=1$", ci, re.MULTILINE)
    coverage = _pyproject()["tool"]["coverage"]
    assert coverage["run"]["source"] == ["prunecheck"]
    assert coverage["report"]["fail_under"] >= 90


def test_ci_builds_the_docs_site_strictly_after_lint() -> None:
    recipe = _recipe("docs")
    assert re.search(r"^\t\$\(PY\) docs/gen_cli.py$", recipe, re.MULTILINE)  # generated pages first
    assert re.search(r"mkdocs build --strict\b", recipe)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make lint\nmake docs$", ci, re.MULTILINE)


def test_make_test_runs_the_fast_suite_in_parallel_and_names_the_slowest() -> None:
    recipe = _recipe("test")
    assert '-m "not slow and not integration"' in recipe
    assert "-n $(JOBS)" in recipe and "--durations=20" in recipe
    markers = "\n".join(_pyproject()["tool"]["pytest"]["ini_options"]["markers"])
    assert "slow:" in markers and "integration:" in markers


def test_every_omitted_file_exists() -> None:
    """An omit pattern that matches nothing (a module moved) would silently
    stop leaving anything out."""
    files = [
        p.resolve().as_posix()
        for folder in (ROOT / "src" / "prunecheck",)
        for p in folder.rglob("*.py")
    ]
    for pattern in _pyproject()["tool"]["coverage"]["run"]["omit"]:
        assert fnmatch.filter(files, pattern), pattern
