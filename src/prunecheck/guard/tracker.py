"""What the guard knows of the runtime's context, fed by its events.

The tracker mirrors the runtime's message list in a
:class:`prunecheck.model.context.Context` (the model's unit index: O(1) per
event, O(unit) per removal) and keeps, beside it, the runtime's own message
objects (``payloads``), which call each result answers, which calls are
pending, which messages are still streaming and which resources each
unit's calls named.  Message ids are the runtime's: any strings, unique
while the message is in the context.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from prunecheck.model.context import Context, Message, Role

from .errors import GuardError

__all__ = ["Tracker"]


def _role(role: str | Role) -> Role:
    try:
        return Role(role)
    except ValueError:
        raise GuardError(f"role {role!r} is not one of system, user, assistant, tool") from None


class Tracker:
    """The mirror of one runtime's context."""

    __slots__ = (
        "batch_of",
        "clock",
        "ctx",
        "last_user",
        "payloads",
        "pending",
        "resources",
        "result_of",
        "turn",
    )

    def __init__(self) -> None:
        self.ctx = Context()
        self.payloads: dict[str, object] = {}
        self.batch_of: dict[str, str] = {}  # call id -> the message that issued it
        self.result_of: dict[str, str] = {}  # call id -> its result message
        self.pending: dict[str, None] = {}
        self.resources: dict[str, frozenset[str]] = {}  # unit -> resources its calls named
        self.turn = 0
        self.clock = 0
        self.last_user: str | None = None

    def _add(
        self,
        mid: str,
        role: str | Role,
        tokens: int,
        payload: object,
        *,
        closed: bool = True,
        unit: str | None = None,
        call_id: str | None = None,
        tool_calls: tuple[str, ...] = (),
    ) -> Message:
        if mid in self.ctx:
            raise GuardError(f"message id {mid!r} is already in the context")
        if tokens < 0:
            raise GuardError(f"message {mid!r} has a negative token count {tokens}")
        self.clock += 1
        r = _role(role)
        if r is Role.USER:
            self.turn += 1
        message = Message(
            mid,
            r,
            tokens,
            self.turn,
            float(self.clock),
            tool_calls=tool_calls,
            call_id=call_id,
            closed=closed,
            unit_id=unit or mid,
        )
        self.ctx.append(message)
        self.payloads[mid] = payload
        if r is Role.USER:
            self.last_user = mid
        return message

    # ------------------------------------------------------------------ events
    def message(
        self,
        mid: str,
        role: str | Role,
        tokens: int,
        payload: object = None,
        *,
        closed: bool = True,
    ) -> None:
        """A message appended whole (or opened, when ``closed`` is False)."""
        self._add(mid, role, tokens, payload, closed=closed)

    def calls(
        self,
        mid: str,
        call_ids: Iterable[str],
        tokens: int,
        payload: object = None,
        resources: Iterable[str] = (),
    ) -> None:
        """An assistant message issuing calls; each is pending until its
        result completes."""
        ids = tuple(call_ids)
        if not ids:
            raise GuardError(f"message {mid!r} issues no call; use message() for plain text")
        for cid in ids:
            if cid in self.batch_of and self.batch_of[cid] in self.ctx:
                raise GuardError(f"call id {cid!r} was already issued by {self.batch_of[cid]!r}")
        self._add(mid, Role.ASSISTANT, tokens, payload, tool_calls=ids)
        for cid in ids:
            self.batch_of[cid] = mid
            self.pending[cid] = None
            self.ctx.mark_pending(mid, cid)
        self.resources[mid] = frozenset(resources)

    def result_chunk(
        self, call_id: str, tokens: int, mid: str | None = None, payload: object = None
    ) -> str:
        """A chunk of ``call_id``'s result: the first opens its result message
        (``mid``, default ``"result:" + call_id``), later ones grow it."""
        batch = self._batch(call_id)
        current = self.result_of.get(call_id)
        if current is not None and current in self.ctx:
            old = self.ctx[current]
            self.ctx.update(_grown(old, tokens))
            if payload is not None:
                self.payloads[current] = payload
            return current
        mid = mid or f"result:{call_id}"
        self._add(mid, Role.TOOL, tokens, payload, closed=False, unit=batch, call_id=call_id)
        self.result_of[call_id] = mid
        return mid

    def result_complete(
        self, call_id: str, tokens: int = 0, mid: str | None = None, payload: object = None
    ) -> None:
        """The result of ``call_id`` is complete (its last chunk, if any, carries ``tokens``)."""
        if call_id not in self.pending:
            raise GuardError(f"result complete for call {call_id!r}, which is not pending")
        target = self.result_of.get(call_id)
        if target is None or target not in self.ctx:
            target = self.result_chunk(call_id, tokens, mid, payload)
        elif tokens or payload is not None:
            self.result_chunk(call_id, tokens, mid, payload)
        message = self.ctx[target]
        self.ctx.update(_closed(message))
        del self.pending[call_id]
        self.ctx.resolve(self._batch(call_id), call_id)

    def stream_chunk(self, mid: str, tokens: int, *, last: bool = False) -> None:
        message = self.ctx.get(mid)
        if message is None:
            raise GuardError(f"stream chunk for message {mid!r}, which is not in the context")
        grown = _grown(message, tokens)
        self.ctx.update(_closed(grown) if last else grown)

    def stream_closed(self, mid: str) -> None:
        self.stream_chunk(mid, 0, last=True)

    def removed(self, ids: Iterable[str]) -> list[Message]:
        """Messages left the context (by the guard's plan or the runtime's
        own doing).  O(number removed)."""
        present = [m for m in ids if m in self.ctx]
        gone = self.ctx.remove(present)
        for message in gone:
            self.payloads.pop(message.id, None)
            if message.id == self.last_user:
                self.last_user = None
        return gone

    def restore(self, messages: Iterable[tuple[Message, object]]) -> None:
        """Put spilled messages back, at the end of the context."""
        for message, payload in messages:
            self.ctx.append(message)
            self.payloads[message.id] = payload

    def _batch(self, call_id: str) -> str:
        batch = self.batch_of.get(call_id)
        if batch is None:
            raise GuardError(
                f"call {call_id!r} was never issued (tell the guard about the "
                "assistant message with calls() first)"
            )
        return batch

    def copy(self, remap: Callable[[object], object] | None = None) -> Tracker:
        """An independent copy; ``remap`` maps each payload to its copy.  O(n)."""
        twin = Tracker()
        twin.ctx = self.ctx.copy()
        twin.payloads = (
            {k: remap(v) for k, v in self.payloads.items()}
            if remap is not None
            else dict(self.payloads)
        )
        twin.batch_of, twin.result_of = dict(self.batch_of), dict(self.result_of)
        twin.pending, twin.resources = dict(self.pending), dict(self.resources)
        twin.turn, twin.clock, twin.last_user = self.turn, self.clock, self.last_user
        return twin

    # ------------------------------------------------------------------- reads
    def is_protected(self, message: Message) -> bool:
        """The system prompt and the latest user message are never pruned."""
        return message.role is Role.SYSTEM or message.id == self.last_user


def _grown(message: Message, tokens: int) -> Message:
    return replace(message, tokens=message.tokens + tokens, chunks=message.chunks + 1)


def _closed(message: Message) -> Message:
    return replace(message, closed=True)
