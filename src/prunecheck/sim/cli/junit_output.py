"""``--junit FILE``: the argument, and the refusal of a path that cannot be
written before any work.  The report itself is the API's
(:mod:`prunecheck.sim.api.junit`: one ``<testsuite>`` per placement or scenario
class, built from the JSON document), so every entry point writes the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.sim.support.outputs import output_file

__all__ = ["add_junit_argument", "check_junit"]


def add_junit_argument(parser: Any) -> None:
    """``--junit FILE``: also write the verdict as JUnit XML."""
    parser.add_argument(
        "--junit",
        metavar="FILE",
        help="also write the verdict as JUnit XML to FILE (a test case per placement x "
        "scenario; a loop: spec, per scenario class; failures name the first violation and "
        "the reproduction's path)",
    )


def check_junit(path: str | None, *, force: bool = False) -> None:
    """Refuse a ``--junit`` path that cannot be written, before any work
    (exit 2): a folder, a device or a FIFO, a missing folder, or a file
    that is not prunecheck's own JUnit report, unless ``force``."""
    if path is None:
        return
    target = output_file(
        path, "--junit", force=force, owned=_is_our_junit, mine="a JUnit report prunecheck wrote"
    )
    if not target.parent.is_dir():
        raise ConfigError(
            f"--junit {path}",
            f"names a file in {str(target.parent)!r}, which is not an existing folder.",
            "create the folder first, or pass a file in an existing one.",
        )


def _is_our_junit(path: Path) -> bool:
    """Whether ``path`` is a JUnit report prunecheck wrote (replaced on a rerun)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(512)
    except OSError:
        return False
    return head.startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<testsuites name="prunecheck')
