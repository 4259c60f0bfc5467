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

from .config import CheckAt, Repair, RetryMode, RuntimeConfig, StreamLoss, parse_knob
from .context import Context, Message, Role
from .engine import Run, calls_text
from .errors import TraceError
from .events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
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
from .state import (
    BatchRecord,
    CallRecord,
    CallStatus,
    RuntimeState,
    StepResult,
    evolve,
    initial_state,
)

__all__ = [
    "CallRecord",
    "CallStatus",
    "CheckAt",
    "Repair",
    "RetryMode",
    "RuntimeConfig",
    "RuntimeState",
    "StepResult",
    "StreamLoss",
    "apply",
    "initial_state",
    "parse_knob",
    "step",
]


def step(state: RuntimeState, event: Event, at: float | None = None
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
    run = Run(state)
    handler = _HANDLERS.get(type(event))
    if handler is None:
        raise TraceError(f"step {state.step_index + 1}", f"{event!r} is not an event.")
    handler(run, event)
    state.step_index += 1
    return StepResult(tuple(run.incidents), tuple(run.notes))


# -------------------------------------------------------------------- handlers
def _on_system(run: Run, event: SystemPrompt) -> None:
    run.plain(Role.SYSTEM, event.tokens, event.text or "system prompt")
    run.after_append(True)


def _on_user(run: Run, event: UserMessage) -> None:
    run.s.turn += 1
    message = run.plain(Role.USER, event.tokens, event.text)
    run.s.last_user = message.id
    run.after_append(True)


def _model_may_speak(run: Run, what: str) -> None:
    if run.s.pending:
        raise TraceError(run.where(), f"{what} while call(s) {', '.join(run.s.pending)} are "
                         "pending: the model is not invoked until every result is in.",
                         "deliver or fail the pending calls first.")


def _on_assistant(run: Run, event: AssistantChunk) -> None:
    s = run.s
    _model_may_speak(run, "assistant text")
    stream = s.assistant_stream
    if stream is None:
        mid = run.new_message_id()
        message = Message(mid, Role.ASSISTANT, event.tokens, s.turn, s.now, closed=event.last,
                          unit_id=mid, text=event.text)
        run.append(message)
        if not event.last:
            s.assistant_stream = CallRecord("", mid, CallSpec("assistant"), chunks=1,
                                            tokens=event.tokens, target=mid)
        run.after_append(event.last)
        return
    stream = evolve(stream, chunks=stream.chunks + 1, tokens=stream.tokens + event.tokens,
                     lost=stream.lost or _is_lost(run, stream))
    target = _stream_target(run, stream, Role.ASSISTANT, event.tokens, event.last, None)
    stream = evolve(stream, target=target)
    s.assistant_stream = None if event.last else stream
    if event.last:
        _check_truncation(run, stream, target, "assistant text")
    run.after_append(event.last)


def _stream_target(run: Run, stream: CallRecord, role: Role, tokens: int, last: bool,
                   call_id: str | None) -> str | None:
    """Append one chunk to a stream's message; if that message was evicted,
    do what the ``on_stream_loss`` knob says.  Returns the message now
    receiving the stream (None if the stream lost its message for good)."""
    s, ctx = run.s, run.ctx
    target = stream.target
    if target is not None and target in ctx:
        old = ctx[target]
        ctx.update(evolve(old, tokens=old.tokens + tokens, chunks=old.chunks + 1,
                           closed=last))
        if s.record:
            run.note(NoteKind.CHUNK, f"{target} +{tokens} tokens"
                     + (" (complete)" if last else " (streaming)"), (target,))
        return target
    mode = s.config.on_stream_loss
    if target is not None:
        # Counted once per loss: a stream in error mode fails loudly here
        # (for assistant text, the turn is abandoned), never silently.
        run.bump("stream_losses")
        run.note(NoteKind.STREAM_LOST, f"stream for {target} continues, but {target} was "
                 f"evicted; runtime does '{mode}'", (target,))
    if mode is StreamLoss.REAPPEND:
        mid = run.new_message_id()
        text = f"(continued) {stream.spec.tool} {stream.spec.path}".strip()
        message = Message(mid, role, tokens, s.turn, s.now, call_id=call_id, closed=last,
                          unit_id=stream.batch if call_id else mid, text=text,
                          first_chunk=stream.chunks - 1, chunks=1)
        run.append(message)
        return mid
    return None


def _is_lost(run: Run, stream: CallRecord) -> bool:
    return stream.target is not None and stream.target not in run.ctx


def _check_truncation(run: Run, stream: CallRecord, target: str | None, what: str) -> None:
    message = run.ctx.get(target) if target is not None else None
    if message is None:
        if stream.lost and run.s.config.on_stream_loss is StreamLoss.DROP:
            ident = stream.id or stream.batch
            run.once(IncidentKind.TRUNCATED_PAYLOAD, ident, (ident,),
                     f"{what} of {stream.tokens} tokens was produced but none of it reached "
                     "the context (stream dropped after its message was evicted)")
        return
    if message.first_chunk > 0 and not message.cleared:
        lost = stream.tokens - message.tokens
        run.once(IncidentKind.TRUNCATED_PAYLOAD, message.id,
                 (message.id, *((stream.id,) if stream.id else ())),
                 f"{what} {message.id} holds chunks {message.first_chunk + 1}–{stream.chunks} of "
                 f"{stream.chunks}: the first {lost} of {stream.tokens} tokens are missing")


def _on_batch(run: Run, event: IssueBatch) -> None:
    s = run.s
    _model_may_speak(run, "a tool batch")
    if s.assistant_stream is not None:
        raise TraceError(run.where(), "a tool batch while assistant text is still streaming.",
                         "close the assistant stream (last=true) first.")
    if s.spilled:
        run.reinject({c.path for c in event.calls if c.path})
    mid = run.new_message_id()
    ids = []
    for spec in event.calls:
        cid = run.new_call_id()
        version = run.execute_call(spec)
        s.calls[cid] = CallRecord(cid, mid, spec, version_seen=version)
        s.pending[cid] = None
        run.ctx.mark_pending(mid, cid)
        ids.append(cid)
    s.batches[mid] = BatchRecord(tuple(ids), event.tokens, event.text)
    run.append(Message(mid, Role.ASSISTANT, event.tokens, s.turn, s.now, tool_calls=tuple(ids),
                       unit_id=mid, text=event.text or calls_text(event.calls)))
    run.after_append(False)


def _pending_call(run: Run, call: str, what: str) -> CallRecord | None:
    record = run.s.calls.get(call)
    if record is None:
        raise TraceError(run.where(), f"{what} for unknown call {call!r}.",
                         "calls are numbered c1, c2 … in the order batches issue them.")
    if record.status is not CallStatus.PENDING:
        if record.status is CallStatus.FAILED:
            run.note(NoteKind.CHUNK, f"{what} for {call} ignored: the call already failed")
            return None
        raise TraceError(run.where(), f"{what} for call {call!r}, whose result is already "
                         "complete.", "each call gets one result; its last chunk has last=true.")
    return record


def _on_result(run: Run, event: ResultChunk) -> None:
    s, ctx = run.s, run.ctx
    record = _pending_call(run, event.call, "a result chunk")
    if record is None:
        return
    record = evolve(record, chunks=record.chunks + 1, tokens=record.tokens + event.tokens,
                     lost=record.lost or _is_lost(run, record))
    spec = record.spec
    if record.target is None and record.chunks == 1:
        mid = run.new_message_id()
        run.append(Message(mid, Role.TOOL, event.tokens, s.turn, s.now, call_id=record.id,
                           closed=event.last, unit_id=record.batch,
                           text=f"{spec.tool} {spec.path} @v{record.version_seen}".strip()))
        target: str | None = mid
    elif record.target is not None and record.target not in ctx and \
            s.config.on_stream_loss is StreamLoss.ERROR:
        run.note(NoteKind.STREAM_LOST, f"stream for {record.target} errors: its message was "
                 "evicted; the call fails loudly", (record.target,))
        s.calls[record.id] = record
        _fail(run, record, "stream error: result message removed mid-stream", 20)
        run.after_append(True)
        return
    else:
        target = _stream_target(run, record, Role.TOOL, event.tokens, event.last, record.id)
    record = evolve(record, target=target)
    s.calls[record.id] = record
    if event.last:
        record = run.close_call(record, CallStatus.DONE)
        _check_truncation(run, record, target, "result")
    run.recheck(record.batch)
    run.after_append(event.last and not ctx.pending_in(record.batch))


def _fail(run: Run, record: CallRecord, reason: str, tokens: int) -> None:
    s, ctx = run.s, run.ctx
    if record.target is not None and record.target in ctx:
        removed = ctx.remove([record.target])
        run.note(NoteKind.EVICT, f"dropped partial result {record.target}", (record.target,))
        run.forget_removed(removed)
    record = run.close_call(record, CallStatus.FAILED)
    mid = run.new_message_id()
    run.append(Message(mid, Role.TOOL, tokens, s.turn, s.now, call_id=record.id,
                       unit_id=record.batch, text=f"error: {reason}"))
    s.calls[record.id] = replace(record, target=mid)
    run.recheck(record.batch)


def _on_failure(run: Run, event: ToolFailure) -> None:
    record = _pending_call(run, event.call, f"a tool {event.reason}")
    if record is None:
        return
    _fail(run, record, f"tool {event.reason}", event.tokens)
    run.after_append(not run.ctx.pending_in(record.batch))


def _on_check(run: Run, event: BudgetCheck) -> None:
    run.budget_check()


def _on_write(run: Run, event: ExternalWrite) -> None:
    world = run.s.world
    world[event.path] = world.get(event.path, 0) + 1
    run.note(NoteKind.WORLD, f"{event.path} changed outside the agent (now v{world[event.path]})")


def _on_session(run: Run, event: NewSession) -> None:
    s = run.s
    if s.pending or s.assistant_stream is not None:
        busy = ", ".join(s.pending) or "the assistant's text"
        raise TraceError(run.where(), f"a new session while {busy} is still in flight.",
                         "a session ends between turns: deliver or fail the pending calls "
                         "first.")
    run.bump("sessions")
    run.note(NoteKind.SESSION, f"a new session starts: {len(s.context)} message(s) of the "
             "old session are dropped")
    s.context = Context()
    s.calls, s.batches, s.pending, s.spilled = {}, {}, {}, {}
    s.turn = 0
    s.last_user = None
    s.rejected_units = None
    s.retry_streak = 0
    s.over_ceiling = s.deferred = False
    s.orphans, s.unanswered, s.reported = set(), set(), set()


_HANDLERS: dict[type, Callable[[Run, Any], None]] = {
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
}


