"""Argument types for numeric command-line flags: each rejects what makes no
sense (0, negatives, nan, inf, absurd sizes) with a message argparse prints
as the usual one-paragraph error (exit 2).

Every type is made by one factory, :func:`bounded`: a whole or finite number
within optional bounds, named and described by its rule.

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
>>> percent = bounded(float, name="percent", rule="must be a percentage", low=0, high=100)
>>> percent("12.5")
12.5
>>> percent("120")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a percentage, got '120'
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "bounded",
    "count",
    "fraction",
    "integer",
    "natural",
    "non_negative",
    "ratio",
    "seconds",
]

#: Larger integers are typos, and overflow C code (random seeds, sizes).
_LIMIT = 2**62

_N = TypeVar("_N", int, float)


def bounded(
    kind: type[_N],
    *,
    name: str,
    rule: str,
    low: float | None = None,
    high: float | None = None,
    strict: bool = False,
) -> Callable[[str], _N]:
    """An argparse ``type=`` that reads a number of ``kind`` within bounds.

    Parameters
    ----------
    kind : type
        ``int`` (a whole number within ±2**62) or ``float`` (a finite number).
    name : str
        The type's name (its ``__name__``, which argparse may print).
    rule : str
        What a good value is, as the error says it: ``"must be ..."``; the
        error reads ``"<rule>, got '<text>'"``.
    low, high : float or None
        The bounds (None: unbounded on that side).
    strict : bool
        Whether the bounds themselves are excluded.

    Returns
    -------
    Callable[[str], int | float]
        The parser; it raises :class:`argparse.ArgumentTypeError` naming the
        rule and the text given.
    """

    def bad(text: str, extra: str = "") -> argparse.ArgumentTypeError:
        return argparse.ArgumentTypeError(f"{rule}{extra}, got {text!r}")

    def within(value: float) -> bool:
        if strict:
            return (low is None or value > low) and (high is None or value < high)
        return (low is None or value >= low) and (high is None or value <= high)

    def parse(text: str) -> _N:
        try:
            value = kind(text)
        except ValueError:
            raise bad(text) from None
        if kind is int and abs(value) > _LIMIT:
            raise bad(text, f" (at most {_LIMIT})")
        if kind is float and not math.isfinite(value):
            raise bad(text)
        if not within(value):
            raise bad(text)
        return value

    parse.__name__ = parse.__qualname__ = name
    parse.__doc__ = f"A {kind.__name__} that {rule.removeprefix('must ')}."
    return parse


#: A positive, finite number of seconds (a time limit, a horizon).
seconds = bounded(
    float, name="seconds", rule="must be a positive, finite number of seconds", low=0, strict=True
)
#: A whole number of at least 1 (runs, seeds, jobs, tokens, states).
count = bounded(int, name="count", rule="must be a whole number of at least 1", low=1)
#: A whole number of at least 0 (a shape bound).
natural = bounded(int, name="natural", rule="must be a whole number of at least 0", low=0)
#: Any whole number within ±2**62 (a seed).
integer = bounded(int, name="integer", rule="must be a whole number")
#: A number strictly between 0 and 1 (a significance level).
fraction = bounded(
    float,
    name="fraction",
    rule="must be a number strictly between 0 and 1",
    low=0,
    high=1,
    strict=True,
)
#: A finite number of at least 0 (an effect size).
non_negative = bounded(
    float, name="non_negative", rule="must be a finite number of at least 0", low=0
)
#: A finite number of at least 1 (a ratio threshold).
ratio = bounded(float, name="ratio", rule="must be a finite number of at least 1", low=1)
