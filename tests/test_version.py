"""One version number: ``pyproject.toml`` holds it; the installed metadata,
``prunecheck.__version__`` and ``prunecheck --version`` all say the same."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import prunecheck

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_version() -> str:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert "version" not in project.get("dynamic", [])
    value = project["version"]
    assert isinstance(value, str)
    return value


def test_the_package_the_metadata_and_the_command_line_agree() -> None:
    written = _pyproject_version()
    assert version("prunecheck") == written, "reinstall: make clean && make test"
    assert prunecheck.__version__ == written
    shown = subprocess.run(
        [sys.executable, "-m", "prunecheck", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert shown.stdout.strip() == f"prunecheck {written}"


def test_no_source_file_writes_the_number_again() -> None:
    written = re.escape(_pyproject_version())
    quoted = re.compile(rf"[\"']{written}[\"']")
    sources = [
        *(ROOT / "src" / "prunecheck").glob("*.py"),
        *(ROOT / "src" / "prunecheck" / "model").rglob("*.py"),
        *(ROOT / "src" / "prunecheck" / "sim").rglob("*.py"),
        *(ROOT / "src" / "prunecheck" / "guard").glob("*.py"),
    ]
    assert sources
    assert [p.name for p in sources if quoted.search(p.read_text(encoding="utf-8"))] == []
