"""List-function adapters: check a user's ``trim(messages) -> messages`` as it is.

Real runtimes trim a provider message list, not our :class:`ContextView`.
:class:`ListPolicy` makes such a function a :class:`Policy`: at each budget
check it renders the context in the function's format (OpenAI Chat
Completions dicts or Anthropic Messages dicts), calls the function, and maps
what it kept back to message ids; the ids it did not keep are evicted.

How kept items map back to message ids
---------------------------------------
* **OpenAI**: one dict per message of the context (system included), so a
  returned dict *is* a message.
* **Anthropic**: the system prompt is the request's top-level ``system`` and
  is not passed (it is always kept).  Consecutive messages of one role merge
  into one provider message, as Anthropic requires, so one dict may carry
  blocks of several of our messages.  Blocks are what is mapped: a message
  is kept iff every block that carries its identity is returned — its
  ``tool_use`` blocks for an assistant message that issued calls (its text
  block may go), its ``tool_result`` block for a result, its text block
  otherwise.  Returning a message dict keeps all its blocks.
* A returned item is matched to an input item first by identity (the same
  object), then by equality (a copy).  Among equal items (two identical
  plain messages) the *later* one is assumed kept, as trimmers drop from the
  front.  Anything else is a verdict, not a crash: a :class:`PolicyError`
  naming the policy and the step says what the function did (returned an
  item that was not in its input, rewrote the message of a call, reordered
  messages, returned one twice, returned something that is not a list of
  dicts, or mutated the list it was given).

How the budget reaches a list function
--------------------------------------
The function is called with the message list only, unless its signature
names ``max_tokens`` or ``token_counter`` (or takes ``**kwargs``):
``max_tokens`` is the size the runtime wants the context to fit (tokens in
context minus the tokens it asks to free), ``token_counter`` counts our
model's tokens of a message dict, a block, or a list of them.

Spec forms (accepted wherever a policy spec is, e.g. in a trace):
``path/to/trim.py:trim@openai``, ``mypkg.trim:trim@anthropic`` and a
framework trimmer ``ADAPTER:key=value,...`` such as
``langchain:strategy=last,start_on=human`` or ``autogen:context=buffered``
(see :mod:`.frameworks`).

Summaries and edits
-------------------
A function may also put a summary or a placeholder where it removed
messages, and shorten or clear the content of a kept message (a tool
result, or the text of a message that issued calls, identified by its call
ids).  :mod:`.frameworks.readback` reads these as ``Summarize`` and
(partial) ``Clear`` actions, judged like a built-in policy's; only an item
that stands in place of nothing removed, or that rewrites a call itself,
is refused.

Sizes
-----
Every rendered message carries text of its declared size, 4 characters per
token (:mod:`.frameworks.content`), so a function or library that counts
tokens itself sees the size prunecheck declares.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.context import Message, Role
from prunecheck.model.engine import PLACEHOLDER_TOKENS
from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import ContextView, Policy
from prunecheck.model.provider import Provider, render
from prunecheck.sim.adapters.frameworks.content import CHARS_PER_TOKEN, approx_tokens, sized_text
from prunecheck.sim.adapters.frameworks.readback import Item, ItemKind, read_back

__all__ = [
    "FORMATS",
    "ListFunction",
    "ListPolicy",
    "RenderedList",
    "adapter_policy",
    "list_policy",
    "list_spec",
    "render_list",
]

#: The message formats a list function may take.
FORMATS = tuple(p.value for p in Provider)

ListFunction = Callable[..., Any]
_Block = dict[str, Any]


@dataclass(frozen=True, slots=True)
class RenderedList:
    """A context rendered as a provider message list, with provenance.

    Attributes
    ----------
    messages: the provider message dicts, as the function receives them.
    owners: per provider message, per part (the whole message for OpenAI,
        each content block for Anthropic), the id of the message it came from.
    keys: the ``(message index, part index)`` pairs that carry each
        message's identity (see the module notes).
    tokens: our model's tokens per part (a message's tokens sit on its first
        key part).
    hidden: ids of messages not passed to the function (Anthropic's system).
    """

    messages: list[dict[str, Any]]
    owners: tuple[tuple[str, ...], ...]
    keys: dict[str, tuple[tuple[int, int], ...]]
    tokens: dict[tuple[int, int], int]
    format: Provider = Provider.OPENAI
    hidden: frozenset[str] = frozenset()


def render_list(messages: Iterable[Message], fmt: Provider | str) -> RenderedList:
    """Render messages as the list a ``fmt`` list function receives.

    The OpenAI list equals ``render(messages, openai)["messages"]`` and the
    Anthropic list equals ``render(messages, anthropic)["messages"]``.  O(n).
    """
    fmt = Provider(fmt)
    given = list(messages)
    tools = _tools(given)
    ordered = [_sized(m, tuple(tools.get(c, ("read_file", f"{c}.txt")) for c in m.tool_calls))
               for m in given]
    if fmt is Provider.OPENAI:
        body = render(ordered, Provider.OPENAI, tools=tools)["messages"]
        assert isinstance(body, list)
        keys: dict[str, tuple[tuple[int, int], ...]] = {
            m.id: ((i, 0),) for i, m in enumerate(ordered)}
        tokens = {(i, 0): m.tokens for i, m in enumerate(ordered)}
        return RenderedList(body, tuple((m.id,) for m in ordered), keys, tokens, fmt)
    return _render_anthropic(ordered, tools)


@lru_cache(maxsize=1 << 16)
def _sized(m: Message, calls: tuple[tuple[str, str], ...]) -> Message:
    """``m`` with text of its declared size (see :mod:`.frameworks.content`):
    the calls' names and JSON arguments (``calls``: name and path per call),
    and a summary's prefix, count towards it.  A cleared message keeps its
    placeholder (and, if only partly cleared, what is left of its size).
    Cached per message record: a budget check re-renders only what changed."""
    head = "[cleared]" if m.cleared else m.text
    chars = 0
    for name, path in calls:
        chars += len(name) + len(json.dumps({"path": path}))
    if m.summary_of:
        chars += len(f"[summary of {len(m.summary_of)} messages] ")
    tokens = max(0, m.tokens - chars // CHARS_PER_TOKEN)
    if m.cleared and m.tokens <= PLACEHOLDER_TOKENS:
        tokens = 0
    text = sized_text(m.id, tokens, head)
    return replace(m, text=text, cleared=False) if text != m.text or m.cleared else m


_CALL_TEXT = re.compile(r"^\s*([\w.-]+)\((.*)\)\s*$")


def _tools(ordered: list[Message]) -> dict[str, tuple[str, str]]:
    """Tool name and path per call, read back from a batch message's text
    (``read_file(a.txt); grep(src)``, as the runtime writes it)."""
    tools: dict[str, tuple[str, str]] = {}
    for m in ordered:
        if not m.tool_calls:
            continue
        parts = [_CALL_TEXT.match(p) for p in m.text.split(";")]
        if len(parts) == len(m.tool_calls) and all(parts):
            for cid, match in zip(m.tool_calls, parts, strict=True):
                assert match is not None
                tools[cid] = (match.group(1), match.group(2))
    return tools


def _render_anthropic(ordered: list[Message], tools: dict[str, tuple[str, str]]
                      ) -> RenderedList:
    turns: list[tuple[str, list[tuple[_Block, str, bool]]]] = []
    hidden: list[str] = []
    for m in ordered:
        if m.role is Role.SYSTEM and not m.summary_of:
            hidden.append(m.id)
            continue
        body = render([m], Provider.ANTHROPIC, tools=tools)["messages"]
        assert isinstance(body, list) and len(body) == 1
        single: dict[str, Any] = body[0]
        content = single["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        has_use = any(b["type"] == "tool_use" for b in blocks)
        parts = [(b, m.id, b["type"] == "tool_use" or not has_use) for b in blocks]
        role = single["role"]
        if not turns or turns[-1][0] != role:
            turns.append((role, parts))
            continue
        merged = turns[-1][1]  # same rule as provider.render: tool results first
        at = sum(1 for p in merged if p[0]["type"] == "tool_result")
        merged[at:at] = [p for p in parts if p[0]["type"] == "tool_result"]
        merged.extend(p for p in parts if p[0]["type"] != "tool_result")
    out: list[dict[str, Any]] = []
    owners: list[tuple[str, ...]] = []
    keys: dict[str, list[tuple[int, int]]] = {}
    tokens: dict[tuple[int, int], int] = {}
    size = {m.id: m.tokens for m in ordered}
    for i, (role, parts) in enumerate(turns):
        blocks = [p[0] for p in parts]
        one_text = len(blocks) == 1 and blocks[0]["type"] == "text"
        out.append({"role": role, "content": blocks[0]["text"] if one_text else blocks})
        owners.append(tuple(p[1] for p in parts))
        for k, (_, owner, is_key) in enumerate(parts):
            if is_key:
                if owner not in keys:
                    tokens[(i, k)] = size[owner]
                keys.setdefault(owner, []).append((i, k))
    return RenderedList(out, tuple(owners), {k: tuple(v) for k, v in keys.items()}, tokens,
                        Provider.ANTHROPIC, frozenset(hidden))


@dataclass(frozen=True, slots=True)
class ListPolicy:
    """A ``trim(messages) -> messages`` function, wearing the Policy shape.

    Parameters
    ----------
    fn: the user's function.
    format: the message format it takes.
    name: how reports and errors name it (a spec, ideally).
    """

    fn: ListFunction
    format: Provider
    name: str
    _wants: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def select(self, view: ContextView, need: int) -> list[str | Action]:
        rendered = render_list(view.messages, self.format)
        given = rendered.messages
        snapshot = copy.deepcopy(given)
        kwargs: dict[str, Any] = {}
        if "max_tokens" in self._wants:
            kwargs["max_tokens"] = max(0, view.used - need)
        if "token_counter" in self._wants:
            kwargs["token_counter"] = _Counter(rendered)
        result = self.fn(given, **kwargs)
        _check_not_mutated(self, given, snapshot, rendered)
        return _read(self, result, rendered, [m.id for m in view.messages])


def list_policy(fn: object, format: Provider | str = "openai", *,
                name: str | None = None) -> ListPolicy:
    """``fn`` (a ``trim(messages) -> messages`` function) as a policy.

    Raises
    ------
    PolicyError
        if ``fn`` is not callable or ``format`` is unknown.
    """
    label = name or list_spec(fn, format)
    if not callable(fn):
        raise PolicyError(f"list function {label!r}", f"is a {type(fn).__name__}, not a "
                          "function.", "pass a function trim(messages) -> messages.")
    if str(format) not in FORMATS:
        raise PolicyError(f"list function {label!r}", f"format {format!r} is unknown.",
                          f"use one of: {', '.join(FORMATS)}.")
    return ListPolicy(fn, Provider(format), label, _keywords(fn))


def list_spec(fn: object, format: Provider | str) -> str:
    """The spec naming a list function: ``module:qualname@format``."""
    module = getattr(fn, "__module__", None) or "<unknown>"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return f"{module}:{qualname or type(fn).__name__}@{Provider(format).value}"


def _keywords(fn: ListFunction) -> frozenset[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    names = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        names |= {"max_tokens", "token_counter"}
    return frozenset(names & {"max_tokens", "token_counter"})


def adapter_policy(spec: str) -> Policy | None:
    """The policy of an adapter spec (``file.py:trim@openai``,
    ``mod:trim@anthropic``, a framework's ``ADAPTER:k=v,...`` — see
    :mod:`.frameworks`), or None if ``spec`` is not one.
    :func:`prunecheck.sim.adapters.loader.load_policy` asks this first."""
    from prunecheck.sim.adapters.frameworks import framework_policy, is_framework_spec

    if is_framework_spec(spec):  # autogen:context=buffered, langchain:strategy=last, ...
        policy: ListPolicy = framework_policy(spec)
        return policy
    head, colon, attr = spec.rpartition(":")
    if not colon or "@" not in attr:
        return None
    attr, _, fmt = attr.partition("@")
    if fmt not in FORMATS:
        raise PolicyError(f"policy spec {spec!r}", f"list format {fmt!r} is unknown.",
                          f"end the spec with @{' or @'.join(FORMATS)}.")
    from prunecheck.sim.adapters.loader import resolve_attribute

    fn, _ = resolve_attribute(f"{head}:{attr}")
    if isinstance(fn, type) or hasattr(fn, "select") or not callable(fn):
        raise PolicyError(f"policy spec {spec!r}", f"{attr} is a select(view, need) policy "
                          "object, not a list function trim(messages).",
                          f"drop the @{fmt} suffix to check it as a policy.")
    return list_policy(fn, fmt, name=spec)


# ------------------------------------------------------------------ counting
class _Counter:
    """Our model's tokens for a message dict, a block, or a list of them."""

    __slots__ = ("_by_id", "_parts")

    def __init__(self, rendered: RenderedList) -> None:
        self._by_id: dict[int, int] = {}
        self._parts: list[tuple[object, int]] = []
        for i, message in enumerate(rendered.messages):
            total = 0
            if rendered.format is Provider.ANTHROPIC:
                for k, block in enumerate(_blocks(message)):
                    size = rendered.tokens.get((i, k), 0)
                    total += size
                    self._parts.append((block, size))
                    self._by_id[id(block)] = size
            else:
                total = rendered.tokens.get((i, 0), 0)
            self._by_id[id(message)] = total
            self._parts.append((message, total))

    def __call__(self, item: object) -> int:
        if isinstance(item, list | tuple):
            return sum(self(x) for x in item)
        found = self._by_id.get(id(item))
        if found is not None:
            return found
        for part, size in self._parts:
            if part == item:
                return size
        if isinstance(item, dict) and isinstance(item.get("content"), list):
            return sum(self(b) for b in item["content"])
        return max(1, len(repr(item)) // 4)


# ------------------------------------------------------------------ matching
_HINT = ("return the messages it keeps, in their order (the same dicts or equal copies); "
         "a summary or placeholder may stand where removed messages were, and a kept "
         "message's content may be shortened; prunecheck judges all of these.")


def _fail(policy: ListPolicy, rule: str, hint: str = _HINT) -> PolicyError:
    return PolicyError(f"policy {policy.name!r}", rule, hint)


def _short(obj: object, limit: int = 80) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _blocks(message: dict[str, Any]) -> list[Any]:
    """An Anthropic message's content blocks (a string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def _check_not_mutated(policy: ListPolicy, given: list[dict[str, Any]],
                       snapshot: list[dict[str, Any]], rendered: RenderedList) -> None:
    if given == snapshot:
        return
    if len(given) != len(snapshot):
        what = (f"the list it was given now has {len(given)} messages instead of "
                f"{len(snapshot)} (it removed or added messages in place)")
    else:
        i = next(i for i, (a, b) in enumerate(zip(given, snapshot, strict=True)) if a != b)
        ids = ", ".join(dict.fromkeys(rendered.owners[i]))
        what = f"it changed the message at position {i} ({ids}) in place"
    raise _fail(policy, f"mutated its input: {what}.",
                "copy before editing (e.g. return messages[-k:] or a new list); a trimmer "
                "that edits the runtime's own list corrupts it whatever it returns.")


def _read(policy: ListPolicy, result: object, rendered: RenderedList,
          order: Sequence[str]) -> list[str | Action]:
    """What ``result`` means, as evicted ids and actions (see
    :mod:`.frameworks.readback`); PolicyError if it cannot be mapped back."""
    if not isinstance(result, list | tuple):
        raise _fail(policy, f"returned {type(result).__name__} ({_short(result)}), not a list "
                    "of message dicts.")
    for i, item in enumerate(result):
        if not isinstance(item, dict):
            raise _fail(policy, f"returned a {type(item).__name__} at position {i} "
                        f"({_short(item)}), not a message dict.")
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
            for k, block in enumerate(_blocks(message)):
                pool.append(block)
                where.append((i, k))
        whole = {id(m): i for i, m in enumerate(given)}
        items, fixed, roles, labels = [], [], [], []
        for at, message in enumerate(result):
            index = whole.get(id(message))
            blocks = _blocks(message)
            if index is not None:
                blocks = _blocks(given[index])
            for k, block in enumerate(blocks):
                items.append(block)
                fixed.append(None if index is None else start[index] + k)
                roles.append(message.get("role"))
                labels.append(f"output message {at}, block {k}")
    matched = _match(policy, items, fixed, pool, rendered, where, labels)
    out: list[Item] = []
    for at, (kind, p) in enumerate(matched):
        if p is None:
            out.append(Item(kind, None, _item_tokens(items[at]), labels[at],
                            _item_text(items[at])))
            continue
        i = where[p][0]
        if given[i].get("role") != roles[at]:
            raise _fail(policy, f"returned the content of {rendered.owners[i][where[p][1]]} "
                        f"(a {given[i].get('role')} message) as a {roles[at]} message.")
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


def _match(policy: ListPolicy, items: Sequence[object], fixed: Sequence[int | None],
           pool: Sequence[object], rendered: RenderedList,
           where: Sequence[tuple[int, int]], labels: Sequence[str]
           ) -> list[tuple[ItemKind, int | None]]:
    """Pool positions of ``items``: fixed, else by identity, else by equality
    (the later equal one first, as trimmers drop from the front), else — for
    an item naming a call of the input — an edit of that item, else new.
    Raises for an item that rewrites a call itself."""
    by_id = {id(obj): j for j, obj in enumerate(pool)}
    out: list[int | None] = [f if f is not None else by_id.get(id(obj))
                             for f, obj in zip(fixed, items, strict=True)]
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


def _edit_of(policy: ListPolicy, item: object, at: str, pool: Sequence[object],
             rendered: RenderedList, where: Sequence[tuple[int, int]]) -> int | None:
    """The pool position ``item`` edits (same call ids, only its content
    changed), None if it names no call (a new item); raises if it rewrites
    more than the content of a call's message."""
    ident = _call_ident(item)
    if not ident:
        return None
    for j, obj in enumerate(pool):
        same_kind = _get(obj, "role") == _get(item, "role") and \
            _get(obj, "type") == _get(item, "type")
        if not same_kind or not set(_call_ident(obj)) & set(ident):
            continue
        i, k = where[j]
        changed = sorted(key for key in {*_keys(item), *_keys(obj)}
                         if _get(item, key) != _get(obj, key))
        if _call_ident(obj) == ident and set(changed) <= _CONTENT_KEYS:
            return j
        noun = "message" if rendered.format is Provider.OPENAI else "content block"
        raise _fail(policy, f"rewrote the {noun} of {rendered.owners[i][k]} (call "
                    f"{', '.join(_call_ident(obj))}, input position {i}) at {at}: changed "
                    f"{', '.join(map(repr, changed))}; only a call's content may be edited.")
    raise _fail(policy, _unmatched(item, at, pool, rendered, where))


def _unmatched(item: object, at: str, pool: Sequence[object], rendered: RenderedList,
               where: Sequence[tuple[int, int]]) -> str:
    """Say what an unmatched item is: a rewrite of a call's message, or new."""
    noun = "message" if rendered.format is Provider.OPENAI else "content block"
    ident = _call_ident(item)
    for j, obj in enumerate(pool):
        if ident and _call_ident(obj) == ident:
            i, k = where[j]
            owner = rendered.owners[i][k]
            changed = sorted(key for key in {*_keys(item), *_keys(obj)}
                             if _get(item, key) != _get(obj, key))
            return (f"rewrote the {noun} of {owner} (call {', '.join(ident)}, input position "
                    f"{i}) at {at}: changed {', '.join(map(repr, changed))}.")
    return (f"returned a {noun} that was not in its input at {at} ({_short(item)}): "
            "it is neither one of the objects it was given nor equal to one (was it added or "
            "rewritten?).")


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


def _check_order(policy: ListPolicy, flat: list[tuple[int, int]],
                 rendered: RenderedList) -> None:
    seen: dict[tuple[int, int], int] = {}
    for at, pos in enumerate(flat):
        if pos in seen:
            owner = rendered.owners[pos[0]][pos[1]]
            raise _fail(policy, f"returned {owner} (input position {pos[0]}) twice, at output "
                        f"positions {seen[pos]} and {at}.")
        seen[pos] = at
    for a, b in pairwise(flat):
        if b < a:
            first, second = rendered.owners[b[0]][b[1]], rendered.owners[a[0]][a[1]]
            raise _fail(policy, f"reordered messages {first} and {second}: its output puts "
                        f"{second} (input position {a[0]}) before {first} (input position "
                        f"{b[0]}).")
