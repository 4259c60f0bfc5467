"""The policy API and the built-in policies.

A policy is a callable ``select(view, need)`` or an object with a
``select(view, need)`` method (and an optional ``name``).  ``view`` is a
read-only :class:`ContextView`; ``need`` is how many tokens the runtime asks
to free.  ``select`` returns message ids to evict, or typed actions
(:class:`~.actions.Evict`, :class:`~.actions.Clear`,
:class:`~.actions.Summarize`).

The built-ins are the heuristics runtimes use today.  All but
``unit_safe`` ignore structure, as the domain document warns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Protocol, overload, runtime_checkable

from .actions import Action, Clear, Summarize
from .context import Context, Message, Role

__all__ = [
    "BUILTINS",
    "ContextView",
    "FunctionPolicy",
    "Policy",
    "SelectFn",
    "as_policy",
    "builtin_policy",
    "policy_name",
    "salience",
]

SelectFn = Callable[["ContextView", int], Iterable[str | Action]]


@runtime_checkable
class Policy(Protocol):
    """What the runtime calls.

    Attributes
    ----------
    name : str
        How reports, narratives and errors name the policy.  It is set once,
        where the policy is made (:func:`as_policy`, a built-in, an adapter,
        the loader), so everything downstream reads ``policy.name``.
    """

    @property
    def name(self) -> str: ...

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]: ...


class _Messages(Sequence[Message]):
    """The context's messages in order, read-only and lazy: iterating from
    the front costs only what is read; indexing materializes once."""

    __slots__ = ("_ctx", "_list")

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._list: list[Message] | None = None

    def __len__(self) -> int:
        return len(self._ctx)

    def __iter__(self) -> Iterator[Message]:
        if self._list is not None:
            return iter(self._list)
        return iter(self._ctx)

    def __reversed__(self) -> Iterator[Message]:
        if self._list is not None:
            return reversed(self._list)
        return reversed(self._ctx)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if self._list is None:
            self._list = list(self._ctx)
        if isinstance(index, slice):
            return tuple(self._list[index])
        return self._list[index]

    def __repr__(self) -> str:
        return f"<{len(self)} messages>"


class ContextView:
    """What a policy sees.  Read-only: messages are frozen records.

    Attributes
    ----------
    messages: the messages in context order.
    pending_calls: calls whose result is not complete (streaming included).
    budget: the working budget in tokens.
    used: tokens in the context now.
    now: the current time.
    turn: the current agent turn.
    """

    __slots__ = ("budget", "messages", "now", "pending_calls", "turn", "used")

    def __init__(
        self, ctx: Context, *, pending_calls: frozenset[str], budget: int, now: float, turn: int
    ) -> None:
        self.messages: Sequence[Message] = _Messages(ctx)
        self.pending_calls = pending_calls
        self.budget = budget
        self.used = ctx.used
        self.now = now
        self.turn = turn

    def __repr__(self) -> str:
        return (
            f"ContextView({len(self.messages)} messages, used={self.used}, "
            f"budget={self.budget}, pending={sorted(self.pending_calls)})"
        )


def _protected(m: Message) -> bool:
    return m.role is Role.SYSTEM


def _last_user(view: ContextView) -> str | None:
    for m in reversed(view.messages):
        if m.role is Role.USER and not m.is_summary:
            return m.id
    return None


def _take(ordered: Iterable[Message], need: int) -> list[str]:
    out, freed = [], 0
    for m in ordered:
        if freed >= need:
            break
        out.append(m.id)
        freed += m.tokens
    return out


def salience(m: Message, now: float, horizon: float = 20.0) -> float:
    """The domain document's salience score: recent, large, user-authored content scores
    high; old or short content (a small assistant call turn, a partial
    trailing message) scores low.  System messages are infinitely salient.

    >>> old_call = Message("m2", Role.ASSISTANT, 60, 1, 0.0, tool_calls=("c1",))
    >>> fresh_result = Message("m3", Role.TOOL, 900, 1, 9.0, call_id="c1")
    >>> salience(old_call, 10.0) < salience(fresh_result, 10.0)
    True
    """
    if m.role is Role.SYSTEM:
        return math.inf
    weight = {Role.USER: 1.5, Role.ASSISTANT: 1.0, Role.TOOL: 1.2}[m.role]
    size = m.tokens / (m.tokens + 200.0)
    age = max(0.0, now - m.created_at)
    return weight * size * math.exp(-age / horizon)


@dataclass(frozen=True, slots=True)
class Recency:
    """Evict the oldest messages (by creation time) first; keeps the system
    prompt and the latest user message."""

    name: str = "recency"

    def select(self, view: ContextView, need: int) -> list[str]:
        last = _last_user(view)
        candidates = sorted(
            (m for m in view.messages if not _protected(m) and m.id != last),
            key=lambda m: m.created_at,
        )
        return _take(candidates, need)


@dataclass(frozen=True, slots=True)
class LowestSalience:
    """Evict the lowest-salience messages first (the domain document's policy)."""

    name: str = "lowest_salience"

    def select(self, view: ContextView, need: int) -> list[str]:
        scored = sorted(
            (m for m in view.messages if not _protected(m)),
            key=lambda m: (salience(m, view.now), m.created_at),
        )
        return _take(scored, need)


@dataclass(frozen=True, slots=True)
class TurnWindow:
    """Evict every message more than two turns old (``turns``), whatever the need."""

    turns: int = 2
    name: str = "turn_window"

    def select(self, view: ContextView, need: int) -> list[str]:
        cutoff = view.turn - self.turns
        return [m.id for m in view.messages if not _protected(m) and m.turn < cutoff]


@dataclass(frozen=True, slots=True)
class TokenSpan:
    """Cut the needed tokens from the front of the context, after the system
    prompt, as a token-span trimmer does (a straddled message goes whole)."""

    name: str = "token_span"

    def select(self, view: ContextView, need: int) -> list[str]:
        return _take((m for m in view.messages if not _protected(m)), need)


_WORD = re.compile(r"[a-z0-9_./]+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class Similarity:
    """Evict what is least similar (word overlap) to the latest user message."""

    name: str = "similarity"

    def select(self, view: ContextView, need: int) -> list[str]:
        messages = list(view.messages)
        query = next((m for m in reversed(messages) if m.role is Role.USER), None)
        if query is None:
            return Recency().select(view, need)
        q = _words(query.text)

        def score(m: Message) -> float:
            w = _words(m.text)
            return len(q & w) / len(q | w) if (q or w) else 0.0

        ranked = sorted(
            (m for m in messages if not _protected(m) and m.id != query.id),
            key=lambda m: (score(m), m.created_at),
        )
        return _take(ranked, need)


@dataclass(frozen=True, slots=True)
class ClearOldResults:
    """Clear the content of the oldest tool results (as context-editing
    features do), ignoring whether they are still streaming."""

    name: str = "clear_old_results"

    def select(self, view: ContextView, need: int) -> list[Action]:
        out: list[Action] = []
        freed = 0
        for m in view.messages:
            if freed >= need:
                break
            if m.role is Role.TOOL and not m.cleared and m.tokens > 8:
                out.append(Clear(m.id))
                freed += m.tokens - 8
        return out


@dataclass(frozen=True, slots=True)
class SummarizePrefix:
    """Summarize the front of the context, cut by tokens, into one message."""

    name: str = "summarize_prefix"

    def select(self, view: ContextView, need: int) -> list[Action]:
        ids = _take((m for m in view.messages if not _protected(m)), need + need // 8)
        return [Summarize(tuple(ids))] if ids else []


@dataclass(frozen=True, slots=True)
class UnitSafe:
    """The correct policy: whole, closed, non-pending units only, oldest
    first; keeps the system prompt and the latest user message's unit."""

    name: str = "unit_safe"

    def select(self, view: ContextView, need: int) -> list[str]:
        last = _last_user(view)
        out: list[str] = []
        freed = 0
        # A unit's messages are contiguous in context order, so grouping
        # neighbours finds whole units, reading only as far as needed.
        for _, group in groupby(view.messages, key=lambda m: m.unit_id):
            if freed >= need:
                break
            members = list(group)
            if any(_protected(m) or m.id == last or not m.closed for m in members):
                continue
            if any(c in view.pending_calls for m in members for c in m.tool_calls):
                continue
            if any(m.call_id in view.pending_calls for m in members):
                continue
            out.extend(m.id for m in members)
            freed += sum(m.tokens for m in members)
        return out


@dataclass(frozen=True, slots=True)
class FunctionPolicy:
    """A plain ``select(view, need)`` function, wearing the Policy shape."""

    fn: SelectFn
    name: str

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        return self.fn(view, need)


def policy_name(obj: object, default: str) -> str:
    """The name ``obj`` gives itself: its ``name`` if that is a string, else
    its ``__name__`` (a function's), else ``default``.  The one rule by which
    a policy is named where it is made.

    Parameters
    ----------
    obj : object
        A policy object, a ``select`` function, or a list function.
    default : str
        The name when ``obj`` has none (typically the spec's attribute).

    Returns
    -------
    str
        The name.

    Examples
    --------
    >>> policy_name(FunctionPolicy(print, "mine"), "x"), policy_name(len, "x")
    ('mine', 'len')
    >>> policy_name(object(), "fallback")
    'fallback'
    """
    for attr in ("name", "__name__"):
        value = getattr(obj, attr, None)
        if isinstance(value, str):
            return value
    return default


def as_policy(obj: object, name: str) -> Policy:
    """``obj`` as a :class:`Policy`: an object with ``select`` and a string
    ``name`` is used as it is, an object with ``select`` but no name is
    wrapped under ``name``, a callable is wrapped under its own
    :func:`policy_name`.

    Parameters
    ----------
    obj : object
        A policy object (or its class, instantiated with no arguments), or a
        ``select(view, need)`` function.
    name : str
        The name when ``obj`` has none of its own.

    Returns
    -------
    Policy
        A policy whose ``name`` is set.

    Raises
    ------
    TypeError
        if ``obj`` is neither.
    """
    if isinstance(obj, type) and callable(getattr(obj, "select", None)):
        obj = obj()
    select = getattr(obj, "select", None)
    if callable(select):
        if isinstance(getattr(obj, "name", None), str):
            return obj  # type: ignore[return-value]
        return FunctionPolicy(select, name)
    if callable(obj):
        return FunctionPolicy(obj, policy_name(obj, name))
    raise TypeError(f"{obj!r} is neither callable nor has a select(view, need) method")


BUILTINS: dict[
    str,
    type[
        Recency
        | LowestSalience
        | TurnWindow
        | TokenSpan
        | Similarity
        | ClearOldResults
        | SummarizePrefix
        | UnitSafe
    ],
] = {
    "recency": Recency,
    "lowest_salience": LowestSalience,
    "turn_window": TurnWindow,
    "token_span": TokenSpan,
    "similarity": Similarity,
    "clear_old_results": ClearOldResults,
    "summarize_prefix": SummarizePrefix,
    "unit_safe": UnitSafe,
}


def builtin_policy(name: str) -> Policy | None:
    """The built-in policy called ``name``, or None."""
    factory = BUILTINS.get(name)
    return factory() if factory is not None else None
