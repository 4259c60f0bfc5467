"""What the guard knows of the runtime's context, fed by its events.

The tracker mirrors the runtime's message list in a
:class:`prunecheck.model.context.Context` (the model's unit index: O(1) per
event, O(unit) per removal) and keeps, beside it, the runtime's own message
objects (``payloads``), which call each result answers, which calls are
pending, which messages are still streaming and which resources each
unit's calls named.  Message ids are the runtime's: any non-empty strings,
unique while the message is in the context.

Every event is validated *before* it changes anything, so a refused event
(:class:`~.errors.GuardError`, naming the input and the rule) leaves the
tracker as it was: token counts are finite numbers ≥ 0, ids are strings,
call lists are lists of distinct strings, and each event must be possible
in its unit's state (no chunk for a call that is complete or whose unit
left the context, no chunk for a stream that closed).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import replace

from prunecheck.model.context import Context, Message, Role

from .errors import GuardError

__all__ = ["Tracker", "check_id", "check_ids", "check_tokens"]

_ROLES = {r.value: r for r in Role}


def check_tokens(value: object, what: str) -> int:
    """``value`` as a token count: an int ≥ 0, or a finite float ≥ 0 (rounded
    up).  NaN, infinities, negatives, bools and non-numbers are refused."""
    if type(value) is int:
        if value >= 0:
            return value
    elif isinstance(value, float):
        if math.isfinite(value) and value >= 0:
            return math.ceil(value)
    elif not isinstance(value, bool) and hasattr(value, "__index__"):
        count = operator.index(value)  # numpy integers and the like
        if count >= 0:
            return int(count)
    raise GuardError(
        f"{what}: tokens must be a finite number ≥ 0, got {value!r}. Hint: pass the "
        "token count of the message (an int); NaN or infinity would make every budget "
        "comparison false."
    )


def check_id(value: object, what: str) -> str:
    """``value`` as an id: a non-empty string."""
    if type(value) is str and value:
        return value
    if isinstance(value, str) and value:
        return str(value)
    raise GuardError(
        f"{what} must be a non-empty string, got {value!r} ({type(value).__name__}). "
        "Hint: use your runtime's message or call id as a string."
    )


def check_ids(values: object, what: str, *, unique: bool = True) -> tuple[str, ...]:
    """``values`` as a tuple of ids: a list or tuple (any iterable but a
    string) of non-empty strings, none twice if ``unique``."""
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise GuardError(
            f"{what} must be a list of strings, got {values!r} ({type(values).__name__}). "
            f"Hint: wrap a single id in a list: [{values!r}]."
        )
    ids = tuple(check_id(v, f"{what}: each item") for v in values)
    if unique and len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise GuardError(f"{what} names {', '.join(map(repr, twice))} more than once.")
    return ids


def _role(role: object) -> Role:
    found = _ROLES.get(role) if isinstance(role, str) else None
    if found is None:
        if isinstance(role, Role):
            return role
        raise GuardError(f"role {role!r} is not one of system, user, assistant, tool")
    return found


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

    def _fresh(self, mid: object, what: str = "message id") -> str:
        mid = check_id(mid, what)
        if mid in self.ctx:
            raise GuardError(f"message id {mid!r} is already in the context")
        return mid

    def _add(
        self,
        mid: str,
        role: Role,
        tokens: int,
        payload: object,
        *,
        closed: bool = True,
        unit: str | None = None,
        call_id: str | None = None,
        tool_calls: tuple[str, ...] = (),
    ) -> Message:
        """Append a validated message."""
        self.clock += 1
        if role is Role.USER:
            self.turn += 1
        message = Message(
            mid,
            role,
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
        if role is Role.USER:
            self.last_user = mid
        return message

    # ------------------------------------------------------------------ events
    def message(
        self,
        mid: str,
        role: str | Role,
        tokens: float,
        payload: object = None,
        *,
        closed: bool = True,
    ) -> None:
        """A message appended whole (or opened, when ``closed`` is False)."""
        mid = self._fresh(mid)
        r = _role(role)
        count = check_tokens(tokens, f"message {mid!r}")
        self._add(mid, r, count, payload, closed=closed)

    def check_calls(
        self, mid: str, call_ids: object, tokens: object, resources: object
    ) -> tuple[str, tuple[str, ...], int, frozenset[str]]:
        """Validate a calls event; returns it normalised (nothing changes)."""
        mid = self._fresh(mid)
        ids = check_ids(call_ids, f"call ids of message {mid!r}")
        if not ids:
            raise GuardError(f"message {mid!r} issues no call; use message() for plain text")
        for cid in ids:
            batch = self.batch_of.get(cid)
            if batch is not None and batch in self.ctx:
                raise GuardError(f"call id {cid!r} was already issued by {batch!r}")
        count = check_tokens(tokens, f"message {mid!r}")
        wanted = frozenset(check_ids(resources, f"resources of message {mid!r}", unique=False))
        return mid, ids, count, wanted

    def calls(
        self,
        mid: str,
        call_ids: Iterable[str],
        tokens: float,
        payload: object = None,
        resources: Iterable[str] = (),
    ) -> None:
        """An assistant message issuing calls; each is pending until its
        result completes."""
        mid, ids, count, wanted = self.check_calls(mid, call_ids, tokens, resources)
        self.add_calls(mid, ids, count, payload, wanted)

    def add_calls(
        self,
        mid: str,
        ids: tuple[str, ...],
        tokens: int,
        payload: object,
        resources: frozenset[str],
    ) -> None:
        """Apply a calls event :meth:`check_calls` accepted."""
        self._add(mid, Role.ASSISTANT, tokens, payload, tool_calls=ids)
        for cid in ids:
            self.batch_of[cid] = mid
            self.pending[cid] = None
            self.ctx.mark_pending(mid, cid)
            self.result_of.pop(cid, None)
        self.resources[mid] = resources

    def _live_call(self, call_id: object, event: str) -> tuple[str, str]:
        """(call id, its batch) for a chunk or completion of a pending call."""
        cid = check_id(call_id, f"the call id of {event}")
        batch = self.batch_of.get(cid)
        if batch is None:
            raise GuardError(
                f"{event} for call {cid!r}, which was never issued (tell the guard about "
                "the assistant message with calls() first)"
            )
        if batch not in self.ctx:
            raise GuardError(
                f"{event} for call {cid!r}, whose unit ({batch!r}) left the context "
                "(evicted, spilled or removed): the result would be an orphan. Hint: drop "
                "the late result, or do not remove a unit while its calls are pending."
            )
        if cid not in self.pending:
            raise GuardError(
                f"{event} for call {cid!r}, whose result is already complete, which is "
                "not pending: a call has one result."
            )
        return cid, batch

    def result_chunk(
        self, call_id: str, tokens: float, mid: str | None = None, payload: object = None
    ) -> str:
        """A chunk of ``call_id``'s result: the first opens its result message
        (``mid``, default ``"result:" + call_id``), later ones grow it."""
        cid, batch = self._live_call(call_id, "a result chunk")
        current = self.result_of.get(cid)
        if current is not None and current in self.ctx:
            if mid is not None and mid != current:
                raise GuardError(
                    f"a result chunk for call {cid!r} names message {mid!r}, but its "
                    f"result is tracked as {current!r}"
                )
            count = check_tokens(tokens, f"result {current!r}")
            self.ctx.update(_grown(self.ctx[current], count))
            if payload is not None:
                self.payloads[current] = payload
            return current
        target = self._fresh(mid if mid is not None else f"result:{cid}", "result message id")
        count = check_tokens(tokens, f"result {target!r}")
        self._add(target, Role.TOOL, count, payload, closed=False, unit=batch, call_id=cid)
        self.result_of[cid] = target
        return target

    def result_complete(
        self, call_id: str, tokens: float = 0, mid: str | None = None, payload: object = None
    ) -> None:
        """The result of ``call_id`` is complete (its last chunk, if any, carries ``tokens``)."""
        cid, batch = self._live_call(call_id, "result complete")
        target = self.result_of.get(cid)
        if target is None or target not in self.ctx or tokens or payload is not None:
            target = self.result_chunk(cid, tokens, mid, payload)
        elif mid is not None and mid != target:
            raise GuardError(
                f"result complete for call {cid!r} names message {mid!r}, but its result "
                f"is tracked as {target!r}"
            )
        self.ctx.update(_closed(self.ctx[target]))
        del self.pending[cid]
        self.ctx.resolve(batch, cid)

    def stream_chunk(self, mid: str, tokens: float, *, last: bool = False) -> None:
        mid = check_id(mid, "the message id of a stream chunk")
        message = self.ctx.get(mid)
        if message is None:
            raise GuardError(f"stream chunk for message {mid!r}, which is not in the context")
        if message.closed:
            raise GuardError(
                f"stream chunk for message {mid!r}, which is closed (its stream ended or "
                "it was appended whole)"
            )
        if message.call_id is not None:
            raise GuardError(
                f"stream chunk for message {mid!r}, the result of call {message.call_id!r}: "
                "use result_chunk() / result_complete() for results"
            )
        count = check_tokens(tokens, f"message {mid!r}")
        grown = _grown(message, count)
        self.ctx.update(_closed(grown) if last else grown)

    def stream_closed(self, mid: str) -> None:
        self.stream_chunk(mid, 0, last=True)

    def removed(self, ids: Iterable[str]) -> list[Message]:
        """Messages left the context (by the guard's plan or the runtime's
        own doing).  Calls of a removed batch stop being pending: a result
        for them would be an orphan.  O(number removed)."""
        wanted = check_ids(ids, "removed message ids") if not isinstance(ids, list) else ids
        present = [m for m in wanted if m in self.ctx]
        gone = self.ctx.remove(present)
        for message in gone:
            self.payloads.pop(message.id, None)
            if message.id == self.last_user:
                self.last_user = None
            for cid in message.tool_calls:
                if cid in self.pending and self.batch_of.get(cid) == message.id:
                    del self.pending[cid]
                    self.ctx.resolve(message.unit_id, cid)
        return gone

    def restore(self, messages: Iterable[tuple[Message, object]]) -> None:
        """Put spilled messages back, at the end of the context."""
        for message, payload in messages:
            self.ctx.append(message)
            self.payloads[message.id] = payload

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
