"""Model invocation, the repair layer and retries.

An invocation checks the context against the provider's rules only when
the index knows the history is broken (orphans or unanswered calls), so a
healthy invocation costs O(1); a broken one costs O(context), read straight
from the messages (:func:`~.provider.pairing.pairing_errors`, which answers
what rendering the request and validating it would).
"""

from __future__ import annotations

from dataclasses import replace

from .actions import PLACEHOLDER_TOKENS
from .budget import after_append, budget_check, ceiling
from .config import CheckAt, Repair, RetryMode
from .context import Message, Role
from .engine import EventWork, calls_text
from .events import Effect, Invoke, Retry
from .incidents import IncidentKind
from .notes import NoteKind
from .provider import ProviderError
from .provider.pairing import pairing_errors
from .server import is_paired
from .server_events import server_view, store_response
from .state import BatchRecord, CallRecord, CallStatus, CounterName

__all__ = ["on_invoke", "on_retry"]


def on_invoke(work: EventWork, event: Invoke) -> None:
    state, ctx = work.state, work.ctx
    if state.pending or state.assistant_stream is not None:
        work.bump(CounterName.BLOCKED_INVOCATIONS)
        work.note(NoteKind.BLOCK, f"invocation waits: {len(state.pending)} call(s) pending")
        return
    if state.config.check_at is CheckAt.BEFORE_INVOKE:
        budget_check(work)
    if state.config.repair is not Repair.NONE and (state.orphans or state.unanswered):
        _repair(work)
    work.bump(CounterName.INVOCATIONS)
    # The context the model sees: the client's copy, unless the provider's
    # server holds or edits part of it (None: the client's copy, at no cost).
    view = server_view(work, event)
    errors: list[ProviderError] = []
    compacted = state.server is not None and bool(state.server.blocks)  # Anthropic's
    if view is not None and (event.chained or compacted):
        if not is_paired(view):  # assembled by the server: read whole
            errors = pairing_errors(view, state.config.provider)
    elif state.orphans or state.unanswered or state.reasoned:
        # Only a broken history needs checking: the index already knows it is.
        # (A server that clears tool results keeps every block: same pairing.)
        errors = pairing_errors(ctx if view is None else view, state.config.provider)
    if errors:
        first = errors[0]
        calls = sorted({c for e in errors for c in e.ids})
        # The provider names only its first error, so that is all a retry
        # knows: it re-runs the batch behind that error, not every broken one.
        state.rejected_units = tuple(
            dict.fromkeys(state.calls[c].batch for c in first.ids if c in state.calls)
        )
        work.incident(
            IncidentKind.PROVIDER_REJECTION,
            tuple(calls),
            f"the provider answers HTTP {first.status} to the invocation",
            reason=first.kind,
            text=first.text,
        )
        work.note(NoteKind.REJECT, f"HTTP {first.status}: {first.text}", tuple(calls))
        if state.retry_streak >= state.config.max_retries:
            _abort(work, first.status)
    else:
        state.rejected_units = None
        state.retry_streak = 0
        store_response(work, view, event)
        if state.record:
            seen = ctx if view is None else view
            work.note(
                NoteKind.INVOKE, f"model invoked with {len(seen)} messages, {seen.used} tokens"
            )
    if view is None:
        ceiling(work, "invocation")
    else:
        ceiling(work, "invocation (the context the model sees, with the server's side)", view.used)


def _abort(work: EventWork, status: int) -> None:
    """The retry budget is spent: the error surfaces and the session is over
    (a driver that goes on starts a fresh one with a ``NewSession``)."""
    state = work.state
    work.bump(CounterName.SESSION_ABORTS)
    work.incident(
        IncidentKind.SESSION_ABORT,
        (),
        f"rejected again after {state.retry_streak} retr"
        f"{'y' if state.retry_streak == 1 else 'ies'} (max_retries "
        f"{state.config.max_retries}): the runtime gives up, the HTTP {status} surfaces "
        "and the session ends",
        reason="retries_exhausted",
    )
    state.rejected_units = None  # nothing left to retry
    state.retry_streak = 0


