"""Hypothesis profiles and the rules that keep the suite parallel-safe.

``make test`` runs the fast suite on every core (pytest-xdist, ``-n``): each
worker is its own process, and tests run in any order, on any worker.  So a
test, and any test you add:

* writes only under ``tmp_path`` / ``tmp_path_factory`` (never into the
  repository, ``/tmp/<fixed name>``, ``reports/`` or ``examples/``);
* opens no fixed port (Dask's ``LocalCluster`` and servers take port 0 or
  their own random one);
* assumes no current directory: paths come from ``Path(__file__)``;
  ``monkeypatch.chdir(tmp_path)`` when a command must run somewhere;
* shares only immutable setup, through session- or module-scoped fixtures
  (each worker builds its own copy; the costliest are built once for the
  whole session, by ``once_per_session`` below);
* never asserts on wall-clock time (the machine is shared, and ``make
  test`` must pass on one loaded to 5): a hang, a kill or a time limit is
  asserted by its effect (the exit status, the message, how many calls
  hung, what was kept), and a bound on how long it took, if any, is ten
  times what it needs; a moment "a while into the work" is counted in work
  done (records written, scenarios run), not in seconds slept;
* runs pytester in process only after importing the C extensions the inner
  run may load (numpy, through matplotlib): the inner run drops the modules
  it imported, and numpy cannot load twice in one worker.

Tests that start real clusters, build virtual environments or spawn many
processes carry ``@pytest.mark.integration``; thorough runs carry
``@pytest.mark.slow``.  Both are left out of ``make test`` and run in
``make test-all``.

The fast suite has a budget (2 minutes on 2 idle cores, about 220 s of
summed test time; ``make test-durations`` prints the tail and the sum): a
test that needs a whole ``check`` checks one placement unless placements are
its point, shares a run through a session fixture (``unsafe_check``,
``safe_check`` below), and keeps its thorough variant beside it as
``pytest.param(..., marks=pytest.mark.slow)``, so every behaviour keeps a
cheap check in ``make test`` and its full one in ``make test-all``.

Hypothesis profiles:

* ``default`` — fast, for ``make test``: 20 examples, no deadline (the
  machine is shared and noisy; tests never assert on wall-clock time).
  ``make test-all`` runs the same tests with ``full``, so every property
  test keeps its thorough run there.
* ``full`` — 100 examples, Hypothesis's own budget: ``make test-all`` runs
  every property test with it (``HYPOTHESIS_PROFILE=full``).
* ``thorough`` — many examples, for tests marked ``slow``; they opt in with
  ``@settings(settings.get_profile("thorough"))``.

A test that sets its own ``max_examples`` keeps it under every profile.
``HYPOTHESIS_PROFILE=thorough pytest`` runs every property test thoroughly.
Each xdist worker keeps its own example database
(``.hypothesis/examples/<worker>``), so no two processes write one.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from check_runs import TRIM, CheckRun, run_check
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

_COMMON: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER:  # one database per worker process, in the repository's .hypothesis/
    _HOME = Path(__file__).resolve().parent.parent / ".hypothesis" / "examples"
    _COMMON["database"] = DirectoryBasedExampleDatabase(_HOME / _WORKER)
    # Each xdist worker already has a core: a check forking its placements
    # beside it (one process each, each starting its own caged policy) only
    # oversubscribes the machine; make test took 113 s instead of 120-124 s
    # with this.  Tests of the forked path pass jobs= (or --jobs) themselves.
    os.environ.setdefault("PRUNECHECK_JOBS", "1")

# Progress lines (sim/support/progress.py) go to a stderr that is not a
# terminal every 10 s: a slow test on a loaded machine would see them among
# the messages it asserts on.  Tests of progress set the interval themselves.
os.environ.setdefault("PRUNECHECK_PROGRESS_INTERVAL", "0")

settings.register_profile("default", max_examples=20, **_COMMON)
settings.register_profile("full", max_examples=100, **_COMMON)
settings.register_profile("thorough", max_examples=1500, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# make test-durations: each test's CPU time beside its wall-clock time (tests/cpu_times.py).
if os.environ.get("PRUNECHECK_CPU_TIMES"):
    from cpu_times import (  # noqa: F401  (pytest finds the hooks in this module)
        pytest_runtest_logfinish,
        pytest_runtest_logstart,
        pytest_unconfigure,
    )

# The failure database (sim/evidence/failures.py) would make one test's
# counterexample decide the next one's check: off unless a test turns it on.
os.environ["PRUNECHECK_FAILURES"] = "off"


_T = TypeVar("_T")


def once_per_session(
    factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], _T],
    save: Callable[[_T], Any],
    load: Callable[[Any], _T],
) -> _T:
    """``build(folder)`` once for the whole test session, not once per xdist
    worker: the first worker that asks builds it into a folder every worker
    sees (the session's temporary folder) and keeps ``save(value)`` (JSON)
    beside it; the others wait for it on a file lock and ``load`` that.  For
    costly, read-only setup (a whole check, a drawn report): each worker
    built its own copy before, and a worker that waits would have spent the
    same time building."""
    base = factory.getbasetemp()
    root = base.parent if _WORKER else base  # xdist: pytest-N/popen-gwK -> pytest-N
    folder, done = root / f"shared-{name}", root / f"shared-{name}.json"
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if done.is_file():
            return load(json.loads(done.read_text(encoding="utf-8")))
        shutil.rmtree(folder, ignore_errors=True)  # what a failed build left
        folder.mkdir()
        value = build(folder)
        done.write_text(json.dumps(save(value)), encoding="utf-8")
        return value


def _save_check(run: CheckRun) -> dict[str, Any]:
    out = None if run.out is None else str(run.out)
    return {
        "status": run.status,
        "doc": run.doc,
        "err": run.err,
        "junit": str(run.junit),
        "out": out,
    }


def _load_check(saved: dict[str, Any]) -> CheckRun:
    out = None if saved["out"] is None else Path(saved["out"])
    return CheckRun(saved["status"], saved["doc"], saved["err"], Path(saved["junit"]), out)


@pytest.fixture(scope="session")
def unsafe_check(tmp_path_factory: pytest.TempPathFactory) -> CheckRun:
    """``check`` of a trimmer unsafe at two placements, with --json, --junit and
    --out: one run for the JSON and the JUnit tests (see tests/check_runs.py),
    once per session.  Read it only."""
    return once_per_session(
        tmp_path_factory,
        "unsafe-check",
        lambda folder: run_check(folder, TRIM, bundle=True),
        _save_check,
        _load_check,
    )


@pytest.fixture(scope="session")
def safe_check(tmp_path_factory: pytest.TempPathFactory) -> CheckRun:
    """``check unit_safe`` with --json and --junit (see tests/check_runs.py),
    once per session.  Read it only."""
    return once_per_session(
        tmp_path_factory,
        "safe-check",
        lambda folder: run_check(folder, "unit_safe", bundle=False),
        _save_check,
        _load_check,
    )


def _draw_rows(out: Path) -> tuple[Path, list[Path], dict[str, list[str]]]:
    from figure_facts import recording
    from report_rows import data

    from prunecheck.sim.reports.writer import write_report  # not at import: tests watch imports

    with recording() as problems:
        files = write_report(data(), out)
    return out, files, problems


@pytest.fixture(scope="session")
def rows_drawn(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[Path], dict[str, list[str]]]:
    """The report of tests/report_rows.py's rows (``write_report``), drawn
    once per session for the page, browser and figure tests: the folder, the
    files written, and each plot's readability problems as it was saved
    (tests/figure_facts.py).  Read it only; a test that adds to it works on
    a copy."""
    return once_per_session(
        tmp_path_factory,
        "rows-report",
        _draw_rows,
        lambda drawn: {
            "out": str(drawn[0]),
            "files": [str(f) for f in drawn[1]],
            "problems": drawn[2],
        },
        lambda saved: (Path(saved["out"]), [Path(f) for f in saved["files"]], saved["problems"]),
    )


@pytest.fixture(scope="session")
def rows_report(
    rows_drawn: tuple[Path, list[Path], dict[str, list[str]]],
) -> tuple[Path, list[Path]]:
    """The folder and files of :func:`rows_drawn`."""
    return rows_drawn[0], rows_drawn[1]
