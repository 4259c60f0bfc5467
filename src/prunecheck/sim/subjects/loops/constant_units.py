"""The unit of a budget the user's module states as a constant, read from how its code uses it.

``KEEP_OUTPUTS = 3`` in ``outputs[:-KEEP_OUTPUTS]`` keeps 3 tool outputs, not 3
messages; ``MAX_REQUEST_CHARS`` in ``budget -= _chars(message)`` counts
characters; ``TOKEN_BUDGET`` in ``_tokens(messages) <= TOKEN_BUDGET`` tokens.
:func:`usage_unit` reads the module's source (``ast``, nothing run) and
looks at every place the constant is read:

* in a slice of a sequence (``items[-KEEP:]``): a count of that sequence's
  elements: ``messages`` when its name says messages (``messages``,
  ``history``, ``items``, ``contents``, ``events`` …), else its own name
  (``outputs``, ``responses``);
* beside a call (a comparison, an arithmetic, ``-=``): the called function's
  name says ``tokens`` or ``characters`` (``_tokens(...)``,
  ``count_tokens_approximately(...)``, ``_chars(...)``); ``len`` of a text
  (``json.dumps``, ``str``, a ``.content``, a variable named ``text``,
  ``content``, ``body`` …) counts characters, ``len`` of a sequence counts
  its elements, as in a slice;
* as a keyword of a call (``timedelta(seconds=MAX_AGE_SECONDS)``) naming a
  unit of time (``seconds``, ``minutes``, ``hours``, ``days``): that unit (a
  threshold in time, against a message's age); beside a clock's call
  (``time.time() - started > MAX_AGE``, ``.total_seconds()``): seconds.

One unit from every use: that unit; none, or uses that disagree: None (the
caller then falls back on the name, or says the unit is unknown).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from types import ModuleType

__all__ = ["usage_unit"]

#: A sequence whose name says so holds messages (a count of its elements is in messages).
_MESSAGE_LIKE = re.compile(
    r"(?i)^_?(messages?|msgs?|history|chat_history|conversation|items|contents|events|"
    r"turns|kept|recent|window|request|input|inputs)$"
)

#: A call whose function's name says what it counts.
_COUNTER_UNITS = ((re.compile(r"(?i)token"), "tokens"), (re.compile(r"(?i)char"), "characters"))

#: Keywords of a call that give a duration in their unit (``timedelta(hours=...)``).
_TIME_KEYWORDS = frozenset({"seconds", "minutes", "hours", "days"})

#: Calls whose result is seconds (a clock, a duration's ``total_seconds``).
_SECONDS_CALLS = frozenset({"time", "monotonic", "perf_counter", "total_seconds", "timestamp"})

#: Calls whose result is a text (``len`` of one counts characters).
_TEXT_CALLS = frozenset({"dumps", "str", "repr", "join", "format", "model_dump_json", "to_json"})

#: Attributes holding a message's text (``len(m.content)`` counts characters).
_TEXT_ATTRS = frozenset({"content", "text", "output", "args"})

#: Variables a text is usually held in (``len(text) > MAX_TOOL_CHARS`` and
#: ``text[:MAX_TOOL_CHARS]`` count characters, not the elements of a sequence named ``text``).
_TEXT_NAMES = _TEXT_ATTRS | {"body", "string", "payload", "summary", "s"}


def _name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # values["messages"]: the key names it
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value:
            return key.value
        return _name_of(node.value)
    return None


def _elements(sequence: ast.expr) -> str | None:
    """The unit of a count of ``sequence``'s elements."""
    name = _name_of(sequence)
    if name is None:
        return None
    if _MESSAGE_LIKE.match(name):
        return "messages"
    if isinstance(sequence, ast.Name) and name.strip("_").lower() in _TEXT_NAMES:
        return "characters"  # a text's elements: len(text), text[:N]
    return name.strip("_").replace("_", " ") or None


def _call_unit(call: ast.Call) -> str | None:
    """What ``call``'s result counts, if its function says."""
    name = _name_of(call.func) or ""
    if name == "len" and call.args:
        arg = call.args[0]
        if isinstance(arg, ast.Call) and (_name_of(arg.func) or "") in _TEXT_CALLS:
            return "characters"
        if isinstance(arg, ast.JoinedStr | ast.Constant):
            return "characters"
        if isinstance(arg, ast.Attribute) and arg.attr in _TEXT_ATTRS:
            return "characters"
        return _elements(arg)
    if name in _SECONDS_CALLS:
        return "seconds"
    for pattern, unit in _COUNTER_UNITS:
        if pattern.search(name):
            return unit
    return None


def _calls_in(node: ast.AST) -> Iterator[ast.Call]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            yield sub


def _uses(tree: ast.Module, name: str) -> list[str | None]:
    """The unit each read of ``name`` in ``tree`` says (None: that use says nothing)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    found: list[str | None] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        found.append(_use_unit(node, parents))
    return found


def _use_unit(node: ast.Name, parents: dict[int, ast.AST]) -> str | None:
    """The unit one read of a constant says: walking up its expression to the
    first slice (a count of the sliced sequence) or comparison or arithmetic
    beside a call that says what it counts."""
    child: ast.AST = node
    parent = parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg in _TIME_KEYWORDS:
        return parent.arg  # timedelta(seconds=MAX_AGE_SECONDS)
    while parent is not None and not isinstance(parent, ast.stmt):
        holder = parents.get(id(parent)) if isinstance(parent, ast.Slice) else parent
        if isinstance(holder, ast.Subscript) and (child is holder.slice or parent is holder.slice):
            return _elements(holder.value)
        if isinstance(parent, ast.Compare | ast.BinOp):
            units = {u for c in _calls_in(parent) if (u := _call_unit(c)) is not None}
            if units:
                return units.pop() if len(units) == 1 else None
        child, parent = parent, parents.get(id(parent))
    return None


def usage_unit(module: ModuleType, name: str) -> str | None:
    """The unit the code of ``module`` counts constant ``name`` in (see the
    module's docs), or None: no use says, or uses disagree."""
    path = getattr(module, "__file__", None)
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    units = {u for u in _uses(tree, name) if u is not None}
    return units.pop() if len(units) == 1 else None
