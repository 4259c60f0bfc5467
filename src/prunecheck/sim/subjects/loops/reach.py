"""Did a schedule reach the user's code?  What it did to the history, and how large it grew.

A trimmer that never fires proves nothing: a loop whose history never grew
past the user's budget is not safe, it is untested.  :class:`Watch` is told
every request a loop sends (:meth:`Watch.see`, by the scheduler) and keeps,
for one schedule:

* **changed** — requests in which the user's code removed or rewrote
  something: a message the previous request of the same process held
  (nothing disrupted the loop in between: no cancel, crash or raising turn)
  is gone or no longer the same, a unit the loop was seen holding since the
  last disruption (the history it reopened with, what it handed the user's
  trimmer) is not sent, or a result is not the text its tool returned.
  Without trimming, a framework's history only grows between two requests,
  so anything missing or changed is the configured code's doing (a
  trimmer, a summarizer, a clearing edit, a processor);
* the **widest batch** the model double issued, and the **largest
  history** sent: its messages, characters (every message's text and every
  call's arguments) and tokens, counted by the framework's own counter
  where the adapter names one (:func:`count_tokens`), else
  :data:`CHARS_PER_TOKEN` characters a token, said so;
* the **repairs** the framework's repair layer made before a request, judged
  (:mod:`.repair`: what, honest or not, which providers would have rejected
  the unrepaired history), as figures (:func:`.repair.repair_figures`).

:func:`budget_of` reads the budget where the user's configuration states
it, in the framework's own trimmers (an adapter's optional ``budget``), or
where the user's module states it as a constant (:func:`module_budget`);
:mod:`.ladder` grows the schedules until the user's code changes the
history, aimed at that budget when it is known.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .judge import calls_and_results
from .ledger import BodyEnd, Ledger
from .repair import Repair, repair_figures

__all__ = [
    "CHARS_PER_TOKEN",
    "ESTIMATE",
    "TIME_UNITS",
    "UNKNOWN_UNIT",
    "Budget",
    "Watch",
    "attribute_budget",
    "budget_of",
    "code_budget",
    "count_tokens",
    "counter_name",
    "hook_budget",
    "largest_output",
    "module_budget",
    "text_size",
    "user_module",
]

#: Characters per token of a sized tool output and of an estimate: the rule
#: of thumb of the frameworks' approximate counters (LangChain's
#: ``count_tokens_approximately`` divides characters by 4).
CHARS_PER_TOKEN = 4

#: How a history's tokens are counted when the framework has no counter of its own.
ESTIMATE = f"estimated at {CHARS_PER_TOKEN} characters a token"

#: The unit of a budget whose unit nothing states (a constant ``KEEP = 3`` whose
#: code does not say what it counts).
UNKNOWN_UNIT = "unknown"

#: Units of a threshold in time (a trimmer keyed on a message's age: ``MAX_AGE_SECONDS``,
#: ``timedelta(hours=...)``), each in seconds: no count and no size of the history.
TIME_UNITS: Mapping[str, int] = {"seconds": 1, "minutes": 60, "hours": 3_600, "days": 86_400}


@dataclass(frozen=True, slots=True)
class Budget:
    """A budget the user's configuration states.

    Attributes
    ----------
    amount : int
        How much.
    unit : str
        ``"tokens"``, ``"characters"`` or ``"messages"`` (what a history is measured in);
        a count of something else the user's code counts, named from its code
        (``"outputs"`` for ``outputs[-KEEP:]``, ``"items"``: any name, so the JSON
        schema takes any non-empty string); a threshold in time
        (:data:`TIME_UNITS`: ``"seconds"`` …, against the age of the history's
        oldest message); or :data:`UNKNOWN_UNIT`.
    where : str
        What states it (``"TokenLimitedChatCompletionContext(token_limit=400)"``).
    per_output : bool
        A threshold on one tool output (a tool-output hook's: an ADK
        ``after_tool_callback``, an Agents SDK tool output guardrail), not on
        the history: the ladder grows outputs past it (:func:`hook_budget`).
    """

    amount: int
    unit: str
    where: str
    per_output: bool = False

    @property
    def tokens(self) -> int:
        """The budget in tokens (characters at :data:`CHARS_PER_TOKEN`; messages: 0)."""
        if self.unit == "tokens":
            return self.amount
        return self.amount // CHARS_PER_TOKEN if self.unit == "characters" else 0

    @property
    def counts(self) -> bool:
        """Whether it counts elements (messages, outputs, items), not sizes nor times."""
        return self.unit not in ("tokens", "characters", UNKNOWN_UNIT, *TIME_UNITS)

    @property
    def seconds(self) -> int | None:
        """The threshold in seconds, for a budget in time (None: not one)."""
        per = TIME_UNITS.get(self.unit)
        return None if per is None else self.amount * per

    def text(self) -> str:
        if self.unit == UNKNOWN_UNIT:
            return f"{self.amount:,} (unit unknown: {self.where})"
        return f"{self.amount:,} {self.unit} ({self.where})"


def text_size(messages: Sequence[Mapping[str, object]]) -> int:
    """Characters of a history: every message's text and every call's arguments."""
    total = 0
    for m in messages:
        content = m.get("content")
        total += len(content if isinstance(content, str) else json.dumps(content or ""))
        for c in m.get("tool_calls") or []:  # type: ignore[attr-defined]
            fn = c.get("function", {}) if isinstance(c, Mapping) else {}
            total += len(str(fn.get("name", ""))) + len(str(fn.get("arguments", "")))
    return total


def _keys(messages: Sequence[Mapping[str, object]]) -> Counter[tuple[str, ...]]:
    """Each message as a key: its role, text, call id and calls (hashing a
    string is cheap; serializing a large history per request is not)."""
    return Counter(
        (str(m.get("role")), str(m.get("content")), str(m.get("tool_call_id")),
         repr(m.get("tool_calls")))
        for m in messages
    )  # fmt: skip


@dataclass(slots=True)
class Watch:
    """One schedule's figures of reach (see the module's docs)."""

    requests: int = 0
    changed: int = 0
    faults: int = 0  # model_error steps: the summarizer's model call failed (injected)
    messages: int = 0
    chars: int = 0
    users: int = 0  # the most user messages in one request: what a budget in turns is against
    largest: list[Mapping[str, object]] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)  # the framework's repair layer's
    oldest: float = 0.0
    """Seconds from the schedule's first request to its last: the age, at the last
    request, of the oldest message any request sent (the larger of real time,
    which ``datetime.now()`` reads, and the loop's virtual clock)."""
    _first: tuple[float, float] | None = None
    _previous: Counter[tuple[str, ...]] | None = None
    _disruptions: int = -1

    def see(self, body: Mapping[str, object], ledger: Ledger, clock: float = 0.0) -> None:
        """A request the loop sent, after the judge read it (``clock``: the loop's
        virtual time then)."""
        now = (time.monotonic(), clock)
        if self._first is None:
            self._first = now
        self.oldest = max(self.oldest, now[0] - self._first[0], now[1] - self._first[1])
        raw = body.get("messages")
        messages = [m for m in raw if isinstance(m, Mapping)] if isinstance(raw, list) else []
        self.requests += 1
        size = text_size(messages)
        if size >= self.chars:
            self.chars, self.largest = size, messages
        self.messages = max(self.messages, len(messages))
        self.users = max(self.users, sum(1 for m in messages if m.get("role") == "user"))
        keys = _keys(messages)
        same_process = self._disruptions == ledger.disruptions
        lost = self._previous is not None and same_process and bool(self._previous - keys)
        if lost or _rewritten(body, ledger) or _dropped_held(body, ledger):
            self.changed += 1
        self._previous, self._disruptions = keys, ledger.disruptions

    def figures(self, ledger: Ledger, tokens: int) -> dict[str, int]:
        """This schedule's figures (``tokens``: of :attr:`largest`)."""
        widest = max((len(i.batch) for i in ledger.issued.values()), default=0)
        return {
            "changed": self.changed,
            "widest": widest,
            "messages": self.messages,
            "users": self.users,
            "chars": self.chars,
            "tokens": tokens,
            "model_failed": self.faults,
            "oldest_ms": int(self.oldest * 1000),
            **(repair_figures(self.repairs) if self.repairs else {}),
        }


def _dropped_held(body: Mapping[str, object], ledger: Ledger) -> bool:
    """A unit the loop was seen holding since the last disruption (in a
    request, in the history it reopened with after a crash, or in what it
    handed the user's trimmer) is not in this request at all: something on
    the history's path removed it (a trim after a crash, whose first request
    has no previous one in the same process to compare with)."""
    calls, results = calls_and_results(body)
    return any(
        seen == ledger.disruptions and cid not in calls and cid not in results
        for cid, seen in ledger.held.items()
    )


def _rewritten(body: Mapping[str, object], ledger: Ledger) -> bool:
    """A result sent that is not the text its tool returned (cleared, cut,
    summarized); or half of a pair gone since the last disruption: a call
    sent without the result its tool returned, a result without its call."""
    calls, results = calls_and_results(body)
    since = ledger.last_disruption
    for cid in calls.keys() ^ results.keys():
        done = ledger.executed(cid)
        if cid in ledger.issued and done is not None and done.ended > since:
            return True
    for cid, text in results.items():
        done = ledger.executed(cid)
        output = done.output if done is not None and done.end is BodyEnd.OK else None
        if output is not None and output not in text and json.dumps(output) not in text:
            return True
    return False


def largest_output(ledger: Ledger) -> int:
    """Characters of the longest output a tool body returned (what a
    threshold on one output, :attr:`Budget.per_output`, is against)."""
    return max((len(b.output) for b in ledger.bodies if b.end is BodyEnd.OK), default=0)


def count_tokens(adapter: object, messages: Sequence[Mapping[str, object]]) -> tuple[int, str]:
    """Tokens of a history and how they were counted: the adapter's
    ``count_tokens`` (the framework's own counter) where it has one,
    else :data:`CHARS_PER_TOKEN` characters a token."""
    counter = getattr(adapter, "count_tokens", None)
    name = getattr(adapter, "token_counter", "")
    if counter is not None and name:
        try:
            return int(counter(list(messages))), str(name)
        except Exception:  # a history the counter cannot read: the estimate, said so
            pass
    return text_size(messages) // CHARS_PER_TOKEN, ESTIMATE


def counter_name(adapter: object) -> str:
    """How :func:`count_tokens` counts for ``adapter``."""
    name = getattr(adapter, "token_counter", "")
    return str(name) if name and getattr(adapter, "count_tokens", None) else ESTIMATE


def budget_of(adapter: object, target: object) -> Budget | None:
    """The budget the user's configuration states in the framework's own
    trimmers (the adapter's ``budget``), else a budget the user's module
    states as a constant (:func:`module_budget`), or None: unknown."""
    read = getattr(adapter, "budget", None)
    found: Any = None
    if read is not None:
        try:
            found = read(target)
        except Exception:  # a configuration the adapter cannot read: unknown
            found = None
    return found if isinstance(found, Budget) else module_budget(target)


#: A module constant's name → the unit its name states: the first pattern that
#: matches wins (``MAX_TOKENS``, ``CONTEXT_TOKENS``, ``MAX_CHARS``,
#: ``MAX_MESSAGES``, ``MAX_ITEMS``, a threshold in time: ``MAX_AGE_SECONDS``,
#: ``TTL_MINUTES`` …); a name that only says it is a budget (``KEEP_LAST``,
#: ``HISTORY_LIMIT``, ``WINDOW``, ``MAX_AGE``) states no unit (None).
_CONSTANT_UNITS: tuple[tuple[re.Pattern[str], str | None], ...] = (
    (re.compile(r"TOKEN"), "tokens"),
    (re.compile(r"CHAR"), "characters"),
    (re.compile(r"MESSAGE|MSGS"), "messages"),
    (re.compile(r"ITEM"), "items"),
    (re.compile(r"TURN"), "turns"),
    (re.compile(r"SECOND|SECS\b|TTL"), "seconds"),
    (re.compile(r"MINUTE|MINS\b"), "minutes"),
    (re.compile(r"HOUR"), "hours"),
    (re.compile(r"(^|_)DAYS?(_|$)"), "days"),
    (re.compile(r"KEEP|HISTORY|WINDOW|(^|_)AGE(_|$)"), None),
)


def user_module(target: object) -> ModuleType | None:
    """The module the user's agent was loaded from: a factory's or class's own
    module, else the user file (imported by prunecheck) that holds ``target``."""
    import inspect

    if inspect.isfunction(target) or inspect.isclass(target) or inspect.ismethod(target):
        found = inspect.getmodule(target)
        if found is not None and not found.__name__.startswith(_FRAMEWORK_PREFIXES):
            return found
    users = [m for n, m in list(sys.modules.items()) if n.startswith("prunecheck_user_") and m]
    return next((m for m in users if any(v is target for v in vars(m).values())), None)


#: Packages whose modules are no user's (a framework's factory, prunecheck's own).
_FRAMEWORK_PREFIXES = (
    "prunecheck.", "pydantic_ai", "agents", "langchain", "langgraph", "autogen", "strands",
    "agent_framework", "google.adk", "llama_index",
)  # fmt: skip


def module_budget(target: object) -> Budget | None:
    """A budget the user's module states as an upper-case module constant
    (``CONTEXT_TOKENS = 6_000``, ``MAX_CHARS = 20_000``, ``KEEP_OUTPUTS = 3``):
    the first positive integer whose name says it is a budget
    (:data:`_CONSTANT_UNITS`), in the module's order; None if none.

    Its unit is what the module's code counts it in
    (:func:`.constant_units.usage_unit`: ``outputs[:-KEEP_OUTPUTS]`` keeps 3
    outputs, ``_tokens(messages) <= TOKEN_BUDGET`` counts tokens), else what
    its name states, else :data:`UNKNOWN_UNIT`, said so: never a unit nothing
    states.  It only aims the ladder's sizes; the figures quote it
    ("module constant NAME")."""
    from .constant_units import usage_unit

    module = user_module(target)
    if module is None:
        return None
    for name, value in list(vars(module).items()):
        if not name.isupper() or not _positive_int(value):
            continue
        said = _named_budget(name)
        if said is None:
            continue
        named = said[0]
        used = usage_unit(module, name)
        unit = used or named or UNKNOWN_UNIT
        how = ("its code counts it" if used else "its name says" if named
               else "neither its name nor its code says what it counts")  # fmt: skip
        return Budget(value, unit, f"module constant {name} = {value:,}; {how}")
    return None


def hook_budget(hook: object, what: str) -> Budget | None:
    """The threshold a tool-output hook's own code reads as a module constant
    (``MAX_TOOL_RESPONSE_CHARS = 6_000`` in ``if len(text) <= MAX_TOOL_RESPONSE_CHARS``),
    as a :attr:`Budget.per_output` threshold (:func:`code_budget`); None if it
    reads none.  ``hook`` is a function, a bound method, a ``functools.partial``,
    an object holding one (``guardrail_function``, ``func``) or a callable
    object; ``what`` says what the hook is ("after_tool_callback")."""
    return code_budget(hook, what, per_output=True)


def code_budget(hook: object, what: str, *, per_output: bool = False) -> Budget | None:
    """The budget the user's own code reads as a module constant: the first
    upper-case name the function behind ``hook`` (nested functions too) reads
    whose value is a positive integer and whose name says it is a budget
    (:data:`_CONSTANT_UNITS`), in the unit its module's code counts it in, else
    the one its name states; None if it reads none.  A memory class's own
    ``aget`` that keeps the last ``MAX_USER_TURNS`` user turns: 200 turns."""
    from .constant_units import usage_unit

    function = _function_of(hook)
    code = getattr(function, "__code__", None)
    scope = getattr(function, "__globals__", None)
    if code is None or not isinstance(scope, dict):
        return None
    names: list[str] = []
    todo = [code]
    while todo:
        current = todo.pop(0)
        names += [n for n in current.co_names if n not in names]
        todo += [c for c in current.co_consts if hasattr(c, "co_names")]
    module = sys.modules.get(str(getattr(function, "__module__", "")))
    for name in names:
        value = scope.get(name)
        said = _named_budget(name) if name.isupper() and _positive_int(value) else None
        if said is None or not isinstance(value, int):
            continue
        used = usage_unit(module, name) if module is not None else None
        unit = used or said[0] or UNKNOWN_UNIT
        how = ("its code counts it" if used else "its name says" if said[0]
               else "neither its name nor its code says what it counts")  # fmt: skip
        label = getattr(function, "__qualname__", what)
        one = ", on one tool output" if per_output else ""
        return Budget(value, unit, f"module constant {name} = {value:,}, read by the {what} "
                      f"{label}{one}; {how}", per_output=per_output)  # fmt: skip
    return None


def _function_of(hook: object) -> object:
    """The plain function behind a hook (unwrapped; a callable object's ``__call__``)."""
    import functools
    import inspect

    found: Any = hook
    for _ in range(8):  # a few layers of wrapping at most
        if isinstance(found, functools.partial):
            found = found.func
        elif inspect.ismethod(found):
            found = found.__func__
        elif inspect.isfunction(found):
            return inspect.unwrap(found)
        elif callable(getattr(found, "guardrail_function", None)):  # the Agents SDK's guardrail
            found = found.guardrail_function
        elif callable(getattr(found, "func", None)):
            found = found.func
        elif callable(found):
            found = type(found).__call__
        else:
            break
    return found


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _named_budget(name: str) -> tuple[str | None] | None:
    """Whether an upper-case ``name`` says it is a budget (None: it does not),
    and the unit it states, if any (:data:`_CONSTANT_UNITS`: the first match)."""
    return next(((named,) for pattern, named in _CONSTANT_UNITS if pattern.search(name)), None)


def attribute_budget(holder: object) -> Budget | None:
    """A budget a user's object holds as an integer attribute whose name says
    it is one (``self.max_chars = 16_000`` of a custom model context: the
    patterns of :data:`_CONSTANT_UNITS` on the name upper-cased), in the
    object's order; None if none (or the object has no attributes of its own).
    Its unit is what the name states, else :data:`UNKNOWN_UNIT`, said so."""
    try:
        owned = list(vars(holder).items())
    except TypeError:  # no __dict__ (slots, builtins)
        return None
    for name, value in owned:
        said = _named_budget(name.strip("_").upper()) if _positive_int(value) else None
        if said is None:
            continue
        named = said[0]
        where = f"{type(holder).__name__}.{name} = {value:,}"
        how = "its name says" if named else "its name does not say what it counts"
        return Budget(value, named or UNKNOWN_UNIT, f"{where}; {how}")
    return None
