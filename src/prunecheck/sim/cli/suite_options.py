"""The options of the fixed, seeded scenario suite (``--levels``,
``--seeds``, ``--horizon``, ``--max-events``; ``check``'s ``--slow-levels``)
and of the reproduction corpus (``--corpus``), shared by ``check``,
``baseline`` and ``regress``.

>>> parse_seeds("1-3,7")
(1, 2, 3, 7)
>>> parse_levels("0.2,1")
(0.2, 1.0)
>>> parse_slow_levels("none"), parse_slow_levels("1")
((), (1.0,))
"""

from __future__ import annotations

import argparse
from pathlib import Path

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.suite import (
    DEFAULT_HORIZON,
    DEFAULT_LEVELS,
    DEFAULT_MAX_EVENTS,
    DEFAULT_SEEDS,
    DEFAULT_SLOW_LEVELS,
)
from prunecheck.sim.cli.argtypes import seconds
from prunecheck.sim.cli.limits import parse_positive_int

__all__ = [
    "DEFAULT_CORPUS",
    "add_suite_arguments",
    "default_corpus",
    "parse_levels",
    "parse_seeds",
    "parse_slow_levels",
]

#: Where the reproduction corpus lives in a checkout.
DEFAULT_CORPUS = "tests/corpus"


def parse_levels(text: str, flag: str = "--levels") -> tuple[float, ...]:
    """``0.2,0.6,1`` → load levels in [0, 1]; ConfigError if malformed."""
    try:
        levels = tuple(float(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise ConfigError(
            f"{flag} {text!r}",
            "must be numbers separated by commas.",
            f"for example {flag} 0.2,0.6,1.",
        ) from None
    if not levels or any(not 0.0 <= x <= 1.0 for x in levels):
        raise ConfigError(
            f"{flag} {text!r}",
            "must be load levels between 0 and 1.",
            f"for example {flag} 0.2,0.6,1.",
        )
    return levels


def parse_slow_levels(text: str) -> tuple[float, ...]:
    """``none`` → no slow-call scenarios; else load levels as :func:`parse_levels`."""
    if text.strip().lower() == "none":
        return ()
    return parse_levels(text, "--slow-levels")


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1,2,3`` or ``1-5`` → seeds; ConfigError if malformed."""
    seeds: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, dash, high = part.partition("-")
            seeds.extend(range(int(low), int(high) + 1) if dash else [int(part)])
    except ValueError:
        raise ConfigError(
            f"--seeds {text!r}",
            "must be integers or ranges like 1-5.",
            "for example --seeds 1,2,3 or --seeds 1-5.",
        ) from None
    if not seeds:
        raise ConfigError(f"--seeds {text!r}", "names no seed.", "for example --seeds 1-3.")
    return tuple(dict.fromkeys(seeds))


def add_suite_arguments(
    parser: argparse.ArgumentParser,
    *,
    seeds: tuple[int, ...] = DEFAULT_SEEDS,
    slow_levels: bool = False,
) -> None:
    """``--levels``, ``--seeds`` (whose help names ``seeds`` as the default),
    ``--horizon``, ``--max-events``; ``--slow-levels`` if ``slow_levels``."""
    group = parser.add_argument_group("scenario suite")
    group.add_argument(
        "--levels",
        type=parse_levels,
        metavar="L,L",
        help="load levels (default " + ",".join(map(str, DEFAULT_LEVELS)) + ")",
    )
    group.add_argument(
        "--seeds",
        type=parse_seeds,
        metavar="S,S|A-B",
        help="seeds (default " + _seeds_text(seeds) + ")",
    )
    if slow_levels:
        group.add_argument(
            "--slow-levels",
            type=parse_slow_levels,
            metavar="L,L|none",
            help="load levels of the slow-call scenarios, one per seed: batches now and then "
            "start a test run or a build minutes long while the user writes and budget checks "
            "fire (default " + ",".join(f"{x:g}" for x in DEFAULT_SLOW_LEVELS) + "; none: no such "
            "scenario)",
        )
    group.add_argument(
        "--horizon",
        type=seconds,
        metavar="SECONDS",
        help=f"simulated seconds per run (default {DEFAULT_HORIZON:g})",
    )
    group.add_argument(
        "--max-events",
        type=parse_positive_int("--max-events"),
        default=DEFAULT_MAX_EVENTS,
        metavar="N",
        help=f"events one scenario may apply before it is capped (default {DEFAULT_MAX_EVENTS})",
    )


def _seeds_text(seeds: tuple[int, ...]) -> str:
    if len(seeds) > 2 and seeds == tuple(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))


def default_corpus(given: str | None) -> str | None:
    """``given``, else the checkout's corpus folder if there is one."""
    if given is not None:
        return given
    return DEFAULT_CORPUS if Path(DEFAULT_CORPUS).is_dir() else None
