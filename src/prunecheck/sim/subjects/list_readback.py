"""Reading back what a list function returned: which of the items it was
given it kept (by identity, then equality), which it edited, what it added,
and every way it may have broken the contract (mutated its input, returned
something that is not a list of dicts, reordered, duplicated, rewrote a
call) as a :class:`~prunecheck.model.errors.PolicyError` naming the policy.

The result is evicted ids and actions (:mod:`.list_actions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, Protocol

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError
from prunecheck.model.provider import Provider
from prunecheck.sim.subjects.list_actions import Item, ItemKind, read_back
from prunecheck.sim.subjects.list_render import RenderedList, message_blocks
from prunecheck.sim.subjects.sized_content import approx_tokens

__all__ = ["ListFunctionShape", "check_not_mutated", "read_result"]


class ListFunctionShape(Protocol):
    """What the read-back needs of a list policy: its name and format."""

    @property
    def name(self) -> str: ...

    @property
    def format(self) -> Provider: ...


_HINT = (
    "return the messages it keeps, in their order (the same dicts or equal copies); "
    "a summary or placeholder may stand where removed messages were, and a kept "
    "message's content may be shortened; prunecheck judges all of these."
)


def _fail(policy: ListFunctionShape, rule: str, hint: str = _HINT) -> PolicyError:
    return PolicyError(f"policy {policy.name!r}", rule, hint)


def _short(obj: object, limit: int = 80) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_not_mutated(
    policy: ListFunctionShape,
    given: list[dict[str, Any]],
    snapshot: list[dict[str, Any]],
    rendered: RenderedList,
) -> None:
    if given == snapshot:
        return
    if len(given) != len(snapshot):
        what = (
            f"the list it was given now has {len(given)} messages instead of "
            f"{len(snapshot)} (it removed or added messages in place)"
        )
    else:
        i = next(i for i, (a, b) in enumerate(zip(given, snapshot, strict=True)) if a != b)
        ids = ", ".join(dict.fromkeys(rendered.owners[i]))
        what = f"it changed the message at position {i} ({ids}) in place"
    raise _fail(
        policy,
        f"mutated its input: {what}.",
        "copy before editing (e.g. return messages[-k:] or a new list); a trimmer "
        "that edits the runtime's own list corrupts it whatever it returns.",
    )


def read_result(
    policy: ListFunctionShape, result: object, rendered: RenderedList, order: Sequence[str]
) -> list[str | Action]:
    """What ``result`` means, as evicted ids and actions (see
    :mod:`.list_actions`); PolicyError if it cannot be mapped back."""
    if not isinstance(result, list | tuple):
        raise _fail(
            policy,
            f"returned {type(result).__name__} ({_short(result)}), not a list of message dicts.",
        )
    for i, item in enumerate(result):
        if not isinstance(item, dict):
            raise _fail(
                policy,
                f"returned a {type(item).__name__} at position {i} "
                f"({_short(item)}), not a message dict.",
            )
        if not isinstance(item.get("role"), str):  # no role: no message of any provider
            raise _fail(
                policy,
                f"returned a dict without a role at position {i} ({_short(item)}), not a "
                "message: every message names its role (user, assistant, tool ...).",
            )
    given = rendered.messages
    if policy.format is Provider.OPENAI:
        pool: list[object] = list(given)
        where = [(i, 0) for i in range(len(given))]
        items: list[object] = list(result)
        fixed: list[int | None] = [None] * len(items)
        roles: list[object] = [m.get("role") for m in result]
        labels = [f"output position {i}" for i in range(len(items))]
    else:
        pool, where, start = [], [], {}
        for i, message in enumerate(given):
            start[i] = len(pool)
            for k, block in enumerate(message_blocks(message)):
                pool.append(block)
                where.append((i, k))
        whole = {id(m): i for i, m in enumerate(given)}
        items, fixed, roles, labels = [], [], [], []
        for at, message in enumerate(result):
            index = whole.get(id(message))
            blocks = message_blocks(message)
            if index is not None:
                blocks = message_blocks(given[index])
            for k, block in enumerate(blocks):
                items.append(block)
                fixed.append(None if index is None else start[index] + k)
                roles.append(message.get("role"))
                labels.append(f"output message {at}, block {k}")
    matched = _match(policy, items, fixed, pool, rendered, where, labels)
    out: list[Item] = []
    for at, (kind, p) in enumerate(matched):
        if p is None:
            out.append(Item(kind, None, _item_tokens(items[at]), labels[at], _item_text(items[at])))
            continue
        i = where[p][0]
        if given[i].get("role") != roles[at]:
            raise _fail(
                policy,
                f"returned the content of {rendered.owners[i][where[p][1]]} "
                f"(a {given[i].get('role')} message) as a {roles[at]} message.",
            )
        out.append(Item(kind, where[p], _item_tokens(items[at]), labels[at]))
    _check_order(policy, [it.position for it in out if it.position is not None], rendered)
    visible = [mid for mid in order if mid not in rendered.hidden]
    sizes = {mid: rendered.tokens.get(keys[0], 0) for mid, keys in rendered.keys.items()}
    return read_back(visible, rendered.keys, sizes, out, lambda rule: _fail(policy, rule))


def _item_text(item: object) -> str:
    if not isinstance(item, dict):
        return ""
    for key in ("content", "text"):
        value = item.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list):
            return " ".join(_item_text(b) for b in value)
    return ""


def _item_tokens(item: object) -> int:
    return approx_tokens(_item_text(item))


def _match(
    policy: ListFunctionShape,
    items: Sequence[object],
    fixed: Sequence[int | None],
    pool: Sequence[object],
    rendered: RenderedList,
    where: Sequence[tuple[int, int]],
    labels: Sequence[str],
) -> list[tuple[ItemKind, int | None]]:
    """Pool positions of ``items``: fixed, else by identity, else by equality
    (the later equal one first, as trimmers drop from the front), else — for
    an item naming a call of the input — an edit of that item, else new.
    Raises for an item that rewrites a call itself."""
    by_id = {id(obj): j for j, obj in enumerate(pool)}
    out: list[int | None] = [
        f if f is not None else by_id.get(id(obj)) for f, obj in zip(fixed, items, strict=True)
    ]
    kinds = [ItemKind.KEPT] * len(items)
    used = {j for j in out if j is not None}
    upper = len(pool)
    for i in range(len(items) - 1, -1, -1):
        found = out[i]
        if found is not None:
            upper = found
            continue
        equal = [j for j, obj in enumerate(pool) if j not in used and obj == items[i]]
        if not equal:
            edited = _edit_of(policy, items[i], labels[i], pool, rendered, where)
            kinds[i] = ItemKind.NEW if edited is None else ItemKind.EDITED
            if edited is not None:
                out[i] = edited
                used.add(edited)
                upper = edited
            continue
        before = [j for j in equal if j < upper]
        pick = before[-1] if before else equal[-1]
        out[i] = pick
        used.add(pick)
        upper = pick
    return list(zip(kinds, out, strict=True))


_CONTENT_KEYS = frozenset({"content", "text"})


def _edit_of(
    policy: ListFunctionShape,
    item: object,
    at: str,
    pool: Sequence[object],
    rendered: RenderedList,
    where: Sequence[tuple[int, int]],
) -> int | None:
    """The pool position ``item`` edits (same call ids, only its content
    changed), None if it names no call (a new item); raises if it rewrites
    more than the content of a call's message."""
    ident = _call_ident(item)
    if not ident:
        return None
    for j, obj in enumerate(pool):
        same_kind = _get(obj, "role") == _get(item, "role") and _get(obj, "type") == _get(
            item, "type"
        )
        if not same_kind or not set(_call_ident(obj)) & set(ident):
            continue
        i, k = where[j]
        changed = sorted(
            key for key in {*_keys(item), *_keys(obj)} if _get(item, key) != _get(obj, key)
        )
        if _call_ident(obj) == ident and set(changed) <= _CONTENT_KEYS:
            return j
        noun = "message" if rendered.format is Provider.OPENAI else "content block"
        raise _fail(
            policy,
            f"rewrote the {noun} of {rendered.owners[i][k]} (call "
            f"{', '.join(_call_ident(obj))}, input position {i}) at {at}: changed "
            f"{', '.join(map(repr, changed))}; only a call's content may be edited.",
        )
    raise _fail(policy, _unmatched(item, at, pool, rendered, where))


