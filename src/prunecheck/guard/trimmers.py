"""Trimmers: what proposes a prune, in the shapes users have.

A :class:`Trimmer` turns the guard's view and a token need into a
:class:`~prunecheck.model.actions.Proposal`.  Three shapes plug in:

* a native policy, ``select(view, need)`` (function or object), as
  prunecheck checks them (:class:`PolicyTrimmer`);
* a message-list function ``trim(messages) -> messages`` over the runtime's
  message objects — OpenAI or Anthropic dicts, LangChain or AutoGen
  messages (:class:`ListTrimmer`); what it drops is the proposal.  This is
  the common denominator: a framework adapter plugs in as a list function.
  It is handed *copies*, so a function that edits the messages it is given
  (shortens a dict's content, say) cannot change the runtime's own objects;
  an edited copy matches no message and counts as dropped;
* anything with ``propose(view, need) -> Proposal``.

The guard then decides what of the proposal is safe; a trimmer never
touches the context itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from prunecheck.model.actions import Proposal, proposal_from
from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import ContextView, Policy, as_policy

from .tracker import Tracker

__all__ = ["ListTrimmer", "PolicyTrimmer", "TrimView", "Trimmer", "as_trimmer"]


class TrimView:
    """What a trimmer may read: the tracked context (``context_view()`` for
    native policies, ``payloads()`` for list functions) and the budget."""

    __slots__ = ("budget", "tracker")

    def __init__(self, tracker: Tracker, budget: int) -> None:
        self.tracker = tracker
        self.budget = budget

    def context_view(self) -> ContextView:
        t = self.tracker
        return ContextView(
            t.ctx,
            pending_calls=frozenset(t.pending),
            budget=self.budget,
            now=float(t.clock),
            turn=t.turn,
        )

    def payloads(self) -> tuple[list[object], list[tuple[str, ...]]]:
        """The runtime's message objects in context order (one object that
        carries several tracked messages, e.g. an Anthropic user message with
        several results, appears once) and the tracked ids behind each.  O(n)."""
        objects: list[object] = []
        ids: list[tuple[str, ...]] = []
        where: dict[int, int] = {}
        for message in self.tracker.ctx:
            payload = self.tracker.payloads.get(message.id)
            if payload is None:
                continue
            at = where.get(id(payload))
            if at is None:
                where[id(payload)] = len(objects)
                objects.append(payload)
                ids.append((message.id,))
            else:
                ids[at] = (*ids[at], message.id)
        return objects, ids


@runtime_checkable
class Trimmer(Protocol):
    """What the guard asks for a proposal."""

    @property
    def name(self) -> str: ...

    def propose(self, view: TrimView, need: int) -> Proposal: ...


@dataclass(frozen=True, slots=True)
class PolicyTrimmer:
    """A native ``select(view, need)`` policy."""

    policy: Policy

    @property
    def name(self) -> str:
        return self.policy.name

    def propose(self, view: TrimView, need: int) -> Proposal:
        result = self.policy.select(view.context_view(), need)
        return proposal_from(result, view.tracker.ctx, self.name, view.tracker.clock)


@dataclass(frozen=True, slots=True)
class ListTrimmer:
    """A list function ``fn(messages) -> messages`` over the runtime's own
    message objects.  If its signature names ``max_tokens`` it gets the
    budget; if it names ``token_counter``, a counter of the guard's tracked
    tokens.  Returned items are matched to the input by identity, then by
    equality; unmatched input messages are proposed for eviction."""

    fn: Callable[..., Sequence[object]]
    name: str = "trim"

    def propose(self, view: TrimView, need: int) -> Proposal:
        originals, ids = view.payloads()
        objects = [_copy(o) for o in originals]  # the runtime's own objects stay untouched
        kwargs: dict[str, Any] = {}
        names = _parameters(self.fn)
        if "max_tokens" in names:
            kwargs["max_tokens"] = view.budget
        if "token_counter" in names:
            kwargs["token_counter"] = _counter(view.tracker, objects, ids)
        try:
            kept = self.fn(list(objects), **kwargs)
        except Exception as exc:
            raise PolicyError(
                f"list function {self.name!r}",
                f"raised {type(exc).__name__}: {exc}.",
                "fix the trimmer; the guard left the context as it was.",
            ) from exc
        if not isinstance(kept, Sequence) or isinstance(kept, str | bytes):
            raise PolicyError(
                f"list function {self.name!r}",
                f"returned {type(kept).__name__}, not a list of messages.",
            )
        return Proposal(evict=_dropped(kept, objects, ids))


_ATOMS = (str, int, float, bool, type(None))


def _copy(value: object) -> object:
    """An independent copy: JSON-shaped trees copied directly (fast), anything
    else by :func:`copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) in _ATOMS else _copy(v) for k, v in value.items()}  # type: ignore[attr-defined]
    if kind is list:
        return [v if type(v) in _ATOMS else _copy(v) for v in value]  # type: ignore[attr-defined]
    if kind in _ATOMS:
        return value
    from copy import deepcopy

    return deepcopy(value)


def _parameters(fn: Callable[..., object]) -> frozenset[str]:
    import inspect  # only for list functions: keeps the guard's import light

    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


def _counter(
    tracker: Tracker, objects: list[object], ids: list[tuple[str, ...]]
) -> Callable[[object], int]:
    tokens = {
        id(o): sum(tracker.ctx[m].tokens for m in i) for o, i in zip(objects, ids, strict=True)
    }

    def count(item: object) -> int:
        if isinstance(item, list | tuple):
            return sum(count(x) for x in item)
        return tokens.get(id(item), 0)

    return count


def _dropped(
    kept: Sequence[object], objects: list[object], ids: list[tuple[str, ...]]
) -> tuple[str, ...]:
    by_identity = {id(o): i for i, o in enumerate(objects)}
    taken: set[int] = set()
    loose: list[object] = []
    for item in kept:
        at = by_identity.get(id(item))
        if at is not None and at not in taken:
            taken.add(at)
        else:
            loose.append(item)
    for item in loose:  # copies: match by equality, latest first (trimmers drop the front)
        for at in range(len(objects) - 1, -1, -1):
            if at not in taken and objects[at] == item:
                taken.add(at)
                break
    return tuple(m for at, group in enumerate(ids) if at not in taken for m in group)


def as_trimmer(obj: object, format: str | None = None, *, name: str | None = None) -> Trimmer:
    """``obj`` as a :class:`Trimmer`.

    * an object with ``propose`` is used as it is;
    * with ``format`` given (``"openai"``, ``"anthropic"``, ``"langchain"``,
      ``"autogen"``, or any word naming your message objects), a callable is a
      list function;
    * otherwise a callable or an object with ``select`` is a native policy.
    """
    if isinstance(obj, Trimmer):
        return obj
    label = (
        name or getattr(obj, "name", None) or getattr(obj, "__name__", None) or type(obj).__name__
    )
    if format is not None:
        if not callable(obj):
            raise TypeError(
                f"{obj!r} is not a trimmer: with format={format!r} the trimmer is a list "
                f"function trim(messages) -> messages, and a {type(obj).__name__} is not "
                "callable. Hint: give a function trim(messages), an object with "
                "propose(view, need), or, without format=, a select(view, need) policy"
            )
        return ListTrimmer(obj, f"{label}@{format}")
    try:
        return PolicyTrimmer(as_policy(obj, str(label)))
    except TypeError:
        raise TypeError(
            f"{obj!r} is not a trimmer: a trimmer is a select(view, need) policy, an "
            "object with propose(view, need), or a list function trim(messages) given "
            "with format=. Hint: give one of these, e.g. the function you trim with and "
            "format='openai'"
        ) from None
