"""The numeric argument types (sim/cli/argtypes.py): one factory, and the
exact texts users see for each type (the bad-input suite checks them through
the commands)."""

from __future__ import annotations

import argparse

import pytest

from prunecheck.sim.cli.argtypes import (
    bounded,
    count,
    fraction,
    integer,
    natural,
    non_negative,
    ratio,
    seconds,
)

GOOD = [
    (seconds, "2.5", 2.5),
    (seconds, "1e-3", 0.001),
    (count, "1", 1),
    (natural, "0", 0),
    (integer, "-7", -7),
    (integer, str(2**62), 2**62),
    (fraction, "0.01", 0.01),
    (non_negative, "0", 0.0),
    (ratio, "1", 1.0),
]

BAD = [
    (seconds, "0", "must be a positive, finite number of seconds, got '0'"),
    (seconds, "-1", "must be a positive, finite number of seconds, got '-1'"),
    (seconds, "nan", "must be a positive, finite number of seconds, got 'nan'"),
    (seconds, "inf", "must be a positive, finite number of seconds, got 'inf'"),
    (seconds, "abc", "must be a positive, finite number of seconds, got 'abc'"),
    (count, "0", "must be a whole number of at least 1, got '0'"),
    (count, "1.5", "must be a whole number of at least 1, got '1.5'"),
    (count, "9" * 30, f"must be a whole number of at least 1 (at most {2**62}), got '{'9' * 30}'"),
    (natural, "-1", "must be a whole number of at least 0, got '-1'"),
    (integer, "x", "must be a whole number, got 'x'"),
    (integer, str(-(2**62) - 1), f"must be a whole number (at most {2**62}), got '{-(2**62) - 1}'"),
    (fraction, "0", "must be a number strictly between 0 and 1, got '0'"),
    (fraction, "1", "must be a number strictly between 0 and 1, got '1'"),
    (fraction, "nan", "must be a number strictly between 0 and 1, got 'nan'"),
    (non_negative, "-1", "must be a finite number of at least 0, got '-1'"),
    (non_negative, "inf", "must be a finite number of at least 0, got 'inf'"),
    (ratio, "0.5", "must be a finite number of at least 1, got '0.5'"),
    (ratio, "nan", "must be a finite number of at least 1, got 'nan'"),
]


@pytest.mark.parametrize(("parse", "text", "value"), GOOD)
def test_a_good_value_parses(parse: object, text: str, value: float) -> None:
    assert callable(parse)
    got = parse(text)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("parse", "text", "message"), BAD)
def test_a_bad_value_names_the_rule_and_the_text(parse: object, text: str, message: str) -> None:
    assert callable(parse)
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        parse(text)
    assert str(raised.value) == message


def test_the_factory_names_its_type_and_honours_both_bounds() -> None:
    pick = bounded(int, name="pick", rule="must be 1, 2 or 3", low=1, high=3)
    assert pick.__name__ == "pick" and pick("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match=r"must be 1, 2 or 3, got '4'"):
        pick("4")
    open_ = bounded(float, name="open", rule="must be inside (0, 2)", low=0, high=2, strict=True)
    assert open_("1") == 1.0
    for edge in ("0", "2"):
        with pytest.raises(argparse.ArgumentTypeError):
            open_(edge)
