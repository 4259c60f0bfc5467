"""The one spec syntax of framework adapters: ``ADAPTER:key=value,key=value``.

Every adapter reads its settings from a frozen dataclass whose fields are
its settings; this module parses and prints them for all adapters alike:

* ``int`` and ``float`` fields take numbers; ``bool`` fields take
  ``true``/``false``; ``str`` fields take a word (or a path such as
  ``my_trim.py:trim`` — a value may hold ``:`` and ``/``, never ``,``);
* ``tuple[str, ...]`` fields take words joined by ``+`` (``human+tool``);
* a field whose metadata has ``choices`` takes one of them (a ``str``
  field) or several joined by ``+`` (a tuple field);
* a :data:`Limit` field takes a token count or ``budget`` — the size the
  runtime asks the context to fit at that budget check.

From Python, pass the same settings as keywords:
``check_policy(framework_spec("autogen", context="buffered", buffer_size=6))``.

>>> from dataclasses import dataclass, field
>>> @dataclass(frozen=True, slots=True)
... class S:
...     size: int = 5
...     kinds: tuple[str, ...] = field(default=(), metadata={"choices": ("a", "b")})
>>> parse_settings(S, "demo", "size=3,kinds=a+b")
S(size=3, kinds=('a', 'b'))
>>> spec_of("demo", S(size=3))
'demo:size=3'
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from prunecheck.model.errors import PolicyError

__all__ = ["BUDGET", "Limit", "format_value", "parse_settings", "setting_help", "spec_of"]

#: A token limit: a count, or ``BUDGET`` (-1): what the runtime asks for.
Limit = int
BUDGET = -1
_HINT = "'prunecheck policies' lists every adapter's settings with their defaults."
_BOOLS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}
T = TypeVar("T")


def parse_settings(cls: type[T], adapter: str, text: str | Mapping[str, object]) -> T:
    """An instance of the settings dataclass ``cls`` from ``k=v,...`` text
    (or a mapping, from Python); a :class:`PolicyError` names a bad one."""
    subject = f"{adapter} settings {text!r}"
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    pairs: list[tuple[str, object]]
    if isinstance(text, str):
        pairs = []
        for item in filter(None, (p.strip() for p in text.split(","))):
            key, eq, value = item.partition("=")
            if not eq:
                raise PolicyError(
                    subject,
                    f"{item!r} is not a setting.",
                    f"write k=v pairs separated by commas; settings of {adapter}: "
                    f"{', '.join(fields)}.",
                )
            pairs.append((key.strip(), value.strip()))
    else:
        pairs = list(text.items())
    values: dict[str, object] = {}
    for key, raw in pairs:
        if key not in fields:
            raise PolicyError(
                subject,
                f"{key!r} is not a setting of {adapter}.",
                f"settings of {adapter}: {', '.join(fields) or '(none)'}.",
            )
        if key in values:
            raise PolicyError(
                subject,
                f"{key} is given twice; a setting takes one value.",
                f"keep one {key}=...; settings of {adapter}: {', '.join(fields)}.",
            )
        values[key] = _value(subject, fields[key], hints[key], raw)
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise PolicyError(subject, f"{exc}.", _HINT) from None


def _value(subject: str, f: dataclasses.Field[Any], hint: object, raw: object) -> object:
    choices: tuple[str, ...] = tuple(f.metadata.get("choices", ()))
    text = str(raw).strip() if not isinstance(raw, tuple | list) else "+".join(map(str, raw))
    if f.metadata.get("limit"):
        if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0:
            return raw
        if text == "budget":
            return BUDGET
        if not text.isdigit() or int(text) < 1:
            raise PolicyError(
                subject,
                f"{f.name} must be a positive token count or 'budget', got {text!r}.",
                "budget means: what the runtime asks the context to fit at that check.",
            )
        return int(text)
    if hint is bool:
        if isinstance(raw, bool):
            return raw
        if text.lower() not in _BOOLS:
            raise PolicyError(subject, f"{f.name} must be true or false, got {text!r}.", _HINT)
        return _BOOLS[text.lower()]
    if hint is int or hint is float:
        try:
            number = int(text) if hint is int else float(text)
        except ValueError:
            raise PolicyError(subject, f"{f.name} must be a number, got {text!r}.", _HINT) from None
        if number < f.metadata.get("min", 0):
            raise PolicyError(
                subject,
                f"{f.name} must be at least {f.metadata.get('min', 0)}, got {text!r}.",
                _HINT,
            )
        return number
    if typing.get_origin(hint) is tuple:
        words = tuple(w for w in text.split("+") if w and w != "none")
        bad = [w for w in words if choices and w not in choices]
        if bad:
            raise PolicyError(
                subject,
                f"{f.name} names unknown value(s) {bad}.",
                f"use {', '.join(choices)}, joined by '+'.",
            )
        return words
    if choices and text not in choices and not f.metadata.get("open"):
        raise PolicyError(
            subject,
            f"{f.name} must be one of {', '.join(choices)}, got {text!r}.",
            f.metadata.get("hint", _HINT),
        )
    return text


def format_value(value: object) -> str:
    """A setting's value as the spec writes it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return "+".join(map(str, value)) or "none"
    if value == BUDGET and isinstance(value, int):
        return "budget"
    return str(value)


def spec_of(adapter: str, settings: object, *, first: tuple[str, ...] = ()) -> str:
    """The canonical spec: the adapter and the settings that differ from the
    defaults (those named in ``first`` always), in field order."""
    parts = []
    for f in dataclasses.fields(settings):  # type: ignore[arg-type]
        value = getattr(settings, f.name)
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.name in first or value != default:
            parts.append(f"{f.name}={format_value(value)}")
    return f"{adapter}:{','.join(parts)}"


def setting_help(cls: type[Any]) -> list[str]:
    """One line per setting: ``name=DEFAULT  help`` (for ``policies``)."""
    out = []
    for f in dataclasses.fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else ""
        choices = f.metadata.get("choices")
        shown = f"{f.name}={format_value(default)}"
        words = f.metadata.get("help", "")
        if choices:
            words += f" ({'|'.join(choices)})"
        out.append(f"{shown:<28} {words}".rstrip())
    return out
