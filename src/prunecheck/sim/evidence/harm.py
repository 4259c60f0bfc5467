"""Running a reproduction past its violation to the harm it causes.

A shrunk reproduction stops at the step of the violation: the prune that
split a unit, the eviction of a message still streaming.  Nothing fails
yet; the harm comes later, when the runtime goes on as it always does.
:func:`extend_to_harm` appends what the runtime does next, and nothing
else — the rest of each pending result and of an open assistant text, the
model invocation (which the provider rejects, with its text), the retry
the runtime makes after a rejection (which may re-run a side effect) and
the invocation after it — and keeps the extension only if it shows a
violation the trace did not reach: an HTTP 400, a duplicated side effect,
a truncated payload read back, a synthesized result.  When the violation
itself is the end (a provider rejection with nothing left to retry), the
trace is returned as it is.

Only the runtime's own next steps are appended (no user message, no
external write, no new batch), so what the narrative shows after the
violation is what that runtime would do, caused by it.

Examples
--------
>>> from prunecheck.model.events import SystemPrompt, UserMessage, IssueBatch, CallSpec
>>> from prunecheck.model.events import ResultChunk
>>> from prunecheck.model.policies import builtin_policy
>>> from prunecheck.model.model_system import ModelSystem
>>> from prunecheck.model.config import RuntimeConfig
>>> from prunecheck.model.trace import Trace
>>> events = (SystemPrompt(100), UserMessage(100),
...           IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 100),
...           ResultChunk("c1", 900))
>>> trace = Trace("lowest_salience", RuntimeConfig(budget=1000, hard_ceiling=2000), events)
>>> longer = extend_to_harm(trace, ModelSystem(builtin_policy("lowest_salience")))
>>> [e.kind for e in longer.events[4:]], longer.meta["harm"]["kinds"]
(['result', 'invoke', 'retry', 'invoke'], ['provider_rejection'])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.events import AssistantChunk, Event, Invoke, ResultChunk, Retry
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import System
from prunecheck.model.trace import Trace

__all__ = ["HARM_KINDS", "MAX_EXTENSION", "extend_to_harm"]

#: The violations that are harm: what a user sees after a bad prune.
HARM_KINDS = frozenset(
    {
        IncidentKind.PROVIDER_REJECTION,
        IncidentKind.DUPLICATED_SIDE_EFFECT,
        IncidentKind.TRUNCATED_PAYLOAD,
        IncidentKind.SYNTHESIZED_RESULT,
    }
)
#: Events an extension may add.
MAX_EXTENSION = 12

#: Tokens of a result's or text's closing chunk that the extension delivers.
_CLOSING_TOKENS = 40


def _next(state: RuntimeState, invoked: int, retried: bool) -> Event | None:
    """What the runtime does next, or None when the story is told."""
    if state.assistant_stream is not None:
        return AssistantChunk(_CLOSING_TOKENS, last=True)
    if state.pending:
        call = min(state.pending, key=lambda c: int(c[1:]))
        return ResultChunk(call, _CLOSING_TOKENS, last=True)
    if state.rejected_units is not None and not retried:
        return Retry()
    if invoked == 0 or (retried and invoked == 1):
        return Invoke()
    return None


def extend_to_harm(trace: Trace, system: System[Any], *, limit: int = MAX_EXTENSION) -> Trace:
    """``trace`` with the runtime's next steps appended up to the harm its
    violation causes (see the module's doc); ``trace`` itself when they
    show no new violation, or when it cannot be replayed.  ``meta.harm``
    records where the violation was and what the extension showed.

    Parameters
    ----------
    trace : Trace
        A trace whose replay shows a violation.
    system : System
        What replays it (the model runtime with its policy, or a runtime
        under test); the next steps are read from its ground truth.
    limit : int
        Events the extension may add.
    """
    state = system.initial(trace.config)
    seen: set[IncidentKind] = set()
    try:
        for i, event in enumerate(trace.events):
            at = trace.times[i] if trace.times is not None else None
            result = system.apply(state, event, at)
            seen.update(x.kind for x in result.incidents if x.is_violation)
    except (TraceError, PolicyError):
        return trace
    if not seen:
        return trace
    now = trace.times[-1] if trace.times else None
    added: list[Event] = []
    times: list[float] = []
    new: set[IncidentKind] = set()
    invoked, retried = 0, False
    while len(added) < limit:
        follow = _next(system.truth(state), invoked, retried)
        if follow is None:
            break
        at = None if now is None else now + len(added) + 1.0
        try:
            result = system.apply(state, follow, at)
        except (TraceError, PolicyError):
            break
        added.append(follow)
        if at is not None:
            times.append(at)
        invoked += isinstance(follow, Invoke)
        retried = retried or isinstance(follow, Retry)
        kinds = {x.kind for x in result.incidents}
        new.update(k for k in kinds if k in HARM_KINDS and k not in seen)
        if IncidentKind.SESSION_ABORT in kinds:
            break
    if not new:
        return trace
    harm = {
        "violation_at": len(trace.events),
        "added": len(added),
        "kinds": sorted(k.value for k in new),
    }
    expect = sorted(
        {*trace.meta.get("expect", {}).get("violations", []), *(k.value for k in seen | new)}
    )
    return replace(
        trace,
        events=(*trace.events, *added),
        times=None if trace.times is None else (*trace.times, *times),
        meta={**trace.meta, "harm": harm, "expect": {"violations": expect}},
    )
