"""Shared ``prunecheck check`` runs for the output-format tests.

A whole ``check`` (three placements) is the costliest thing the fast suite
does, and ``--json`` and ``--junit`` describe the same verdict: one run
writes both, and ``tests/test_json_output.py`` and
``tests/test_junit_output.py`` read it (session-scoped fixtures in
``conftest.py``, run once for the whole session: the first xdist worker that
needs one runs it, the others read what it kept).
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timeline_sketch import timeline_sketched

__all__ = ["QUICK_FIND", "ROOT", "SHARED_SUITE", "SMALL_SUITE", "TRIM", "CheckRun", "run_check"]

ROOT = Path(__file__).resolve().parent.parent
#: Safe before model calls, unsafe after every append (a complete-history trimmer).
TRIM = f"{ROOT}/tests/policies/complete_history_trim.py:trim_openai@openai"
SMALL_SUITE = ("--levels", "0.6", "--seeds", "1", "--max-examples", "20")
#: The shared runs' suite: SMALL_SUITE with a search of 2 runs a placement.
#: What the JSON and JUnit documents say about the search (a test case and a
#: count per placement) does not depend on its length, and TRIM's suite
#: already breaks it after every append and after each batch, so its bundles
#: are the suite's shrunk reproductions; with 20 runs the search found the
#: same ones and shrank them again, about 4 s of CPU more (the search's own
#: tests: tests/test_search.py, tests/test_check.py).
SHARED_SUITE = ("--levels", "0.6", "--seeds", "1", "--max-examples", "2")
#: Search options for a search whose shape is not the point: every message and
#: chunk 20,000 tokens, so the first runs break the budget and the search finds a
#: counterexample at once, already about as short as it gets (no second spent
#: shrinking it, where the default shape costs about one).
QUICK_FIND = ("--sizes", "20000")


@dataclass(frozen=True, slots=True)
class CheckRun:
    """One ``check … --json --junit FILE`` run: its status, document, stderr, files."""

    status: int
    doc: dict[str, Any]
    err: str
    junit: Path
    out: Path | None


def run_check(folder: Path, policy: str, *, bundle: bool) -> CheckRun:
    """Run ``check policy`` on :data:`SHARED_SUITE` with ``--json`` and ``--junit``
    (and ``--out`` when ``bundle``) in this process, writing under ``folder``."""
    from prunecheck.sim.cli.app import main  # not at conftest's import: tests watch imports

    junit, out = folder / "check.xml", (folder / "repro" if bundle else None)
    argv = ["check", policy, *SHARED_SUITE, "--junit", str(junit), "--json"]
    if out is not None:
        argv += ["--out", str(out)]
    stdout, stderr = io.StringIO(), io.StringIO()
    # the bundles' trace, narrative and request are read, their timelines' pixels are not
    with (
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
        timeline_sketched(),
    ):
        status = main(argv)
    return CheckRun(status, json.loads(stdout.getvalue()), stderr.getvalue(), junit, out)