def _unmatched(
    item: object,
    at: str,
    pool: Sequence[object],
    rendered: RenderedList,
    where: Sequence[tuple[int, int]],
) -> str:
    """Say what an unmatched item is: a rewrite of a call's message, or new."""
    noun = "message" if rendered.format is Provider.OPENAI else "content block"
    ident = _call_ident(item)
    for j, obj in enumerate(pool):
        if ident and _call_ident(obj) == ident:
            i, k = where[j]
            owner = rendered.owners[i][k]
            changed = sorted(
                key for key in {*_keys(item), *_keys(obj)} if _get(item, key) != _get(obj, key)
            )
            return (
                f"rewrote the {noun} of {owner} (call {', '.join(ident)}, input position "
                f"{i}) at {at}: changed {', '.join(map(repr, changed))}."
            )
    return (
        f"returned a {noun} that was not in its input at {at} ({_short(item)}): "
        "it is neither one of the objects it was given nor equal to one (was it added or "
        "rewritten?)."
    )


def _keys(obj: object) -> list[str]:
    return [str(k) for k in obj] if isinstance(obj, dict) else []


def _get(obj: object, key: str) -> object:
    return obj.get(key) if isinstance(obj, dict) else None


def _call_ident(obj: object) -> tuple[str, ...]:
    """The call ids that identify a message or block, if any."""
    if not isinstance(obj, dict):
        return ()
    for key in ("tool_call_id", "tool_use_id"):
        if isinstance(obj.get(key), str):
            return (obj[key],)
    if obj.get("type") == "tool_use" and isinstance(obj.get("id"), str):
        return (obj["id"],)
    calls = obj.get("tool_calls")
    if isinstance(calls, list) and calls:
        return tuple(str(c.get("id")) for c in calls if isinstance(c, dict))
    return ()


def _check_order(
    policy: ListFunctionShape, flat: list[tuple[int, int]], rendered: RenderedList
) -> None:
    seen: dict[tuple[int, int], int] = {}
    for at, pos in enumerate(flat):
        if pos in seen:
            owner = rendered.owners[pos[0]][pos[1]]
            raise _fail(
                policy,
                f"returned {owner} (input position {pos[0]}) twice, at output "
                f"positions {seen[pos]} and {at}.",
            )
        seen[pos] = at
    for a, b in pairwise(flat):
        if b < a:
            first, second = rendered.owners[b[0]][b[1]], rendered.owners[a[0]][a[1]]
            raise _fail(
                policy,
                f"reordered messages {first} and {second}: its output puts "
                f"{second} (input position {a[0]}) before {first} (input position "
                f"{b[0]}).",
            )
