"""Model invocation, the repair layer and retries.

An invocation renders the context and checks it against the provider's
rules only when the index knows the history is broken (orphans or
unanswered calls), so a healthy invocation costs O(1).
"""

from __future__ import annotations

from dataclasses import replace

from .config import CheckAt, Repair, RetryMode
from .context import Message, Role
from .engine import PLACEHOLDER_TOKENS, Run, call_tools, calls_text
from .events import Effect, Invoke, Retry
from .incidents import IncidentKind
from .notes import NoteKind
from .provider import ProviderError, render, validate
from .state import BatchRecord, CallRecord, CallStatus

__all__ = ["on_invoke", "on_retry"]


def on_invoke(run: Run, event: Invoke) -> None:
    s, ctx = run.s, run.ctx
    if s.pending or s.assistant_stream is not None:
        run.bump("blocked_invocations")
        run.note(NoteKind.BLOCK, f"invocation waits: {len(s.pending)} call(s) pending")
        return
    if s.config.check_at is CheckAt.BEFORE_INVOKE:
        run.budget_check()
    if s.config.repair is not Repair.NONE and (s.orphans or s.unanswered):
        _repair(run)
    run.bump("invocations")
    errors: list[ProviderError] = []
    if s.orphans or s.unanswered:
        # Only a broken history needs rendering: the index already knows it is.
        body = render(ctx, s.config.provider, tools=call_tools(s))
        errors = validate(body, s.config.provider)
    if errors:
        first = errors[0]
        calls = sorted({c for e in errors for c in e.ids})
        # The provider names only its first error, so that is all a retry
        # knows: it re-runs the batch behind that error, not every broken one.
        s.rejected_units = tuple(dict.fromkeys(s.calls[c].batch for c in first.ids
                                               if c in s.calls))
        run.incident(IncidentKind.PROVIDER_REJECTION, tuple(calls),
                     f"the provider answers HTTP {first.status} to the invocation",
                     reason=first.kind, text=first.text)
        run.note(NoteKind.REJECT, f"HTTP {first.status}: {first.text}", tuple(calls))
        if s.retry_streak >= s.config.max_retries:
            _abort(run, first.status)
    else:
        s.rejected_units = None
        s.retry_streak = 0
        if s.record:
            run.note(NoteKind.INVOKE, f"model invoked with {len(ctx)} messages, "
                     f"{ctx.used} tokens")
    run.ceiling("invocation")


def _abort(run: Run, status: int) -> None:
    """The retry budget is spent: the error surfaces and the session is over
    (a driver that goes on starts a fresh one with a ``NewSession``)."""
    s = run.s
    run.bump("session_aborts")
    run.incident(IncidentKind.SESSION_ABORT, (),
                 f"rejected again after {s.retry_streak} retr"
                 f"{'y' if s.retry_streak == 1 else 'ies'} (max_retries "
                 f"{s.config.max_retries}): the runtime gives up, the HTTP {status} surfaces "
                 "and the session ends", reason="retries_exhausted")
    s.rejected_units = None  # nothing left to retry
    s.retry_streak = 0


def _repair(run: Run) -> None:
    s, ctx = run.s, run.ctx
    orphans = sorted(s.orphans, key=lambda m: int(m[1:]))
    dropped: list[Message] = ctx.remove(orphans) if orphans else []
    for cid in sorted(s.unanswered, key=lambda c: int(c[1:])):
        record = s.calls[cid]
        if s.config.repair is Repair.SYNTHESIZE:
            mid = run.new_message_id()
            run.append(Message(mid, Role.TOOL, PLACEHOLDER_TOKENS, s.turn, s.now, call_id=cid,
                               unit_id=record.batch, synthetic=True,
                               text="[tool result unavailable]"))
            run.incident(IncidentKind.SYNTHESIZED_RESULT, (mid, cid),
                         f"repair layer synthesized result {mid} for call {cid}: the model "
                         "will reason over a result no tool produced")
        elif record.batch in ctx:
            dropped.extend(ctx.remove(ctx.members(record.batch)))
    if dropped:
        run.note(NoteKind.REPAIR, "repair layer dropped " + ", ".join(m.id for m in dropped),
                 tuple(m.id for m in dropped))
    run.forget_removed(dropped)
    for unit in dict.fromkeys(s.calls[c].batch for c in list(s.unanswered)):
        run.recheck(unit)


def on_retry(run: Run, event: Retry) -> None:
    s = run.s
    if s.rejected_units is None:
        run.note(NoteKind.RETRY, "retry: the last invocation was not rejected; nothing to do")
        return
    units, s.rejected_units = s.rejected_units, None
    run.bump("retries")
    s.retry_streak += 1
    for unit in units:
        batch = s.batches[unit]
        mid = run.new_message_id()
        new_ids = []
        results = []
        for old in batch.calls:
            record = s.calls[old]
            spec = record.spec
            if s.config.retry is RetryMode.RERUN_BATCH:
                before = s.world.get(spec.path, 0)
                version = run.execute_call(spec)
                if spec.effect is Effect.WRITE:
                    run.incident(IncidentKind.DUPLICATED_SIDE_EFFECT, (old, spec.path),
                                 f"retry re-ran write {spec.tool}({spec.path}) of call {old}: "
                                 f"the file is now v{version}", reason="write")
                elif before != record.version_seen:
                    run.incident(IncidentKind.DUPLICATED_SIDE_EFFECT, (old, spec.path),
                                 f"retry re-ran {spec.tool}({spec.path}) of call {old} against "
                                 f"changed state: it saw v{record.version_seen}, now "
                                 f"v{before}", reason="changed_state")
            else:
                version = record.version_seen
            cid = run.new_call_id()
            new_ids.append(cid)
            s.calls[cid] = CallRecord(cid, mid, spec, CallStatus.DONE, version, 1,
                                      record.tokens or 1, retry_of=old)
            results.append((cid, spec, version, record.tokens or 1))
        s.batches[mid] = BatchRecord(tuple(new_ids), batch.tokens, batch.text)
        run.note(NoteKind.RETRY, f"retry ({s.config.retry}) re-issues batch {unit} as {mid}",
                 (unit, mid))
        run.append(Message(mid, Role.ASSISTANT, batch.tokens, s.turn, s.now,
                           tool_calls=tuple(new_ids), unit_id=mid,
                           text=batch.text or calls_text(tuple(r[1] for r in results))))
        for cid, spec, version, tokens in results:
            rid = run.new_message_id()
            run.append(Message(rid, Role.TOOL, tokens, s.turn, s.now, call_id=cid, unit_id=mid,
                               text=f"{spec.tool} {spec.path} @v{version}".strip()))
            s.calls[cid] = replace(s.calls[cid], target=rid)
        run.after_append(True)
