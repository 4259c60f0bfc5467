"""``--policy-timeout``: the one definition of the option every command that
runs user code takes (check, search, explore, replay, sweep, report,
baseline, regress)."""

from __future__ import annotations

import argparse

from prunecheck.sim.cli.argtypes import seconds
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT

__all__ = ["add_policy_timeout"]


def add_policy_timeout(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--policy-timeout S`` (``args.policy_timeout``): seconds one policy
    call may take before it counts as hung."""
    parser.add_argument(
        "--policy-timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT,
        metavar="S",
        help=f"seconds one policy call may take (default {DEFAULT_TIMEOUT:g})",
    )
