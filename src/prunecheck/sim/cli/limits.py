"""Bounds every long command shares: ``--time-limit`` and the exit status
of a verdict (including "out of time, no verdict").

Exit statuses of ``check``, ``search`` and ``explore`` (``sweep`` and ``report``
use 3 too, when ``--time-limit`` stopped them):

* 0 — no violation (safe, or none found in what was covered);
* 1 — a violation (with its reproduction), also one found before the time
  limit stopped the command;
* 2 — bad input, or a policy that raised, hung or returned garbage;
* 3 — out of time: the time limit came before a violation and before the
  command finished; no verdict;
* 4 — safe but vacuous, only with ``--fail-vacuous``: nothing the invariant
  is about was exercised (see :mod:`prunecheck.sim.api.vacuity`);
  without the flag a vacuous safe exits 0 and says so.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from prunecheck.model.errors import ConfigError

__all__ = [
    "EXIT_OUT_OF_TIME",
    "EXIT_VACUOUS",
    "add_fail_on_framework_argument",
    "add_fail_vacuous_argument",
    "add_run_time_limit",
    "add_time_limit",
    "exit_status",
    "parse_positive_int",
    "parse_time_limit",
    "run_time_limit",
    "vacuous_status",
]

#: Exit status of a command stopped by ``--time-limit`` without a verdict.
EXIT_OUT_OF_TIME = 3
#: Exit status of a safe but vacuous verdict under ``--fail-vacuous``.
EXIT_VACUOUS = 4

_STATUS = {"safe": 0, "unsafe": 1, "error": 2, "out_of_time": EXIT_OUT_OF_TIME}


def exit_status(verdict: str) -> int:
    """0 safe, 1 unsafe, 2 error, 3 out of time (see the module's doc)."""
    return _STATUS[str(verdict)]


def parse_time_limit(text: str) -> float:
    """``--time-limit``: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"--time-limit {text!r} must be a positive number of seconds; for example "
            "--time-limit 120"
        )
    return value


def parse_positive_int(flag: str) -> Callable[[str], int]:
    """A parser of a flag's positive integer."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} {text!r} must be a positive integer")
        return value

    return parse


def add_time_limit(parser: argparse.ArgumentParser) -> None:
    """``--time-limit SECONDS`` (default: none)."""
    parser.add_argument(
        "--time-limit",
        type=parse_time_limit,
        default=None,
        metavar="SECONDS",
        help="stop after this many seconds with a partial verdict: a violation if one was "
        f"found (exit 1), else out of time, no verdict (exit {EXIT_OUT_OF_TIME}); "
        "default: no limit",
    )
    # every call into a caged policy or runtime stops waiting when it runs out
    parser.set_defaults(bounds_calls=True)


def add_run_time_limit(p: argparse.ArgumentParser) -> None:
    """``--time-limit SECONDS`` of sweep and report: no new run starts after it."""
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop starting runs after this many seconds (wall clock); the "
        "finished runs are kept and reported, exit status 3",
    )


def run_time_limit(args: argparse.Namespace) -> float | None:
    """The validated --time-limit (None: no limit)."""
    limit: float | None = args.time_limit
    if limit is not None and not (limit > 0 and math.isfinite(limit)):
        raise ConfigError(
            "--time-limit",
            f"must be a positive number of seconds, got {limit:g}.",
            "for example --time-limit 60.",
        )
    return limit


def add_fail_on_framework_argument(parser: argparse.ArgumentParser) -> None:
    """``--fail-on-framework``: a loop's framework findings set the exit status too."""
    parser.add_argument(
        "--fail-on-framework",
        action="store_true",
        help="for a loop: spec, exit 1 on framework findings too (failures the framework's "
        "plain agent shows on the same schedule; by default only your configuration's set "
        "the exit status)",
    )


def add_fail_vacuous_argument(parser: argparse.ArgumentParser) -> None:
    """``--fail-vacuous``: exit :data:`EXIT_VACUOUS` on a safe but vacuous verdict."""
    parser.add_argument(
        "--fail-vacuous",
        action="store_true",
        help=f"exit {EXIT_VACUOUS} instead of 0 when the verdict is safe but vacuous "
        "(nothing the invariant is about was exercised); for CI",
    )


def vacuous_status(status: int, vacuous: bool, args: argparse.Namespace) -> int:
    """``status``, or :data:`EXIT_VACUOUS` for a vacuous safe under ``--fail-vacuous``."""
    if status == 0 and vacuous and getattr(args, "fail_vacuous", False):
        return EXIT_VACUOUS
    return status
