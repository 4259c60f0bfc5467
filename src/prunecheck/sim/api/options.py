"""The options of :func:`~prunecheck.sim.api.check.check_policy`,
checked as the command line checks its flags.

A bad option — an unknown name, ``gate="sometimes"``, ``levels=5`` — is
one :class:`~prunecheck.model.errors.ConfigError` paragraph naming the
option, the rule and a hint, raised before any work; the pytest plugin
shows it as the test's one-paragraph failure (a marker's options at the
test's setup).

>>> check_options(gate="commit", levels=(0.2, 0.6), placements=["before_invoke"])
>>> try:
...     check_options(gate="sometimes")
... except ConfigError as exc:
...     print(exc.paragraph())
gate='sometimes': is not a gate. Hint: one of none, reference, commit, spill.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from prunecheck.model.config import CheckAt
from prunecheck.model.errors import ConfigError
from prunecheck.model.gates import Gate

__all__ = ["OPTIONS", "check_options"]

#: Every option check_policy takes besides the policy (assert_policy_safe
#: adds bundle_dir and force).
OPTIONS = (
    "format",
    "gate",
    "config",
    "levels",
    "seeds",
    "horizon",
    "slow_levels",
    "seed",
    "max_examples",
    "timeout",
    "name",
    "placements",
    "time_limit",
    "max_events",
    "progress",
    "failures",
    "jobs",
    "providers",
)


def _bad(name: str, value: Any, rule: str, hint: str) -> ConfigError:
    return ConfigError(f"{name}={value!r}", rule, hint)


def _enum(kind: type[Enum], what: str) -> Callable[[str, Any], None]:
    def check(name: str, value: Any) -> None:
        try:
            kind(value)
        except ValueError:
            names = ", ".join(str(m.value) for m in kind)
            raise _bad(name, value, f"is not {what}.", f"one of {names}.") from None

    return check


def _number(
    low: float, high: float = math.inf, *, whole: bool = False, open_low: bool = False
) -> tuple[Callable[[Any], bool], str]:
    kind = "a whole number" if whole else "a number"
    top = "" if high == math.inf else f" and at most {high:g}"
    rule = f"must be {kind} {'above' if open_low else 'of at least'} {low:g}{top}."

    def ok(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if whole and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return (value > low if open_low else value >= low) and value <= high

    return ok, rule


def _scalar(
    low: float, high: float = math.inf, *, whole: bool = False, open_low: bool = False
) -> Callable[[str, Any], None]:
    ok, rule = _number(low, high, whole=whole, open_low=open_low)

    def check(name: str, value: Any) -> None:
        if not ok(value):
            raise _bad(name, value, rule.replace("must be", "is not"), rule)

    return check


def _many(
    low: float, high: float = math.inf, *, whole: bool = False, open_low: bool = False
) -> Callable[[str, Any], None]:
    ok, rule = _number(low, high, whole=whole, open_low=open_low)

    def check(name: str, value: Any) -> None:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise _bad(name, value, "is not a list.", f"a list or tuple; each {rule}")
        for item in list(value):
            if not ok(item):
                raise _bad(name, value, f"holds {item!r}; each {rule}", "fix that value.")

    return check


def _placements(name: str, value: Any) -> None:
    if value is None:
        return
    names = ", ".join(c.value for c in CheckAt)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise _bad(name, value, "is not a list of placements.", f"a list of {names}.")
    for item in value:
        try:
            CheckAt(item)
        except ValueError:
            raise _bad(name, value, f"holds {item!r}, not a placement.", f"{names}.") from None


def _list_format(name: str, value: Any) -> None:
    """A list function's message format: one of the two list shapes
    (``policy_spec.FORMATS``), not every provider ``--provider`` takes."""
    from prunecheck.sim.subjects.policy_spec import FORMATS

    if value not in FORMATS and getattr(value, "value", None) not in FORMATS:
        raise _bad(name, value, "is not a provider format.", f"one of {', '.join(FORMATS)}.")


def _providers(name: str, value: Any) -> None:
    from prunecheck.sim.api.providers import parse_providers

    parse_providers(value, flag=name)


def _optional(check: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
    def maybe(name: str, value: Any) -> None:
        if value is not None:
            check(name, value)

    return maybe


_CHECKS: dict[str, Callable[[str, Any], None]] = {
    "format": _optional(_list_format),
    "gate": _enum(Gate, "a gate"),
    "levels": _many(0, 1, open_low=True),  # () : no suite (the search alone)
    "slow_levels": _many(0, 1, open_low=True),
    "seeds": _many(-math.inf, whole=True),
    "horizon": _scalar(0, open_low=True),
    "seed": _scalar(-math.inf, whole=True),
    "max_examples": _scalar(0, whole=True),
    "timeout": _scalar(0, open_low=True),
    "placements": _placements,
    "time_limit": _optional(_scalar(0, open_low=True)),
    "max_events": _scalar(1, whole=True),
    "jobs": _optional(_scalar(1, whole=True)),
    "providers": _providers,
}


def check_options(*, extra: Iterable[str] = (), **given: Any) -> None:
    """Raise :class:`ConfigError` for the first option of ``given`` that
    check_policy does not take (``extra`` names more that the caller does)
    or whose value it cannot use."""
    known = (*OPTIONS, *extra)
    for name, value in given.items():
        if name not in known:
            raise ConfigError(
                f"option {name}={value!r}",
                "is not an option of check_policy.",
                f"the options are {', '.join(known)}.",
            )
        check = _CHECKS.get(name)
        if check is not None:
            check(name, value)
