"""From one logged conversation to a prunecheck trace and its findings.

The differ (:mod:`.differ`) says what happened between requests; this
module writes it as events — each new message appended, each request an
:class:`~prunecheck.model.events.Invoke` — and the removals as the
``observed`` policy (:mod:`prunecheck.model.observed`), which proposes them
again at the budget check before the request that shows them.  The
configuration is inferred: the provider from the bodies, checks
``before_invoke`` (a request log shows the context only at model calls, so
every removal is seen just before one; a trimmer run mid-batch would send
the same request), the budget from the largest request (lowered below the
smallest context a removal was made from, when the log shows a removal at a
size a later request exceeds, so that each removal still replays).

The findings name, for each removal, whether it took whole closed units or
cut one, between which two requests (with their times), and what the
provider answered the next request, in its own words.  The trace stops at
the first rejected request: what the runtime did after an error is not a
prune.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.context import Role
from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.observed import ObservedEntry, ObservedPolicy, Verb
from prunecheck.model.provider import (
    KIND_PHRASES,
    PROVIDERS,
    ProviderError,
    recognize,
    validate,
)
from prunecheck.model.trace import Trace
from prunecheck.sim.ingest.bodies import RESPONSES_TEXT
from prunecheck.sim.ingest.differ import Item, Step, diff_requests, unit_of
from prunecheck.sim.ingest.records import LogFormat, LoggedRequest
from prunecheck.sim.ingest.recovery import named_ids

__all__ = ["Finding", "Imported", "import_conversation", "stamp"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the log shows, in a sentence; ``bad`` marks a cut unit
    (the first bad prune) or a rejection."""

    text: str
    bad: bool = False
    request: int = 0


@dataclass(slots=True)
class Imported:
    """A conversation imported: its trace, findings and what the log cannot tell."""

    conversation: str
    trace: Trace
    findings: list[Finding] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    requests: int = 0
    imported: int = 0

    @property
    def first_bad(self) -> Finding | None:
        return next((f for f in self.findings if f.bad), None)


def stamp(at: float | None) -> str:
    """A request's time as on-call engineers read logs (UTC), or a dash.

    >>> stamp(0.0), stamp(None)
    ('00:00:00', '—')
    """
    if at is None:
        return "—"
    moment = dt.datetime.fromtimestamp(at, tz=dt.UTC)
    text = moment.strftime("%H:%M:%S")
    return text + (f".{moment.microsecond // 1000:03d}" if moment.microsecond else "")


def _words(text: str, limit: int = 48) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tool_name(name: str) -> str:
    clean = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)
    return clean or "tool"


class _Writer:
    def __init__(self, call_labels: dict[str, str]) -> None:
        self.call_labels = call_labels
        self.events: list[Event] = []
        self.times: list[float] = []
        self.calls: dict[str, str] = {}  # logged call id -> model call id
        self.next_call = 1

    def add(self, event: Event, at: float) -> None:
        self.events.append(event)
        self.times.append(max(at, self.times[-1]) if self.times else at)

    def append(self, item: Item, at: float) -> None:
        m = item.message
        text = f"{item.label} {_words(m.text)}".strip()
        if m.role is Role.TOOL:
            tokens = 1 if item.inferred else m.tokens
            self.add(ResultChunk(self.calls[m.answers or ""], tokens), at)
        elif m.calls:
            specs = []
            for call in m.calls:
                self.calls[call.id] = f"c{self.next_call}"
                self.next_call += 1
                specs.append(CallSpec(_tool_name(call.name), self.call_labels[call.id]))
            self.add(IssueBatch(tuple(specs), m.tokens, text), at)
        elif m.role is Role.SYSTEM:
            self.add(SystemPrompt(m.tokens, text), at)
        elif m.role is Role.USER:
            self.add(UserMessage(m.tokens, text), at)
        else:
            self.add(AssistantChunk(m.tokens, True, text), at)


def _entries(step: Step) -> list[ObservedEntry]:
    trigger = step.trigger
    if trigger is None:
        return []
    out = []
    if step.evicted:
        out.append(ObservedEntry(trigger.label, Verb.EVICT, tuple(i.label for i in step.evicted)))
    if step.cleared:
        out.append(
            ObservedEntry(
                trigger.label, Verb.CLEAR, tuple(f"{i.label}={n}" for i, n in step.cleared)
            )
        )
    for summary, group in step.summaries:
        targets = (*(i.label for i in group), f"{summary.label}={summary.message.tokens}")
        out.append(ObservedEntry(trigger.label, Verb.SUMMARIZE, targets))
    return out


