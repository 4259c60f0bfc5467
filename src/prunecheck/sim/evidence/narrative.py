"""Readable accounts of a replay: a step-by-step narrative (text or
markdown) with incidents marked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from prunecheck.model.events import (
    AssistantChunk,
    ClearToolUses,
    Compaction,
    Event,
    ExternalWrite,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import Incident
from prunecheck.model.trace import Trace, TraceStep
from prunecheck.sim.subjects.policy_spec import RUNTIME_PREFIX, parse_spec_or_none

__all__ = ["NOTABLE_GAP", "Narrative", "describe_event", "later", "narrate", "narrate_stream"]


def describe_event(event: Event) -> str:
    """One line for an event, in the vocabulary of the design notes."""
    if isinstance(event, SystemPrompt):
        return f"system prompt ({event.tokens} tokens)"
    if isinstance(event, UserMessage):
        text = f": “{event.text}”" if event.text else ""
        return f"user message ({event.tokens} tokens){text}"
    if isinstance(event, AssistantChunk):
        state = "last chunk" if event.last else "chunk"
        return f"assistant text {state} ({event.tokens} tokens)"
    if isinstance(event, IssueBatch):
        calls = ", ".join(
            f"{c.tool}({c.path})" + (" [write]" if c.effect == "write" else "") for c in event.calls
        )
        return f"assistant issues a batch of {len(event.calls)} call(s): {calls}"
    if isinstance(event, ResultChunk):
        state = "result" if event.last else "result chunk"
        return f"{state} for {event.call} ({event.tokens} tokens)"
    if isinstance(event, ToolFailure):
        return f"tool {event.reason} for {event.call}"
    if isinstance(event, ExternalWrite):
        return f"{event.path} is changed outside the agent"
    if isinstance(event, Invoke) and event.chained:
        return "model invocation chained by previous_response_id (the server holds the rest)"
    if isinstance(event, Compaction):
        return f"the server compacts the response it holds ({event.tokens}-token compaction item)"
    if isinstance(event, ClearToolUses):
        return "the client turns on the server's context editing (clear_tool_uses)"
    return {
        "check": "budget check",
        "invoke": "model invocation",
        "retry": "retry after rejection",
        "session": "a new session starts (fresh context)",
    }[event.kind]


@dataclass(slots=True)
class Narrative:
    """Lines of a narrative plus the incidents met, for exit codes."""

    lines: list[str] = field(default_factory=list)
    incidents: list[Incident] = field(default_factory=list)

    @property
    def violations(self) -> list[Incident]:
        return [i for i in self.incidents if i.is_violation]

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def narrate(trace: Trace, steps: Iterable[TraceStep], *, markdown: bool = False) -> Narrative:
    """Render replayed steps.  ``markdown`` gives a numbered list with the
    provider's text in code spans; otherwise plain text for a terminal."""
    out = Narrative()
    for line in narrate_stream(trace, steps, out.incidents.append, markdown=markdown):
        out.lines.append(line)
    return out


def narrate_stream(
    trace: Trace,
    steps: Iterable[TraceStep],
    on_incident: Callable[[Incident], None],
    *,
    markdown: bool = False,
) -> Iterator[str]:
    """The narrative's lines one by one, as the steps come (a long replay
    holds one step at a time, not the whole story); ``on_incident`` is
    called with every incident met (the verdict line comes last)."""
    lines: list[str] = []
    cfg = trace.config
    head = (
        f"policy {trace.policy} · gate {cfg.gate} · checks {cfg.check_at} · retry "
        f"{cfg.retry} · stream loss {cfg.on_stream_loss} · repair {cfg.repair} · "
        f"provider {cfg.provider} · budget {cfg.budget} / ceiling {cfg.hard_ceiling}"
    )
    spec = parse_spec_or_none(trace.policy)
    if spec is not None and spec.kind.is_runtime:  # its knobs are its own code
        head = (
            f"runtime under test {trace.policy.removeprefix(RUNTIME_PREFIX)} · "
            f"budget {cfg.budget} / ceiling {cfg.hard_ceiling}"
        )
    yield f"**{head}**\n" if markdown else head
    counts: Counter[tuple[bool, str]] = Counter()
    last: float | None = None
    for item in steps:
        lead = f"{item.index + 1}. " if markdown else f"[{item.index + 1:3d}] "
        gap = "" if last is None or trace.times is None else later(item.at - last)
        last = item.at
        lines.append(f"{lead}{describe_event(item.event)}{gap}")
        pad = "   " if markdown else "      "
        for note in item.result.notes:
            lines.append(f"{pad}- {note.text}" if markdown else f"{pad}{note.text}")
        for incident in item.result.incidents:
            on_incident(incident)
            counts[incident.is_violation, incident.kind.label] += 1
            mark = "VIOLATION" if incident.is_violation else "cost"
            label = incident.kind.label
            if markdown:
                lines.append(f"{pad}- **{mark}: {label}** — {incident.detail}")
                if incident.text:
                    lines.append(f"{pad}  provider answers: `HTTP 400: {incident.text}`")
            else:
                lines.append(f"{pad}!! {mark}: {label}: {incident.detail}")
                if incident.text:
                    lines.append(f"{pad}   HTTP 400: {incident.text}")
        yield from lines
        lines.clear()
    violations = _tally(counts, True)
    costs = _tally(counts, False)
    total = sum(n for (bad, _), n in counts.items() if bad)
    verdict = f"{total} violation(s) ({violations})" if violations else "no violation"
    if costs:
        verdict += f"; costs: {costs}"
    yield ""
    yield f"{'**Verdict:** ' if markdown else 'verdict: '}{verdict}."


#: Gaps of time shorter than this (seconds) go unsaid in a narrative.
NOTABLE_GAP = 10.0


def later(seconds: float) -> str:
    """How a narrative says that an event came long after the one before
    ("" for a gap under ``NOTABLE_GAP``): what an age-based policy reads.

    >>> later(3.0), later(91.0), later(1830.0)
    ('', ' — 91 s later', ' — 30 min 30 s later')
    """
    if seconds < NOTABLE_GAP:
        return ""
    whole = round(seconds)
    if whole < 120:
        return f" — {whole} s later"
    minutes, rest = divmod(whole, 60)
    return f" — {minutes} min {rest} s later" if rest else f" — {minutes} min later"


def _tally(counts: dict[tuple[bool, str], int], violations: bool) -> str:
    return ", ".join(f"{n} {label}" for (bad, label), n in counts.items() if bad is violations)
