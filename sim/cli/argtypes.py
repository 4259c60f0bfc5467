"""Argument types for numeric command-line flags: each rejects what makes no
sense (0, negatives, nan, inf, absurd sizes) with a message argparse prints
as the usual one-paragraph error (exit 2).

Examples
--------
>>> seconds("2.5")
2.5
>>> count("3")
3
>>> seconds("nan")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a positive, finite number of seconds, got 'nan'
"""

from __future__ import annotations

import argparse
import math

__all__ = ["count", "fraction", "integer", "natural", "non_negative", "ratio", "seconds"]

#: Larger integers are typos, and overflow C code (random seeds, sizes).
_LIMIT = 2**62


def _float(text: str, rule: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def _int(text: str, rule: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}") from None
    if abs(value) > _LIMIT:
        raise argparse.ArgumentTypeError(f"{rule} (at most {_LIMIT}), got {text!r}")
    return value


def seconds(text: str) -> float:
    """A positive, finite number of seconds (a time limit, a horizon)."""
    rule = "must be a positive, finite number of seconds"
    value = _float(text, rule)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def count(text: str) -> int:
    """A whole number of at least 1 (runs, seeds, jobs, tokens, states)."""
    rule = "must be a whole number of at least 1"
    value = _int(text, rule)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def natural(text: str) -> int:
    """A whole number of at least 0 (a shape bound)."""
    rule = "must be a whole number of at least 0"
    value = _int(text, rule)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def integer(text: str) -> int:
    """Any whole number within ±2**62 (a seed)."""
    return _int(text, "must be a whole number")


def fraction(text: str) -> float:
    """A number strictly between 0 and 1 (a significance level)."""
    rule = "must be a number strictly between 0 and 1"
    value = _float(text, rule)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def non_negative(text: str) -> float:
    """A finite number of at least 0 (an effect size)."""
    rule = "must be a finite number of at least 0"
    value = _float(text, rule)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value


def ratio(text: str) -> float:
    """A finite number of at least 1 (a ratio threshold)."""
    rule = "must be a finite number of at least 1"
    value = _float(text, rule)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{rule}, got {text!r}")
    return value