def _removal_findings(
    step: Step, requests: Sequence[LoggedRequest], batches: dict[str, Item], live: list[Item]
) -> list[Finding]:
    n = step.number
    pair = (
        f"between request {n - 1} ({stamp(requests[n - 2].at)}) and request {n} "
        f"({stamp(requests[n - 1].at)})"
        if n > 1
        else f"before request 1 ({stamp(requests[0].at)})"
    )
    out: list[Finding] = []
    removed = step.removed()
    units: dict[int, list[Item]] = {}
    heads: dict[int, Item] = {}
    for item in removed:
        head = unit_of(item, batches)
        units.setdefault(id(head), []).append(item)
        heads[id(head)] = head
    for key, taken in units.items():
        head = heads[key]
        members = [i for i in live if unit_of(i, batches) is head]
        kept = [i for i in members if i not in taken]
        verb = "summarized" if any(i in g for _, g in step.summaries for i in taken) else "removed"
        what = _describe(taken)
        if not kept:
            whole = "a whole closed unit" if head.message.calls else "a message of its own"
            out.append(Finding(f"{pair} the runtime {verb} {what}: {whole}.", request=n))
        else:
            keeping = _describe(kept)
            out.append(
                Finding(
                    f"{pair} the runtime {verb} {what} while keeping {keeping}: it cut "
                    "the unit in two (a bad prune).",
                    bad=True,
                    request=n,
                )
            )
    for item, tokens in step.cleared:
        out.append(
            Finding(
                f"{pair} the runtime rewrote {item.message.describe()} "
                f"(cleared, {tokens} tokens left).",
                request=n,
            )
        )
    return out


def _describe(items: list[Item]) -> str:
    """Messages in a few words: results are named together by their calls."""
    results = [i.message.answers or "" for i in items if i.message.answers is not None]
    parts = [i.message.describe() for i in items if i.message.answers is None]
    if len(results) == 1:
        parts.append(f"the result of {results[0]}")
    elif len(results) <= 3 and results:
        parts.append("the results of " + ", ".join(results))
    elif results:
        parts.append(f"the results of {results[0]}–{results[-1]} ({len(results)})")
    return " and ".join(parts)


def _rejection(request: LoggedRequest, n: int) -> tuple[Finding | None, list[ProviderError]]:
    errors = validate(request.request_body(), request.provider, source=f"request {n}")
    if request.rejection is None:
        if errors:
            return (
                Finding(
                    f"request {n} ({stamp(request.at)}) breaks tool pairing — the provider "
                    f"would answer HTTP 400: {errors[0].text} — but the log holds no error "
                    "for it (the response was not logged?).",
                    bad=True,
                    request=n,
                ),
                errors,
            )
        return None, errors
    status = f"HTTP {request.status}" if request.status else "an error"
    text = f"request {n} ({stamp(request.at)}) was rejected with {status}: {request.rejection}"
    words = errors[0].text if errors else ""
    if errors and request.format is LogFormat.OPENAI_RESPONSES:
        words = RESPONSES_TEXT[errors[0].kind].format(id=", ".join(errors[0].ids) or "")
    named = named_ids(request.rejection)
    known = recognize(request.rejection)  # any provider's rule, in its words
    if errors and (
        words in request.rejection
        or errors[0].text in request.rejection
        or (named is not None and named[0] == errors[0].kind)  # another API's words for it
        or (known is not None and known.kind == errors[0].kind)
    ):
        text += " — the provider's tool pairing rule, in its own words."
    elif known is not None:
        name = f"{PROVIDERS[known.provider].title}'s rule {known.id} ({KIND_PHRASES[known.kind]})"
        if errors:
            text += f" — {name}, in its own words; prunecheck's rules expected: {errors[0].text}"
        else:
            text += (
                f" — {name}, in its own words, though the logged request's tool pairing reads "
                "intact: the history the provider checked is not all in the log (history "
                "held on the provider's side, or a body logged before a later change)."
            )
    elif errors:
        text += f" — prunecheck's rules expected: {errors[0].text}"
    else:
        text += " — its tool pairing is intact: the rejection has another cause."
    return Finding(text, bad=True, request=n), errors


