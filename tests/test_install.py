"""Installing prunecheck into a fresh virtual environment: the packages are
``prunecheck.model`` and ``prunecheck.sim``; no top-level ``model`` or
``sim`` is installed.  Slow (it builds a wheel and installs dependencies)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SKIP_ANYWHERE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".import_linter_cache",
)


def _skip(folder: str, names: list[str]) -> set[str]:
    """What the copy leaves out: caches anywhere, and the generated top-level
    reports/ folder (but not the sim/reports package)."""
    skipped = set(_SKIP_ANYWHERE(folder, names))
    if Path(folder).resolve() == ROOT and "reports" in names:
        skipped.add("reports")
    return skipped


def _run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not k.startswith("PYTEST")
    }
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")
def test_pip_install_into_a_fresh_venv(tmp_path: Path) -> None:
    # Build from a copy, so that the shared working tree gets no build/ or egg-info.
    source = tmp_path / "prunecheck-src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_skip)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True, clear=True)
    python = env_dir / "bin" / "python"
    done = _run(
        [str(python), "-m", "pip", "install", "--quiet", str(source)], tmp_path, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-3000:]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    probe = (
        "import prunecheck.model, prunecheck.sim, prunecheck.model.runtime, "
        "prunecheck.guard; "
        "print(prunecheck.model.__file__)"
    )
    done = _run([str(python), "-c", probe], elsewhere)
    assert done.returncode == 0, done.stderr
    site = Path(done.stdout.strip()).resolve()
    assert env_dir.resolve() in site.parents and source not in site.parents

    for name in ("model", "sim"):
        done = _run([str(python), "-c", f"import {name}"], elsewhere)
        assert done.returncode == 1
        assert f"No module named '{name}'" in done.stderr

    trace = elsewhere / "trace.json"
    trace.write_text(
        (ROOT / "tests" / "corpus" / "seed_streaming_result.json").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    done = _run([str(env_dir / "bin" / "prunecheck"), "replay", str(trace), "--quiet"], elsewhere)
    assert (done.returncode, done.stdout) == (
        1,
        "verdict: 4 violation(s) (3 invalid prune, 1 truncated payload).\n",
    )