def _repair(work: EventWork) -> None:
    state, ctx = work.state, work.ctx
    orphans = sorted(state.orphans, key=lambda m: int(m[1:]))
    dropped: list[Message] = ctx.remove(orphans) if orphans else []
    for cid in sorted(state.unanswered, key=lambda c: int(c[1:])):
        record = state.calls[cid]
        if state.config.repair is Repair.SYNTHESIZE:
            mid = work.new_message_id()
            work.append(
                Message(
                    mid,
                    Role.TOOL,
                    PLACEHOLDER_TOKENS,
                    state.turn,
                    state.now,
                    call_id=cid,
                    unit_id=record.batch,
                    synthetic=True,
                    text="[tool result unavailable]",
                )
            )
            work.incident(
                IncidentKind.SYNTHESIZED_RESULT,
                (mid, cid),
                f"repair layer synthesized result {mid} for call {cid}: the model "
                "will reason over a result no tool produced",
            )
        elif record.batch in ctx:
            dropped.extend(ctx.remove(ctx.members(record.batch)))
    if dropped:
        work.note(
            NoteKind.REPAIR,
            "repair layer dropped " + ", ".join(m.id for m in dropped),
            tuple(m.id for m in dropped),
        )
    work.forget_removed(dropped)
    for unit in dict.fromkeys(state.calls[c].batch for c in list(state.unanswered)):
        work.recheck(unit)


def on_retry(work: EventWork, event: Retry) -> None:
    state = work.state
    if state.rejected_units is None:
        work.note(NoteKind.RETRY, "retry: the last invocation was not rejected; nothing to do")
        return
    units, state.rejected_units = state.rejected_units, None
    work.bump(CounterName.RETRIES)
    state.retry_streak += 1
    for unit in units:
        batch = state.batches[unit]
        mid = work.new_message_id()
        new_ids = []
        results = []
        for old in batch.calls:
            record = state.calls[old]
            spec = record.spec
            if state.config.retry is RetryMode.RERUN_BATCH:
                before = state.world.get(spec.path, 0)
                version = work.execute_call(spec)
                if spec.effect is Effect.WRITE:
                    work.incident(
                        IncidentKind.DUPLICATED_SIDE_EFFECT,
                        (old, spec.path),
                        f"retry re-ran write {spec.tool}({spec.path}) of call {old}: "
                        f"the file is now v{version}",
                        reason="write",
                    )
                elif before != record.version_seen:
                    work.incident(
                        IncidentKind.DUPLICATED_SIDE_EFFECT,
                        (old, spec.path),
                        f"retry re-ran {spec.tool}({spec.path}) of call {old} against "
                        f"changed state: it saw v{record.version_seen}, now "
                        f"v{before}",
                        reason="changed_state",
                    )
            else:
                version = record.version_seen
            cid = work.new_call_id()
            new_ids.append(cid)
            state.calls[cid] = CallRecord(
                cid, mid, spec, CallStatus.DONE, version, 1, record.tokens or 1, retry_of=old
            )
            results.append((cid, spec, version, record.tokens or 1))
        state.batches[mid] = BatchRecord(tuple(new_ids), batch.tokens, batch.text)
        work.note(
            NoteKind.RETRY,
            f"retry ({state.config.retry}) re-issues batch {unit} as {mid}",
            (unit, mid),
        )
        work.append(
            Message(
                mid,
                Role.ASSISTANT,
                batch.tokens,
                state.turn,
                state.now,
                tool_calls=tuple(new_ids),
                unit_id=mid,
                text=batch.text or calls_text(tuple(r[1] for r in results)),
            )
        )
        for cid, spec, version, tokens in results:
            rid = work.new_message_id()
            work.append(
                Message(
                    rid,
                    Role.TOOL,
                    tokens,
                    state.turn,
                    state.now,
                    call_id=cid,
                    unit_id=mid,
                    text=f"{spec.tool} {spec.path} @v{version}".strip(),
                )
            )
            state.calls[cid] = replace(state.calls[cid], target=rid)
        after_append(work, True)