def import_conversation(
    conversation: str,
    requests: Sequence[LoggedRequest],
    *,
    source: str = "",
    ran: Mapping[str, int] | None = None,
) -> Imported:
    """The trace and findings of one conversation's requests (in time order);
    ``ran``: the tool runs its tool spans record (:attr:`.reading.Log.ran`).

    Raises nothing on a log with gaps: they are named in ``Imported.gaps``.
    """
    diff = diff_requests(requests, ran)
    steps, batches = diff.steps, diff.batches
    writer = _Writer(diff.call_labels)
    entries: list[ObservedEntry] = []
    findings: list[Finding] = []
    gaps: list[str] = []
    origin = next((r.at for r in requests if r.at is not None), None)
    live: list[Item] = []
    before: list[int] = []  # context tokens at each check, before its removals
    after: list[int] = []
    pruned: list[int] = []  # indexes (into before) of checks that removed something
    imported = 0
    invokes: list[int] = []  # the step (1-based) of each request's invocation
    for step, request in zip(steps, requests, strict=True):
        at = _since(request.at, origin)
        answered = _since(requests[step.number - 2].ended, origin) if step.number > 1 else at
        for item in step.appended:
            writer.append(item, min(at, answered) if item.replied else at)
            live.append(item)
        gaps.extend(step.gaps)
        gaps.extend(f"request {step.number}: {i.inferred}" for i in step.appended if i.inferred)
        gaps.extend(f"request {step.number}: {b}" for b in request.blind)
        size = sum(_tokens(i) for i in live)
        step_entries = _entries(step)
        if step.removed() or step.cleared:
            if not step_entries:
                gaps.append(
                    f"request {step.number} adds nothing to request {step.number - 1}: its "
                    "removals have no place of their own in the trace and are not replayed"
                )
            else:
                pruned.append(len(before))
            findings.extend(_removal_findings(step, requests, batches, live))
        entries.extend(step_entries)
        before.append(size)
        removed = step.removed()
        live = [i for i in live if i not in removed]
        after.append(request.tokens)
        writer.add(Invoke(), at)
        invokes.append(len(writer.events))
        imported += 1
        rejected, _ = _rejection(request, step.number)
        if rejected is not None:
            findings.append(rejected)
        if request.rejection is not None:
            break
    budget = max(after, default=1)
    notes = [f"budget {budget}: the largest request imported"]
    floor = min((before[i] for i in pruned), default=None)
    if floor is not None and floor <= budget:
        budget = max(1, floor - 1)
        notes = [
            f"budget {budget}: the runtime removed messages from a context of {floor} tokens "
            "while a larger request was sent elsewhere, so it is not a plain token-budget "
            "trimmer; the budget is set just below that size so every removal replays"
        ]
    ceiling = max(budget, *before) if before else budget
    config = RuntimeConfig(
        budget=budget,
        hard_ceiling=ceiling,
        check_at=CheckAt.BEFORE_INVOKE,
        provider=requests[0].provider,
    )
    policy = ObservedPolicy(tuple(entries))
    first = next((f for f in findings if f.bad), None)
    story = _story(conversation, requests, findings, imported)
    story += (
        " In the steps below, "
        + ", ".join(f"request {n + 1} is step {at}" for n, at in enumerate(invokes))
        + "."
    )
    meta: dict[str, Any] = {
        "title": f"conversation {conversation} imported from {source or 'a log'}",
        "story": story,
        "imported": {
            "conversation": conversation,
            "format": requests[0].format.value,
            "requests": [
                {"request": n + 1, "at": stamp(r.at), "source": str(r.source), "step": invokes[n]}
                for n, r in enumerate(requests[:imported])
            ],
            "config": [*notes, _PLACEMENT],
            "findings": [f.text for f in findings],
            "gaps": gaps,
            **({"first_bad": first.text} if first else {}),
        },
    }
    trace = Trace(policy.spec(), config, tuple(writer.events), 0, tuple(writer.times), meta)
    if imported < len(requests):
        gaps.append(
            f"{len(requests) - imported} request(s) after the rejected request {imported} are "
            "not imported: what a runtime does after an error is not a prune"
        )
    return Imported(conversation, trace, findings, gaps, len(requests), imported)


_PLACEMENT = (
    "checks before_invoke: a request log shows the context only at model calls, so every "
    "removal is seen just before one"
)


def _since(at: float | None, origin: float | None) -> float:
    return 0.0 if at is None or origin is None else max(0.0, at - origin)


def _tokens(item: Item) -> int:
    return 1 if item.inferred and item.message.role is Role.TOOL else item.message.tokens


def _story(
    conversation: str, requests: Sequence[LoggedRequest], findings: list[Finding], imported: int
) -> str:
    first = next((f for f in findings if f.bad and "bad prune" in f.text), None)
    rejected = next((f for f in findings if f.bad and "rejected" in f.text), None)
    parts = [f"Imported {imported} request(s) of conversation {conversation}."]
    if first is not None:
        parts.append(f"First bad prune: {first.text[0].upper()}{first.text[1:]}")
    elif not any(f.bad for f in findings):
        parts.append("Every removal the log shows took whole closed units.")
    if rejected is not None:
        parts.append(rejected.text[0].upper() + rejected.text[1:])
    return " ".join(parts)
