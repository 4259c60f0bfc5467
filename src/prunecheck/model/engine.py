"""The bookkeeping and structure of one event: mutations of the context,
incident checks, notes, counters, and the unit structure a removal changes.

:class:`EventWork` is created by :func:`prunecheck.model.runtime.apply` for
each event and handed to the event's handler; it is internal to the model.
The budget check, the gate, spill and re-injection work *on* it and live in
:mod:`.budget`.
"""

from __future__ import annotations

from .context import Message, Role
from .events import CallSpec, Effect
from .incidents import Incident, IncidentKind
from .notes import Note, NoteKind
from .state import CallRecord, CallStatus, CounterName, RuntimeState, evolve

__all__ = ["EventWork", "calls_text"]


class EventWork:
    """The work of one event: mutations, incident checks, notes.

    Parameters
    ----------
    state : RuntimeState
        The runtime state the event changes (in place).

    Attributes
    ----------
    state : RuntimeState
        As given.
    ctx : Context
        Its context.
    incidents : list of Incident
        What the event did that is an incident (a violation or a cost).
    notes : list of Note
        What the event did, for narratives (kept only when ``state.record``).
    """

    __slots__ = ("ctx", "incidents", "notes", "state")

    def __init__(self, state: RuntimeState) -> None:
        self.state = state
        self.ctx = state.context
        self.incidents: list[Incident] = []
        self.notes: list[Note] = []

    # -- bookkeeping
    def note(self, kind: NoteKind, text: str, ids: tuple[str, ...] = ()) -> None:
        if self.state.record:
            self.notes.append(Note(kind, text, ids))

    def incident(
        self,
        kind: IncidentKind,
        ids: tuple[str, ...],
        detail: str,
        reason: str = "",
        text: str = "",
    ) -> None:
        self.incidents.append(Incident(kind, self.state.step_index, ids, detail, reason, text))
        counters = self.state.counters
        counters[kind.value] = counters.get(kind.value, 0) + 1

    def once(self, kind: IncidentKind, key: str, ids: tuple[str, ...], detail: str) -> None:
        if (kind.value, key) not in self.state.reported:
            self.state.reported.add((kind.value, key))
            self.incident(kind, ids, detail)

    def bump(self, name: CounterName, by: int = 1) -> None:
        self.state.counters[name] = self.state.counters.get(name, 0) + by

    def new_message_id(self) -> str:
        mid = f"m{self.state.next_message}"
        self.state.next_message += 1
        return mid

    def new_call_id(self) -> str:
        cid = f"c{self.state.next_call}"
        self.state.next_call += 1
        return cid

    def where(self) -> str:
        return f"step {self.state.step_index + 1}"

    # -- structure
    def recheck(self, unit: str) -> None:
        """Update orphan / unanswered-call bookkeeping for one unit.
        O(unit size + batch width)."""
        state, ctx = self.state, self.ctx
        batch = state.batches.get(unit)
        if batch is None:
            return
        members = ctx.members(unit)
        has_call = unit in ctx
        answered = set()
        for mid in members:
            message = ctx[mid]
            if message.role is Role.TOOL:
                answered.add(message.call_id)
                if not has_call:
                    if mid not in state.orphans:
                        state.orphans.add(mid)
                        self.once(
                            IncidentKind.ORPHANED_RESULT,
                            mid,
                            (mid, message.call_id or ""),
                            f"result {mid} for call {message.call_id} is in the context but "
                            f"the assistant message {unit} that issued the call is not",
                        )
                else:
                    state.orphans.discard(mid)
        for cid in batch.calls:
            gone = (
                has_call
                and cid not in answered
                and state.calls[cid].status is not CallStatus.PENDING
            )
            if gone:
                if cid not in state.unanswered:
                    state.unanswered.add(cid)
                    self.once(
                        IncidentKind.UNANSWERED_CALL,
                        cid,
                        (unit, cid),
                        f"call {cid} of {unit} has completed but no result for it is "
                        "in the context",
                    )
            else:
                state.unanswered.discard(cid)
        if not members:
            state.orphans.difference_update(m for m in list(state.orphans) if m not in ctx)

    def forget_removed(self, removed: list[Message]) -> None:
        for message in removed:
            self.state.orphans.discard(message.id)
        for unit in dict.fromkeys(m.unit_id for m in removed):
            self.recheck(unit)

    # -- appends
    def append(self, message: Message) -> None:
        self.ctx.append(message)
        if self.state.record:
            self.note(NoteKind.APPEND, _describe(message), (message.id,))

    def plain(self, role: Role, tokens: int, text: str) -> Message:
        mid = self.new_message_id()
        message = Message(
            mid, role, tokens, self.state.turn, self.state.now, unit_id=mid, text=text
        )
        self.append(message)
        return message

    # -- tool execution
    def execute_call(self, spec: CallSpec) -> int:
        world = self.state.world
        if spec.effect is Effect.WRITE:
            world[spec.path] = world.get(spec.path, 0) + 1
        return world.get(spec.path, 0)

    def close_call(self, record: CallRecord, status: CallStatus) -> CallRecord:
        state = self.state
        record = evolve(record, status=status)
        state.calls[record.id] = record
        state.pending.pop(record.id, None)
        self.ctx.resolve(record.batch, record.id)
        return record


def calls_text(calls: tuple[CallSpec, ...]) -> str:
    return "; ".join(f"{c.tool}({c.path})" for c in calls)


def _describe(m: Message) -> str:
    parts = [f"{m.id} {m.role.value}", f"{m.tokens} tokens"]
    if m.tool_calls:
        parts.append("calls " + ", ".join(m.tool_calls))
    if m.call_id:
        parts.append(f"answers {m.call_id}")
    if not m.closed:
        parts.append("open")
    if m.first_chunk:
        parts.append(f"from chunk {m.first_chunk + 1}")
    return " · ".join(parts)
