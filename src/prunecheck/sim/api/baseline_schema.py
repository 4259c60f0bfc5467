"""The baseline file's schema, checked strictly before a baseline is used.

A baseline is the reference ``regress`` compares with: a file with no
runs, a load level that is not a number, negative turns or a session that
ends before it starts would be compared and could pass a regression.
:func:`check_baseline_json` refuses such a file with one paragraph naming
the file, the field (``runs[3].sessions[0].turns``) and the rule.

>>> try:
...     check_baseline_json({"suite": {"levels": [0.5], "seeds": [1], "horizon": 5},
...                          "runs": [], "complete": True}, "b.json")
... except ConfigError as exc:
...     print(exc.subject, "|", exc.rule)
b.json: runs | is empty; a baseline holds at least one run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from prunecheck.model.errors import ConfigError

__all__ = ["check_baseline_json"]

_HINT = "re-create it with 'prunecheck baseline --out FILE'."
_ENDS = ("natural", "abort", "censored")


class _Bad(Exception):
    """A field that breaks its rule: (field, rule)."""


def _number(value: object, field: str, *, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Bad(field, f"is {value!r}; it must be a number.")
    if not math.isfinite(value) or not low <= value <= high:
        span = f"at least {low:g}" if high == math.inf else f"in [{low:g}, {high:g}]"
        raise _Bad(field, f"is {value!r}; it must be a finite number {span}.")
    return float(value)


def _whole(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(field, f"is {value!r}; it must be a whole number of at least 0.")
    return value


def _object(value: object, field: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(field, f"is {type(value).__name__}; it must be a JSON object.")
    return value


def _list(value: object, field: str, *, empty: bool = True) -> list[Any]:
    if not isinstance(value, list):
        raise _Bad(field, f"is {type(value).__name__}; it must be a list.")
    if not value and not empty:
        raise _Bad(field, "is empty; a baseline holds at least one run.")
    return value


def _counts(value: object, field: str) -> None:
    for key, count in _object(value, field).items():
        _whole(count, f"{field}.{key}")


def _session(data: object, field: str, horizon: float) -> None:
    item = _object(data, field)
    duration = _number(item.get("t"), f"{field}.t")
    if duration > horizon * (1 + 1e-9):
        raise _Bad(f"{field}.t", f"is {duration:g}, longer than the suite's horizon {horizon:g}.")
    turns = _whole(item.get("turns"), f"{field}.turns")
    _whole(item.get("inv"), f"{field}.inv")
    if item.get("end") not in _ENDS:
        raise _Bad(f"{field}.end", f"is {item.get('end')!r}; it must be one of {', '.join(_ENDS)}.")
    _counts(item.get("exp", {}), f"{field}.exp")
    for key, first in _object(item.get("first", {}), f"{field}.first").items():
        where = f"{field}.first.{key}"
        if not isinstance(first, list) or len(first) != 2:
            raise _Bad(where, "must be [seconds, turns].")
        if _number(first[0], f"{where}[0]") > duration * (1 + 1e-9):
            raise _Bad(f"{where}[0]", f"is {first[0]!r}, after the session ended ({duration:g}).")
        if _whole(first[1], f"{where}[1]") > turns:
            raise _Bad(f"{where}[1]", f"is {first[1]!r}, more turns than the session had.")


def _suite(data: object) -> tuple[float, set[tuple[float, int]]]:
    suite = _object(data, "suite")
    levels = _list(suite.get("levels"), "suite.levels")
    slow = _list(suite.get("slow_levels", []), "suite.slow_levels")
    seeds = _list(suite.get("seeds"), "suite.seeds")
    if not (levels or slow) or not seeds:
        raise _Bad("suite", "has no level or no seed; a suite runs at least one scenario.")
    for i, level in enumerate([*levels, *slow]):
        _number(level, f"suite.levels[{i}]", high=1.0)
    for i, seed in enumerate(seeds):
        _whole(seed, f"suite.seeds[{i}]")
    horizon = _number(suite.get("horizon"), "suite.horizon")
    if horizon <= 0:
        raise _Bad("suite.horizon", f"is {horizon:g}; it must be more than 0 seconds.")
    return horizon, {(float(level), seed) for level in [*levels, *slow] for seed in seeds}


def _run(data: object, field: str, horizon: float, keys: set[tuple[float, int]]) -> None:
    run = _object(data, field)
    level = _number(run.get("level"), f"{field}.level", high=1.0)
    seed = _whole(run.get("seed"), f"{field}.seed")
    if (level, seed) not in keys:
        raise _Bad(field, f"(level {level:g}, seed {seed}) is not a run of the file's suite.")
    _whole(run.get("invocations"), f"{field}.invocations")
    _whole(run.get("events"), f"{field}.events")
    _counts(run.get("incidents"), f"{field}.incidents")
    _counts(run.get("exposed"), f"{field}.exposed")
    error = run.get("error")
    if error is not None and not isinstance(error, str):
        raise _Bad(f"{field}.error", "must be null or a message.")
    for i, session in enumerate(_list(run.get("sessions"), f"{field}.sessions")):
        _session(session, f"{field}.sessions[{i}]", horizon)


def check_baseline_json(data: Mapping[str, Any], where: str) -> None:
    """Check a baseline's JSON (format and version already checked); a
    complete baseline holds at least one run.

    Raises
    ------
    ConfigError
        naming ``where``, the field and the rule it breaks.
    """
    try:
        horizon, keys = _suite(data.get("suite"))
        runs = _list(data.get("runs"), "runs", empty=not data.get("complete"))
        seen: set[tuple[object, object]] = set()
        for i, run in enumerate(runs):
            _run(run, f"runs[{i}]", horizon, keys)
            key = (run["level"], run["seed"])
            if key in seen:
                raise _Bad(f"runs[{i}]", "repeats a run (same level and seed) given before.")
            seen.add(key)
    except _Bad as bad:
        field, rule = bad.args
        raise ConfigError(f"{where}: {field}", rule, _HINT) from None
