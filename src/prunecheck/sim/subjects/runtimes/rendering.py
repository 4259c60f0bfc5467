"""Rendering a model event for a runtime under test.

The harness's *shadow* (the model runtime fed the same events, nothing
pruned) names every message and call; :func:`render` turns one event,
before the shadow applies it, into the :class:`~.stimuli.Stimulus` a
runtime is fed — the event with those names, its text sized in words and
marked (``⟦m3⟧``, ``⟦c2.0⟧`` …) so that the judge recognises what the
runtime's request holds — and says what the judge should expect of the
step: the stream it completes, the call it fails, the message it appends.
"""

from __future__ import annotations

from dataclasses import dataclass

from prunecheck.model.errors import TraceError
from prunecheck.model.events import (
    AssistantChunk,
    ClearToolUses,
    Compaction,
    Effect,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.events import ExternalWrite as Write
from prunecheck.model.state import CallStatus, RuntimeState
from prunecheck.sim.subjects.runtimes.stimuli import Call, Stimulus

__all__ = ["Rendered", "render"]


@dataclass(frozen=True, slots=True)
class Rendered:
    """One event as the runtime under test is fed it, and what to expect.

    Attributes
    ----------
    stimulus : Stimulus or None
        What the runtime is fed; None if nothing (a retry with nothing
        rejected, a result for a call that is not pending).
    completed : tuple of (str, str) or None
        The stream this step completes: ``("call", c)`` or ``("msg", m)``.
    failed : str or None
        The call this step fails (its partial result may go).
    appended : tuple of (str, str, int) or None
        The message (kind, shadow id, chunk; -1 for a whole message) this
        step appends: if the request lacks it afterwards, the runtime
        pruned it within the step.
    """

    stimulus: Stimulus | None
    completed: tuple[str, str] | None = None
    failed: str | None = None
    appended: tuple[str, str, int] | None = None


def _text(mark: str, tokens: int, words: str = "") -> str:
    """``tokens`` words: the marker, then the event's own words, then filler."""
    body = [mark, *words.split()][: max(1, tokens)]
    return " ".join(body) + " ~" * max(0, tokens - len(body))


def render(shadow: RuntimeState, event: Event, *, rejected: bool) -> Rendered:
    """``event`` rendered in the shadow's names, before the shadow applies it
    (``rejected``: the last invocation was rejected, so a retry is fed)."""
    mid = f"m{shadow.next_message}"
    if isinstance(event, Compaction | ClearToolUses) or (
        isinstance(event, Invoke) and event.chained
    ):
        raise TraceError(
            f"step {shadow.step_index + 1}",
            f"a server-side event ({event.kind}) fed to a runtime under test: a runtime "
            "under test sends its whole request itself, so the provider's server state is "
            "not modelled for it.",
            "replay the trace with a policy (the model runtime) instead.",
        )
    if isinstance(event, SystemPrompt | UserMessage):
        stimulus = Stimulus(event, mid, _text(f"⟦{mid}⟧", event.tokens, event.text))
        return Rendered(stimulus, appended=("msg", mid, -1))
    if isinstance(event, AssistantChunk):
        stream = shadow.assistant_stream
        sid, k = (mid, 0) if stream is None else (stream.batch, stream.chunks)
        return Rendered(
            Stimulus(event, sid, _text(f"⟦{sid}.{k}⟧", event.tokens)),
            completed=("msg", sid) if event.last else None,
            appended=("msg", sid, k),
        )
    if isinstance(event, IssueBatch):
        calls = tuple(
            Call(
                f"c{shadow.next_call + k}",
                c.tool,
                {"path": c.path},
                "write" if c.effect is Effect.WRITE else "read",
            )
            for k, c in enumerate(event.calls)
        )
        stimulus = Stimulus(event, mid, _text(f"⟦{mid}⟧", event.tokens), calls)
        return Rendered(stimulus, appended=("call", mid, -1))
    if isinstance(event, ResultChunk | ToolFailure):
        record = shadow.calls.get(event.call)
        if record is None or record.status is not CallStatus.PENDING:
            return Rendered(None)  # the shadow ignores it (or raises)
        if isinstance(event, ToolFailure):
            text = _text(f"⟦{event.call}.x⟧ error: tool {event.reason}", event.tokens)
            return Rendered(
                Stimulus(event, event.call, text),
                failed=event.call,
                appended=("result", event.call, -1),
            )
        text = _text(f"⟦{event.call}.{record.chunks}⟧", event.tokens)
        return Rendered(
            Stimulus(event, event.call, text),
            completed=("call", event.call) if event.last else None,
            appended=("result", event.call, record.chunks),
        )
    if isinstance(event, Retry):
        return Rendered(Stimulus(event) if rejected else None)
    if isinstance(event, Write):
        return Rendered(Stimulus(event, event.path))
    return Rendered(Stimulus(event))  # a budget check, an invocation, a new session
