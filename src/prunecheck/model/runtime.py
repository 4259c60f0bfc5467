"""The runtime's step function and the handlers of the events.

``step(state, event)`` is the pure form: it returns a new state and what
happened, leaving ``state`` untouched.  ``apply(state, event)`` is the same
transition in place, for drivers that own their state linearly (the
simulator, long replays); ``step(s, e)`` equals ``apply(copy(s), e)``.

Nothing here does I/O or reads a clock: time comes in with the event
(``at``), and the policy is the only foreign code called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .budget import after_append, budget_check, reinject
from .config import StreamLoss
from .context import Context, Message, Role
from .engine import EventWork, calls_text
from .errors import TraceError
from .events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    ClearToolUses,
    Compaction,
    Event,
    ExternalWrite,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from .incidents import IncidentKind
from .invocation import on_invoke, on_retry
from .notes import NoteKind
from .server import ServerState
from .server_events import hold_output, on_clear_tool_uses, on_compaction
from .state import (
    BatchRecord,
    CallRecord,
    CallStatus,
    CounterName,
    RuntimeState,
    StepResult,
    evolve,
)

__all__ = ["apply", "step"]


def step(
    state: RuntimeState, event: Event, at: float | None = None
) -> tuple[RuntimeState, StepResult]:
    """The pure transition: a new state and what happened; ``state`` is untouched."""
    new = state.copy()
    return new, apply(new, event, at)


def apply(state: RuntimeState, event: Event, at: float | None = None) -> StepResult:
    """Apply one event in place; return its incidents (and notes if recording).

    Raises
    ------
    TraceError
        if the event is impossible in this state (a result for a call that
        is not pending, the model speaking while calls are pending …).
    PolicyError
        if the policy raised or returned something invalid.
    """
    state.now = float(state.step_index) if at is None else at
    work = EventWork(state)
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TraceError(f"step {state.step_index + 1}", f"{event!r} is not an event.")
    handler(work, event)
    state.step_index += 1
    return StepResult(tuple(work.incidents), tuple(work.notes))


# -------------------------------------------------------------------- handlers
def _on_system(work: EventWork, event: SystemPrompt) -> None:
    work.plain(Role.SYSTEM, event.tokens, event.text or "system prompt")
    after_append(work, True)


def _on_user(work: EventWork, event: UserMessage) -> None:
    if work.state.pending:
        work.bump(CounterName.MID_BATCH_MESSAGES)
    work.state.turn += 1
    message = work.plain(Role.USER, event.tokens, event.text)
    work.state.last_user = message.id
    after_append(work, True)


def _model_may_speak(work: EventWork, what: str) -> None:
    if work.state.pending:
        raise TraceError(
            work.where(),
            f"{what} while call(s) {', '.join(work.state.pending)} are "
            "pending: the model is not invoked until every result is in.",
            "deliver or fail the pending calls first.",
        )


def _on_assistant(work: EventWork, event: AssistantChunk) -> None:
    state = work.state
    _model_may_speak(work, "assistant text")
    stream = state.assistant_stream
    if stream is None:
        mid = work.new_message_id()
        message = Message(
            mid,
            Role.ASSISTANT,
            event.tokens,
            state.turn,
            state.now,
            closed=event.last,
            unit_id=mid,
            text=event.text,
        )
        work.append(message)
        hold_output(work, message)
        if not event.last:
            state.assistant_stream = CallRecord(
                "", mid, CallSpec("assistant"), chunks=1, tokens=event.tokens, target=mid
            )
        after_append(work, event.last)
        return
    stream = evolve(
        stream,
        chunks=stream.chunks + 1,
        tokens=stream.tokens + event.tokens,
        lost=stream.lost or _is_lost(work, stream),
    )
    target = _stream_target(work, stream, Role.ASSISTANT, event.tokens, event.last, None)
    if target != stream.target:
        stream = evolve(stream, target=target)
    if state.server is not None and target is not None:
        hold_output(work, work.ctx[target])
    state.assistant_stream = None if event.last else stream
    if event.last:
        _check_truncation(work, stream, target, "assistant text")
    after_append(work, event.last)


def _stream_target(
    work: EventWork, stream: CallRecord, role: Role, tokens: int, last: bool, call_id: str | None
) -> str | None:
    """Append one chunk to a stream's message; if that message was evicted,
    do what the ``on_stream_loss`` knob says.  Returns the message now
    receiving the stream (None if the stream lost its message for good)."""
    state, ctx = work.state, work.ctx
    target = stream.target
    if target is not None and target in ctx:
        old = ctx[target]
        ctx.update(evolve(old, tokens=old.tokens + tokens, chunks=old.chunks + 1, closed=last))
        if state.record:
            work.note(
                NoteKind.CHUNK,
                f"{target} +{tokens} tokens" + (" (complete)" if last else " (streaming)"),
                (target,),
            )
        return target
    mode = state.config.on_stream_loss
    if target is not None:
        # Counted once per loss: a stream in error mode fails loudly here
        # (for assistant text, the turn is abandoned), never silently.
        work.bump(CounterName.STREAM_LOSSES)
        work.note(
            NoteKind.STREAM_LOST,
            f"stream for {target} continues, but {target} was evicted; runtime does '{mode}'",
            (target,),
        )
    if mode is StreamLoss.REAPPEND:
        mid = work.new_message_id()
        text = f"(continued) {stream.spec.tool} {stream.spec.path}".strip()
        message = Message(
            mid,
            role,
            tokens,
            state.turn,
            state.now,
            call_id=call_id,
            closed=last,
            unit_id=stream.batch if call_id else mid,
            text=text,
            first_chunk=stream.chunks - 1,
            chunks=1,
        )
        work.append(message)
        return mid
    return None


def _is_lost(work: EventWork, stream: CallRecord) -> bool:
    return stream.target is not None and stream.target not in work.ctx


def _check_truncation(work: EventWork, stream: CallRecord, target: str | None, what: str) -> None:
    message = work.ctx.get(target) if target is not None else None
    if message is None:
        if stream.lost and work.state.config.on_stream_loss is StreamLoss.DROP:
            ident = stream.id or stream.batch
            work.once(
                IncidentKind.TRUNCATED_PAYLOAD,
                ident,
                (ident,),
                f"{what} of {stream.tokens} tokens was produced but none of it reached "
                "the context (stream dropped after its message was evicted)",
            )
        return
    if message.first_chunk > 0 and not message.cleared:
        lost = stream.tokens - message.tokens
        work.once(
            IncidentKind.TRUNCATED_PAYLOAD,
            message.id,
            (message.id, *((stream.id,) if stream.id else ())),
            f"{what} {message.id} holds chunks {message.first_chunk + 1}–{stream.chunks} of "
            f"{stream.chunks}: the first {lost} of {stream.tokens} tokens are missing",
        )


def _on_batch(work: EventWork, event: IssueBatch) -> None:
    state = work.state
    _model_may_speak(work, "a tool batch")
    if state.assistant_stream is not None:
        raise TraceError(
            work.where(),
            "a tool batch while assistant text is still streaming.",
            "close the assistant stream (last=true) first.",
        )
    if state.spilled:
        reinject(work, {c.path for c in event.calls if c.path})
    thought = work.new_message_id() if event.reasoning > 0 else ""
    mid = work.new_message_id()
    ids = []
    for spec in event.calls:
        cid = work.new_call_id()
        version = work.execute_call(spec)
        state.calls[cid] = CallRecord(cid, mid, spec, version_seen=version)
        state.pending[cid] = None
        work.ctx.mark_pending(mid, cid)
        ids.append(cid)
    state.batches[mid] = BatchRecord(tuple(ids), event.tokens, event.text)
    message = Message(
        mid,
        Role.ASSISTANT,
        event.tokens,
        state.turn,
        state.now,
        tool_calls=tuple(ids),
        unit_id=mid,
        text=event.text or calls_text(event.calls),
        after_thought=thought,
    )
    if thought:  # the reasoning item, first, in the batch's unit
        state.reasoned = True
        item = Message(thought, Role.ASSISTANT, event.reasoning, state.turn, state.now,
                       unit_id=mid, text="(reasoning)", thought=True)  # fmt: skip
        work.append(item)
        hold_output(work, item)
    work.append(message)
    hold_output(work, message)
    after_append(work, False)


def _pending_call(work: EventWork, call: str, what: str) -> CallRecord | None:
    record = work.state.calls.get(call)
    if record is None:
        raise TraceError(
            work.where(),
            f"{what} for unknown call {call!r}.",
            "calls are numbered c1, c2 … in the order batches issue them.",
        )
    if record.status is not CallStatus.PENDING:
        if record.status is CallStatus.FAILED:
            work.note(NoteKind.CHUNK, f"{what} for {call} ignored: the call already failed")
            return None
        raise TraceError(
            work.where(),
            f"{what} for call {call!r}, whose result is already complete.",
            "each call gets one result; its last chunk has last=true.",
        )
    return record


def _on_result(work: EventWork, event: ResultChunk) -> None:
    state, ctx = work.state, work.ctx
    record = _pending_call(work, event.call, "a result chunk")
    if record is None:
        return
    record = evolve(
        record,
        chunks=record.chunks + 1,
        tokens=record.tokens + event.tokens,
        lost=record.lost or _is_lost(work, record),
    )
    spec = record.spec
    if record.target is None and record.chunks == 1:
        mid = work.new_message_id()
        work.append(
            Message(
                mid,
                Role.TOOL,
                event.tokens,
                state.turn,
                state.now,
                call_id=record.id,
                closed=event.last,
                unit_id=record.batch,
                text=f"{spec.tool} {spec.path} @v{record.version_seen}".strip(),
            )
        )
        target: str | None = mid
    elif (
        record.target is not None
        and record.target not in ctx
        and state.config.on_stream_loss is StreamLoss.ERROR
    ):
        work.note(
            NoteKind.STREAM_LOST,
            f"stream for {record.target} errors: its message was evicted; the call fails loudly",
            (record.target,),
        )
        state.calls[record.id] = record
        _fail(work, record, "stream error: result message removed mid-stream", 20)
        after_append(work, True)
        return
    else:
        target = _stream_target(work, record, Role.TOOL, event.tokens, event.last, record.id)
    if target != record.target:  # the same record otherwise (one fewer copy a chunk)
        record = evolve(record, target=target)
    state.calls[record.id] = record
    if event.last:
        record = work.close_call(record, CallStatus.DONE)
        _check_truncation(work, record, target, "result")
    work.recheck(record.batch)
    after_append(work, event.last and not ctx.pending_in(record.batch))


def _fail(work: EventWork, record: CallRecord, reason: str, tokens: int) -> None:
    state, ctx = work.state, work.ctx
    if record.target is not None and record.target in ctx:
        removed = ctx.remove([record.target])
        work.note(NoteKind.EVICT, f"dropped partial result {record.target}", (record.target,))
        work.forget_removed(removed)
    record = work.close_call(record, CallStatus.FAILED)
    mid = work.new_message_id()
    work.append(
        Message(
            mid,
            Role.TOOL,
            tokens,
            state.turn,
            state.now,
            call_id=record.id,
            unit_id=record.batch,
            text=f"error: {reason}",
        )
    )
    state.calls[record.id] = replace(record, target=mid)
    work.recheck(record.batch)


def _on_failure(work: EventWork, event: ToolFailure) -> None:
    record = _pending_call(work, event.call, f"a tool {event.reason}")
    if record is None:
        return
    _fail(work, record, f"tool {event.reason}", event.tokens)
    after_append(work, not work.ctx.pending_in(record.batch))


def _on_check(work: EventWork, event: BudgetCheck) -> None:
    budget_check(work)


def _on_write(work: EventWork, event: ExternalWrite) -> None:
    world = work.state.world
    world[event.path] = world.get(event.path, 0) + 1
    work.note(NoteKind.WORLD, f"{event.path} changed outside the agent (now v{world[event.path]})")


def _on_session(work: EventWork, event: NewSession) -> None:
    state = work.state
    if state.pending or state.assistant_stream is not None:
        busy = ", ".join(state.pending) or "the assistant's text"
        raise TraceError(
            work.where(),
            f"a new session while {busy} is still in flight.",
            "a session ends between turns: deliver or fail the pending calls first.",
        )
    work.bump(CounterName.SESSIONS)
    work.note(
        NoteKind.SESSION,
        f"a new session starts: {len(state.context)} message(s) of the old session are dropped",
    )
    state.context = Context()
    state.calls, state.batches, state.pending, state.spilled = {}, {}, {}, {}
    state.turn = 0
    state.last_user = None
    state.rejected_units = None
    state.retry_streak = 0
    state.over_ceiling = state.deferred = False
    state.orphans, state.unanswered, state.reported = set(), set(), set()
    if state.server is not None:  # a new conversation: nothing stored to chain to
        edit = state.server.edit
        state.server = None if edit is None else ServerState(edit=edit)


_HANDLERS: dict[type, Callable[[EventWork, Any], None]] = {
    SystemPrompt: _on_system,
    UserMessage: _on_user,
    AssistantChunk: _on_assistant,
    IssueBatch: _on_batch,
    ResultChunk: _on_result,
    ToolFailure: _on_failure,
    BudgetCheck: _on_check,
    Invoke: on_invoke,
    Retry: on_retry,
    ExternalWrite: _on_write,
    NewSession: _on_session,
    Compaction: on_compaction,
    ClearToolUses: on_clear_tool_uses,
}
