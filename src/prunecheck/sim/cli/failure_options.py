"""``--failures DIR`` / ``--no-failures``: the failure database of ``check``
and ``search`` (see :mod:`prunecheck.sim.evidence.failures`)."""

from __future__ import annotations

import argparse
import sys

from prunecheck.sim.evidence.failures import DEFAULT_ROOT, ENV, FailureDatabase, database

__all__ = ["add_failure_arguments", "failure_database", "report_problems"]


def add_failure_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("failure database")
    group.add_argument(
        "--failures",
        metavar="DIR",
        help=f"where found counterexamples are saved and replayed first (default ${ENV}, "
        f"else {DEFAULT_ROOT})",
    )
    group.add_argument(
        "--no-failures",
        action="store_true",
        help="neither replay nor save counterexamples",
    )


def failure_database(args: argparse.Namespace) -> FailureDatabase | None:
    """The database the flags (or the environment) name; None for none."""
    if args.no_failures:
        return None
    return database(args.failures or None)  # the API's one default (see database)


def report_problems(db: FailureDatabase | None, command: str) -> None:
    """Print what the database reported and discarded (never fatal), each
    once: what is printed is not printed again."""
    if db is None:
        return
    for problem in db.problems:
        print(f"prunecheck {command}: {problem}", file=sys.stderr)
    db.problems.clear()
