"""Messages, and the context that holds them in order with its unit index.

A context is a sequence of *units*: a unit is one logical object, the
transitive closure of messages linked by call→result and by batch membership
(an assistant message that issued a parallel batch, with every result of that
batch).  The context keeps its messages grouped by unit, in the order units
first appeared, so that a tool result lands next to the call that asked for
it even when a user message arrived while the batch was in flight.

The :class:`Context` is also the fast *index* of the unit relation: it knows,
in O(1), the unit of a message, the members of a unit that are present, the
open (streaming) messages and the calls still pending per unit.  The
obviously-right *spec* of the same relation lives in :mod:`.units`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "Context",
    "Message",
    "Role",
]


class Role(StrEnum):
    """Who wrote a message.  Compares equal to the plain strings."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of the context, as a policy sees it.

    The first ten fields are the public, stable policy API.  The rest describe
    the content so that truncation, clearing and summaries can be judged.

    Attributes
    ----------
    id: message id, unique over a run (``m1``, ``m2`` …).
    role: system, user, assistant or tool.
    tokens: size in the context now.
    turn: the agent turn that created the message.
    created_at: time the message was created.
    tool_calls: ids of the calls an assistant message issued (its batch).
    call_id: the call a tool message answers.
    closed: False while the message is still streaming.
    unit_id: the unit the message belongs to.
    text: a short rendering of the content (what similarity policies read).
    first_chunk: index of the first produced chunk this message holds; a
        message re-appended after its stream lost its prefix has ``> 0``.
    chunks: how many produced chunks it holds.
    cleared: content replaced by a placeholder.
    summary_of: for a summary, the ids of the messages it replaced.
    synthetic: written by a repair layer, not by the tool or the model.
    thought: a reasoning item the model produced before the assistant
        message that follows it (OpenAI Responses' ``reasoning`` item,
        Anthropic's signed ``thinking`` block); the provider wants it back
        with that message.
    after_thought: for an assistant message the model produced after a
        reasoning item, that item's message id ("" if none): a request that
        sends this message without it breaks the provider's rule.
    """

    id: str
    role: Role
    tokens: int
    turn: int
    created_at: float
    tool_calls: tuple[str, ...] = ()
    call_id: str | None = None
    closed: bool = True
    unit_id: str = ""
    text: str = ""
    first_chunk: int = 0
    chunks: int = 1
    cleared: bool = False
    summary_of: tuple[str, ...] = ()
    synthetic: bool = False
    thought: bool = False
    after_thought: str = ""

    @property
    def is_summary(self) -> bool:
        return bool(self.summary_of)


@dataclass(slots=True)
class Context:
    """The ordered messages of one runtime, indexed by unit.

    Order is kept as insertion-ordered *blocks*, one per unit present; block
    keys only grow, so dict order is context order.  Every operation below
    is O(1) or O(size of the unit touched), never O(size of the context),
    except iteration.

    Examples
    --------
    >>> ctx = Context()
    >>> ctx.append(Message("m1", Role.USER, 10, 1, 0.0, unit_id="m1"))
    >>> ctx.append(Message("m2", Role.ASSISTANT, 5, 1, 1.0, tool_calls=("c1",), unit_id="m2"))
    >>> ctx.append(Message("m3", Role.USER, 7, 2, 2.0, unit_id="m3"))
    >>> ctx.append(Message("m4", Role.TOOL, 9, 1, 3.0, call_id="c1", unit_id="m2"))
    >>> [m.id for m in ctx]
    ['m1', 'm2', 'm4', 'm3']
    >>> ctx.used, sorted(ctx.members("m2"))
    (31, ['m2', 'm4'])
    """

    _messages: dict[str, Message] = field(default_factory=dict)
    _blocks: dict[float, list[str]] = field(default_factory=dict)
    _block_of_unit: dict[str, float] = field(default_factory=dict)
    _next_block: int = 0
    _used: int = 0
    _open: dict[str, None] = field(default_factory=dict)
    _pending: dict[str, set[str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ reads
    def __len__(self) -> int:
        return len(self._messages)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def __iter__(self) -> Iterator[Message]:
        messages = self._messages
        for ids in self._blocks.values():
            for mid in ids:
                yield messages[mid]

    def __reversed__(self) -> Iterator[Message]:
        messages = self._messages
        for ids in reversed(self._blocks.values()):
            for mid in reversed(ids):
                yield messages[mid]

    def get(self, message_id: str) -> Message | None:
        return self._messages.get(message_id)

    def __getitem__(self, message_id: str) -> Message:
        return self._messages[message_id]

    @property
    def used(self) -> int:
        """Tokens in the context, kept incrementally."""
        return self._used

    def ids(self) -> list[str]:
        """Message ids in context order.  O(n)."""
        return [mid for ids in self._blocks.values() for mid in ids]

    def units(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """``(unit_id, member ids)`` for each unit present, in context order."""
        for ids in self._blocks.values():
            if ids:
                yield self._messages[ids[0]].unit_id, tuple(ids)

    def members(self, unit_id: str) -> tuple[str, ...]:
        """Ids of the unit's messages present in the context.  O(unit size)."""
        block = self._block_of_unit.get(unit_id)
        return () if block is None else tuple(self._blocks[block])

    def has_unit(self, unit_id: str) -> bool:
        return unit_id in self._block_of_unit

    def open_ids(self) -> tuple[str, ...]:
        """Ids of the messages still streaming."""
        return tuple(self._open)

    def has_open(self) -> bool:
        return bool(self._open)

    def pending_in(self, unit_id: str) -> frozenset[str]:
        """Calls of the unit whose result is not complete yet."""
        return frozenset(self._pending.get(unit_id, ()))

    def has_pending(self) -> bool:
        return bool(self._pending)

    def pending_units(self) -> tuple[str, ...]:
        return tuple(self._pending)

    # ----------------------------------------------------------------- writes
    def append(self, message: Message) -> None:
        """Add a message at the end of its unit's block (a new block if its
        unit has no message present)."""
        if message.id in self._messages:
            raise ValueError(f"message id {message.id!r} is already in the context")
        self._messages[message.id] = message
        block = self._block_of_unit.get(message.unit_id)
        if block is None:
            block = float(self._next_block)
            self._next_block += 1
            self._blocks[block] = [message.id]
            self._block_of_unit[message.unit_id] = block
        else:
            self._blocks[block].append(message.id)
        self._used += message.tokens
        if not message.closed:
            self._open[message.id] = None

    def update(self, message: Message) -> None:
        """Replace a message by a new version of itself (same id and unit)."""
        old = self._messages[message.id]
        if old.unit_id != message.unit_id:
            raise ValueError(f"message {message.id!r} cannot change unit")
        self._messages[message.id] = message
        self._used += message.tokens - old.tokens
        if message.closed:
            self._open.pop(message.id, None)
        else:
            self._open[message.id] = None

    def remove(self, message_ids: Iterable[str]) -> list[Message]:
        """Remove messages; return them in the order given.  Unknown ids are
        an error of the caller (gates resolve ids before removing)."""
        removed = []
        for mid in message_ids:
            message = self._messages.pop(mid)
            block = self._block_of_unit[message.unit_id]
            ids = self._blocks[block]
            ids.remove(mid)
            if not ids:
                del self._blocks[block]
                del self._block_of_unit[message.unit_id]
            self._used -= message.tokens
            self._open.pop(mid, None)
            removed.append(message)
        return removed

    def summarize(self, message_ids: Iterable[str], summary: Message) -> list[Message]:
        """Replace messages by one summary message placed where the first of
        them stood (its own unit).  Returns the removed messages in context
        order.  O(n): a summary rewrites the context."""
        wanted = set(message_ids)
        ordered = [m for m in self.ids() if m in wanted]
        if not ordered:
            raise ValueError("summarize needs at least one message present")
        first = self._block_of_unit[self._messages[ordered[0]].unit_id]
        removed = self.remove(ordered)
        if first in self._blocks:
            # The first block keeps other members (a cut unit): go just before it.
            earlier = [k for k in self._blocks if k < first]
            first = (max(earlier) + first) / 2 if earlier else first - 1
        self._messages[summary.id] = summary
        self._blocks[first] = [summary.id]
        self._blocks = dict(sorted(self._blocks.items()))
        self._block_of_unit[summary.unit_id] = first
        self._used += summary.tokens
        return removed

    def mark_pending(self, unit_id: str, call_id: str) -> None:
        self._pending.setdefault(unit_id, set()).add(call_id)

    def resolve(self, unit_id: str, call_id: str) -> None:
        calls = self._pending.get(unit_id)
        if calls is not None:
            calls.discard(call_id)
            if not calls:
                del self._pending[unit_id]

    def copy(self) -> Context:
        """An independent copy (messages are immutable and shared).  O(n)."""
        return Context(
            _messages=dict(self._messages),
            _blocks={k: list(v) for k, v in self._blocks.items()},
            _block_of_unit=dict(self._block_of_unit),
            _next_block=self._next_block,
            _used=self._used,
            _open=dict(self._open),
            _pending={k: set(v) for k, v in self._pending.items()},
        )
