"""Reading a request body the way every provider's validator does: the
shared helpers that turn a malformed body into one clear
:class:`~prunecheck.model.errors.TranscriptError` (what is wrong, the rule,
a hint) before any provider rule is checked.  Pure: no I/O.
"""

from __future__ import annotations

from typing import NoReturn

from prunecheck.model.errors import TranscriptError

__all__ = ["fail", "id_field", "items_of", "json_type", "objects", "role_of"]

_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean",
               int: "number", float: "number", type(None): "null"}  # fmt: skip


def json_type(value: object) -> str:
    """The JSON name of ``value``'s type (``object``, ``array``, ...)."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def fail(where: str, rule: str, hint: str) -> NoReturn:
    """Raise the :class:`TranscriptError` for ``where``."""
    raise TranscriptError(where, rule, hint)


def items_of(payload: object, field: str, source: str, what: str, example: str) -> list[object]:
    """The list a body holds its conversation in (``messages``, ``input``,
    ``contents``), or the payload itself when it is a bare list; ``example``
    shows one entry in the hint."""
    raw = payload
    if isinstance(payload, dict):
        if field not in payload:
            fail(
                source,
                f"is a JSON object without '{field}'; a request body holds its "
                f"conversation in '{field}'.",
                f'Pass a request body {{"{field}": [...]}} or a bare list of {what}.',
            )
        raw = payload[field]
    if not isinstance(raw, list):
        fail(
            source,
            f"holds a JSON {json_type(raw)} where a list of {what} was expected.",
            f'Pass a bare list [{example}] or a body with "{field}".',
        )
    return raw


def objects(raw: list[object], source: str, field: str, what: str) -> list[dict[str, object]]:
    """``raw``, each entry checked to be a JSON object."""
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            fail(
                f"{source}: {field}[{i}]",
                f"is a JSON {json_type(entry)}; {what}.",
                f"Check that the list holds {field}, not their contents.",
            )
    return raw  # type: ignore[return-value]


def id_field(obj: dict[str, object], key: str, where: str, what: str) -> str:
    """``obj[key]`` as a string, or the error naming ``what`` lacks it."""
    value = obj.get(key)
    if not isinstance(value, str):
        fail(
            where,
            f"is {what} without a string '{key}' (found {json_type(value)}).",
            f"{what.capitalize()} names its call in '{key}'.",
        )
    return value


def role_of(
    obj: dict[str, object], where: str, allowed: tuple[str, ...], who: str, hint: str = ""
) -> str:
    """``obj["role"]`` if it is one of ``allowed``; else the error naming
    ``who``'s roles (``hint`` replaces the default "Use one of ...")."""
    role = obj.get("role")
    if isinstance(role, str) and role in allowed:
        return role
    shown = "no 'role'" if role is None else f"role {role!r}"
    fail(
        where,
        f"has {shown}; {who} message's role is one of {', '.join(allowed)}.",
        hint or f"Use one of {', '.join(map(repr, allowed))}.",
    )
