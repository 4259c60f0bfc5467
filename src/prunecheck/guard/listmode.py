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

Spilled units are keyed by their calls' ids (``"calls:" + ",".join(ids)``;
a result is ``"result:" + call id``; other messages ``"msg:" + position +
":" + digest``), so a unit spilled by one call is recognised, with the
resources its calls named, and re-injected before the first *new* call
message naming one of them, by any later call — unless the list you pass
holds the unit already.  State kept between calls: the conversation's
spilled units, the calls seen, and the restored units to delete from the
store once you hold the list that has them.  A call that raises (anything
but :class:`~.errors.HardCeilingExceeded`) changes none of it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from os import PathLike
from typing import Any

from .core import CommitGuard
from .errors import GuardError, HardCeilingExceeded, StoreError
from .plan import Plan, Restored
from .readers import Item, Reader, count_tokens, reader_for
from .store import SpillStore
from .tracker import check_id, check_tokens
from .trimmers import as_trimmer

__all__ = ["ListGuard"]

Rewrite = Callable[[object, str], object]


class ListGuard:
    """``ListGuard(trimmer, format=..., budget=...)(messages) -> messages``.

    Parameters
    ----------
    trimmer : object
        A list function over the same message objects, or a native policy
        (an object with ``select``; a bare ``select(view, need)`` function
        needs ``native=True``).
    format : str
        ``"openai"``, ``"anthropic"``, ``"langchain"`` or ``"autogen"`` (or
        give ``reader``).
    budget, hard_ceiling, store, conversation :
        As for :class:`~.core.CommitGuard`.
    token_counter : callable, optional
        Tokens of one message object.  Default: 4 characters per token of
        its text, content and calls (:func:`~.readers.count_tokens`), the
        size ``prunecheck check`` gives messages.
    placeholder : callable, optional
        ``placeholder(message, kind)`` builds a cleared message (``kind``
        ``"cleared"``) or a summary (``"summary"``) in your format; without
        it clears and summaries proposed by a native policy are refused.
    encode, decode : callable, optional
        The store's codec, when ``store`` is a path.
    provider : str or list of str, optional
        The provider(s) the list is sent to: the guard refuses a prune or
        spill that would leave a history one of them rejects (as
        :class:`~.core.CommitGuard`'s ``provider=``; ``last_plan.rejections``
        names the rule).  The history judged is the list in the guard's
        order (each result right after its call).

    Raises
    ------
    HardCeilingExceeded
        past the hard ceiling; its ``messages`` is the safe list.
    GuardError
        a malformed list (naming the message's position and the rule), or a
        store fault (:class:`~.errors.StoreError`): nothing changed.
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
        token_counter: Callable[[Any], float] | None = None,
        placeholder: Rewrite | None = None,
        native: bool = False,
        encode: Callable[[object], str] | None = None,
        decode: Callable[[str], object] | None = None,
        conversation: str | None = None,
        provider: str | Sequence[str] | None = None,
    ) -> None:
        self._list_format, self._native = format, native
        self.trimmer = trimmer  # sets format and the wrapped trimmer
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
        probe = CommitGuard(  # validates budget and ceiling, picks the conversation
            self._trimmer,
            budget=budget,
            hard_ceiling=hard_ceiling,
            store=store,
            conversation=conversation,
            provider=provider,
        )
        self.conversation = probe.conversation
        self.providers = probe.providers
        self._spilled: dict[str, frozenset[str]] = dict(probe._spilled)
        self._seen_calls: set[str] = set()
        self._awaiting: list[str] = []
        self.last_plan: Plan | None = None

    @property
    def trimmer(self) -> object:
        """The trimmer as you gave it.  Assign a new one at any time (read as
        the constructor reads ``trimmer``); the next call asks it."""
        return self._given

    @trimmer.setter
    def trimmer(self, trimmer: object) -> None:
        native = self._native or not callable(trimmer) or hasattr(trimmer, "select")
        wrapped = as_trimmer(trimmer, None if native else self._list_format)
        self._given, self._trimmer = trimmer, wrapped
        #: The format the trimmer is a list function over (None: a native policy).
        self.format = None if native else self._list_format

    @property
    def spilled(self) -> tuple[str, ...]:
        """Units of this conversation in the spill store, oldest first."""
        return tuple(self._spilled)

    def __call__(self, messages: Sequence[Any]) -> list[Any]:
        if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
            raise GuardError(f"ListGuard takes a list of messages, got {type(messages).__name__}.")
        if self._awaiting and self.store is not None:
            try:  # the caller holds the list that has them
                self.store.delete(self._awaiting, self.conversation)
                self._awaiting = []
            except StoreError:
                pass  # retried at the next call; meanwhile in both store and list
        items = [self._read(at, m) for at, m in enumerate(messages)]
        tokens = [
            self._tokens(at, m, item)
            for at, (m, item) in enumerate(zip(messages, items, strict=True))
        ]
        guard = CommitGuard(
            self._trimmer, budget=self.budget, hard_ceiling=self.hard_ceiling, store=None
        )
        guard.providers = self.providers
        guard.store, guard.conversation = self.store, self.conversation
        guard._spilled = dict(self._spilled)
        present = frozenset("calls:" + ",".join(i.calls) for i in items if i.calls)
        back = [u for u in self._spilled if u in present]  # the caller put them back itself
        for unit in back:
            del guard._spilled[unit]
        before: list[list[tuple[str, object]]] = [[] for _ in messages]  # restored units
        ids: list[tuple[str, ...]] = []
        issued = {c for item in items for c in item.calls}
        new_calls: set[str] = set()
        restored: list[str] = []
        for at, (message, item) in enumerate(zip(messages, items, strict=True)):
            try:
                group, units = self._feed(guard, at, message, item, tokens[at], issued, present)
            except StoreError:
                raise
            except GuardError as exc:
                raise GuardError(f"message {at} of the list ({item.role}): {exc}") from None
            for back_unit in units:
                before[at].extend(zip(back_unit.ids, back_unit.payloads, strict=True))
                restored.append(back_unit.unit)
            new_calls.update(item.calls)
            ids.append(group)
        try:
            plan = guard.check()
        except HardCeilingExceeded as exc:
            self._commit(guard, new_calls, restored, back)
            exc.messages = self._apply(exc.plan, messages, before, ids)
            self.last_plan = exc.plan
            raise
        self._commit(guard, new_calls, restored, back)
        self.last_plan = plan
        return self._apply(plan, messages, before, ids)

    def _read(self, at: int, message: object) -> Item:
        try:
            item = self.reader(message)
        except GuardError as exc:
            raise GuardError(f"message {at} of the list: {exc}") from None
        if not isinstance(item, Item):
            raise GuardError(f"message {at} of the list: the reader returned {item!r}, not an Item")
        return item

    def _tokens(self, at: int, message: object, item: Item) -> int:
        counted = self.count(message) if self.count is not None else count_tokens(item)
        return check_tokens(counted, f"message {at} of the list (token_counter)")

    def _commit(
        self, guard: CommitGuard, new_calls: set[str], restored: list[str], back: list[str]
    ) -> None:
        """The check went through: keep what it decided."""
        self._seen_calls |= new_calls
        self._spilled = dict(guard._spilled)
        # back in the list we return (or already in the caller's): they leave the
        # store on our next call, unless this check spilled them again
        self._awaiting.extend(u for u in (*restored, *back) if u not in self._spilled)

    def _feed(
        self,
        guard: CommitGuard,
        at: int,
        message: object,
        item: Item,
        tokens: int,
        issued: set[str],
        present: frozenset[str],
    ) -> tuple[tuple[str, ...], tuple[Restored, ...]]:
        if item.calls:
            mid = "calls:" + ",".join(item.calls)
            fresh = self._seen_calls.isdisjoint(item.calls)
            restored = guard._calls(
                mid, item.calls, tokens, message, item.resources, fresh, present
            )
            guard._restored = []  # not in the caller's list yet: they stay in the store
            return (mid,), restored
        answers = [c for c in item.answers if c in issued and c in guard.tracker.pending]
        if item.role == "tool" and answers:
            out = []
            for i, cid in enumerate(answers):
                guard.result_complete(cid, tokens if i == 0 else 0, f"result:{cid}", message)
                out.append(f"result:{cid}")
            return tuple(out), ()
        mid = check_id(f"msg:{at}:{_digest(message)}", "message id")
        guard.message(mid, item.role, tokens, message)
        return (mid,), ()

    def _apply(
        self,
        plan: Plan,
        messages: Sequence[Any],
        before: list[list[tuple[str, object]]],
        ids: list[tuple[str, ...]],
    ) -> list[Any]:
        gone = set(plan.remove)
        cleared = set(plan.clear)
        summary_at = {g.message_ids[0]: g for g in plan.summarize}
        out: list[Any] = []
        for message, restored, group in zip(messages, before, ids, strict=True):
            out.extend(p for mid, p in restored if mid not in gone)
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
