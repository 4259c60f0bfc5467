"""The guard for runtimes that can only hand over message lists.

:class:`ListGuard` wraps a trimmer so that ``guarded(messages)`` returns a
safe list.  It infers structure from the list alone: a call whose result is
not in the list is **pending** (defer); every message present is closed.

What list-only inference cannot see — feed :class:`~.core.CommitGuard` the
runtime's events instead when any of these can happen:

* a result still streaming that is already in the list looks complete, so
  its unit may be pruned mid-stream (a truncated payload);
* an assistant message still streaming looks complete;
* a call the runtime has issued but not yet appended (or runs in the
  background outside the list) is invisible, so nothing defers for it;
* a result the runtime holds outside the list until it completes.

Spilled units are keyed by content (calls by their ids), so a unit spilled
by one call is recognised, and re-injected before the first *new* call
message naming one of its resources, by a later call.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any

from .core import CommitGuard
from .errors import HardCeilingExceeded
from .plan import Plan
from .readers import Item, Reader, count_words, reader_for
from .store import SpillStore

__all__ = ["ListGuard"]

Rewrite = Callable[[object, str], object]


class ListGuard:
    """``ListGuard(trimmer, format=..., budget=...)(messages) -> messages``.

    Parameters
    ----------
    trimmer:
        A list function over the same message objects, or a native policy
        (an object with ``select``; a bare ``select(view, need)`` function
        needs ``native=True``).
    format:
        ``"openai"``, ``"anthropic"``, ``"langchain"`` or ``"autogen"`` (or
        give ``reader``).
    budget, hard_ceiling, store:
        As for :class:`~.core.CommitGuard`.
    token_counter:
        Tokens of one message object (default: words of its text).
    placeholder:
        ``placeholder(message, kind)`` builds a cleared message (``kind``
        ``"cleared"``) or a summary (``"summary"``) in your format; without
        it clears and summaries proposed by a native policy are refused.

    Raises
    ------
    HardCeilingExceeded
        past the hard ceiling; its ``messages`` is the safe list.
    """

    def __init__(
        self,
        trimmer: object,
        *,
        format: str,
        budget: int,
        hard_ceiling: int | None = None,
        store: SpillStore | str | PathLike[str] | None = None,
        reader: Reader | None = None,
        token_counter: Callable[[Any], int] | None = None,
        placeholder: Rewrite | None = None,
        native: bool = False,
        encode: Callable[[object], str] | None = None,
        decode: Callable[[str], object] | None = None,
    ) -> None:
        self.trimmer = trimmer
        self.format = (
            None if native or not callable(trimmer) or hasattr(trimmer, "select") else format
        )
        self.budget = budget
        self.hard_ceiling = hard_ceiling
        self.reader = reader or reader_for(format)
        self.count = token_counter
        self.placeholder = placeholder
        if isinstance(store, str | PathLike):
            kwargs: dict[str, Any] = {}
            if encode is not None and decode is not None:
                kwargs = {"encode": encode, "decode": decode}
            store = SpillStore(store, **kwargs)
        self.store = store
        self._seen_calls: set[str] = set()
        self._awaiting: list[str] = []
        self.last_plan: Plan | None = None

    def __call__(self, messages: Sequence[Any]) -> list[Any]:
        if self._awaiting and self.store is not None:
            self.store.delete(self._awaiting)  # the caller holds the list that has them
            self._awaiting = []
        guard = CommitGuard(
            self.trimmer,
            budget=self.budget,
            hard_ceiling=self.hard_ceiling,
            store=self.store,
            format=self.format,
        )
        items = [self.reader(m) for m in messages]
        slots: list[list[object]] = [[m] for m in messages]  # restored units go before a slot
        ids: list[tuple[str, ...]] = []
        issued = {c for item in items for c in item.calls}
        new_calls: set[str] = set()
        for at, (message, item) in enumerate(zip(messages, items, strict=True)):
            tokens = self.count(message) if self.count is not None else count_words(item)
            ids.append(self._feed(guard, at, message, item, tokens, issued, slots, new_calls))
        self._seen_calls |= new_calls
        restored, guard._restored = guard._restored, []
        try:
            plan = guard.check()
        except HardCeilingExceeded as exc:
            exc.messages = self._apply(exc.plan, slots, ids)
            self.last_plan = exc.plan
            raise
        finally:  # back in the list we return: they leave the store on our next call,
            # unless this check spilled them again
            self._awaiting.extend(u for u in restored if u not in guard.spilled)
        self.last_plan = plan
        return self._apply(plan, slots, ids)

    def _feed(
        self,
        guard: CommitGuard,
        at: int,
        message: object,
        item: Item,
        tokens: int,
        issued: set[str],
        slots: list[list[object]],
        new_calls: set[str],
    ) -> tuple[str, ...]:
        if item.calls:
            mid = "calls:" + ",".join(item.calls)
            fresh = not (set(item.calls) & self._seen_calls)
            new_calls.update(item.calls)
            restored = guard.calls(
                mid, item.calls, tokens, message, resources=item.resources if fresh else ()
            )
            for unit in restored:
                slots[at][:0] = list(unit.payloads)
            return (mid,)
        answers = [c for c in item.answers if c in issued and c in guard.tracker.pending]
        if item.role == "tool" and answers:
            out = []
            for i, cid in enumerate(answers):
                guard.result_complete(cid, tokens if i == 0 else 0, f"result:{cid}", message)
                out.append(f"result:{cid}")
            return tuple(out)
        mid = f"msg:{at}:{_digest(message)}"
        guard.message(mid, item.role if item.role != "tool" else "tool", tokens, message)
        return (mid,)

    def _apply(
        self, plan: Plan, slots: list[list[object]], ids: list[tuple[str, ...]]
    ) -> list[Any]:
        gone = set(plan.remove)
        cleared = set(plan.clear)
        summary_at = {g.message_ids[0]: g for g in plan.summarize}
        out: list[Any] = []
        for slot, group in zip(slots, ids, strict=True):
            *restored, message = slot
            out.extend(restored)
            first = group[0]
            if first in summary_at and self.placeholder is not None:
                out.append(self.placeholder(message, "summary"))
            if all(m in gone for m in group):
                continue
            if first in cleared and self.placeholder is not None:
                out.append(self.placeholder(message, "cleared"))
            else:
                out.append(message)
        return out


def _digest(message: object) -> str:
    return f"{zlib.crc32(repr(message).encode()):08x}"
