"""``index.html`` of a reproduction bundle: the verdict, how to replay, the
request and the provider's answer, the timeline, then every step with its
event, the prune (what the policy removed or changed), the incidents and the
context after the step.

The page is self-contained: inline style, no script, the timeline through a
relative link to ``timeline.png`` beside it, so the bundle folder can be
copied, attached to an issue or opened from a clean clone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prunecheck.model.context import Message
from prunecheck.model.incidents import Incident
from prunecheck.model.notes import NoteKind
from prunecheck.model.provider import ProviderError
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace, TraceStep
from prunecheck.sim.evidence.narrative import describe_event
from prunecheck.sim.support.html import escape, inline, markdown, page, table

__all__ = ["PRUNE_NOTES", "Shown", "bundle_page", "context_after"]

#: The notes that say what a prune did to the context.
PRUNE_NOTES = frozenset(
    {NoteKind.EVICT, NoteKind.CLEAR, NoteKind.SUMMARIZE, NoteKind.SPILL, NoteKind.REPAIR}
)


@dataclass(frozen=True, slots=True)
class Shown:
    """One message of the context after a step, as the page shows it.

    Attributes
    ----------
    id, role, tokens : str, str, int
        The message.
    what : str
        Its links (the calls it issues, the call it answers, a summary's
        sources).
    state : str
        closed, open (streaming), pending, cleared, orphaned or unanswered.
    """

    id: str
    role: str
    tokens: int
    what: str
    state: str


def _shown(state: RuntimeState, m: Message) -> Shown:
    if m.role.value == "assistant" and m.tool_calls:
        what = "calls " + ", ".join(m.tool_calls)
    elif m.call_id:
        what = f"result of {m.call_id}"
    elif m.summary_of:
        what = "summary of " + ", ".join(m.summary_of)
    else:
        what = ""
    if m.id in state.orphans:
        status = "orphaned"
    elif any(c in state.unanswered for c in m.tool_calls):
        status = "unanswered"
    elif not m.closed:
        status = "open (streaming)"
    elif state.context.pending_in(m.unit_id):
        status = "pending call in its unit"
    else:
        status = "cleared" if m.cleared else "closed"
    return Shown(m.id, m.role.value, m.tokens, what, status)


def context_after(trace: Trace, system: System[Any]) -> list[tuple[Shown, ...]]:
    """The context after each step of a replay of ``trace`` by ``system``
    (its ground truth: for a runtime under test, the shadow's)."""
    out: list[tuple[Shown, ...]] = []
    for _, state in replay(trace, system, record=True):
        truth = system.truth(state)
        out.append(tuple(_shown(truth, m) for m in truth.context))
    return out


def _incident(i: Incident) -> str:
    mark, css = ("VIOLATION", "violation") if i.is_violation else ("cost", "cost")
    text = f'<li class="{css}">{mark}: {escape(i.kind.label)} — {escape(i.detail)}'
    if i.text:
        text += f"<br><code>HTTP 400: {escape(i.text)}</code>"
    return text + "</li>"


def _step(item: TraceStep, context: Sequence[Shown], before: set[str]) -> str:
    bad = any(i.is_violation for i in item.result.incidents)
    parts = [
        f'<div class="step{" bad" if bad else ""}" id="step-{item.index + 1}">',
        f"<h3>{item.index + 1}. {escape(describe_event(item.event))}</h3>",
    ]
    prune = [n for n in item.result.notes if n.kind in PRUNE_NOTES]
    notes = [
        f"<li class='prune'><strong>the prune:</strong> {inline(n.text)}</li>"
        if n.kind in PRUNE_NOTES
        else f"<li>{inline(n.text)}</li>"
        for n in item.result.notes
    ]
    if notes:
        parts.append("<ul>" + "".join(notes) + "</ul>")
    if item.result.incidents:
        parts.append("<ul>" + "".join(_incident(i) for i in item.result.incidents) + "</ul>")
    now = {m.id for m in context}
    touched = {mid for n in prune for mid in n.ids}
    gone = sorted((before | touched) - now, key=lambda mid: (len(mid), mid))
    rows = [[escape(m.id), m.role, str(m.tokens), escape(m.what), m.state] for m in context]
    rows += [
        [f'<span class="gone">{escape(mid)}</span>', "", "", "left the context", ""] for mid in gone
    ]
    total = sum(m.tokens for m in context)
    parts.append(
        f"<details{' open' if bad or prune else ''}><summary>context after this step: "
        f"{len(context)} message{'' if len(context) == 1 else 's'}, {total:,} tokens</summary>"
        + table(["id", "role", "tokens", "links", "state"], rows, raw=True)
        + "</details></div>"
    )
    return "\n".join(parts)


def _answer(errors: Sequence[ProviderError]) -> str:
    if not errors:
        return "<p class='safe'>The provider would accept this body (HTTP 200).</p>"
    items = "".join(f"<li><code>{escape(e.text)}</code></li>" for e in errors)
    return f"<p class='violation'>The provider answers HTTP {errors[0].status}:</p><ul>{items}</ul>"


def bundle_page(
    trace: Trace,
    system: System[Any],
    steps: Sequence[TraceStep],
    *,
    header: Sequence[str],
    body: dict[str, object],
    errors: Sequence[ProviderError],
    origin: str,
    timeline: bool = True,
) -> str:
    """The bundle's page.

    Parameters
    ----------
    trace : Trace
        The bundle's trace (naming the policy copy, if any).
    system : System
        What it replays with (the model runtime with the policy, or the
        runtime under test).
    steps : Sequence[TraceStep]
        The replayed steps, with notes.
    header : Sequence[str]
        The narrative's markdown head; the page shows it up to its "What the
        provider answers" section (the verdict, how to replay).
    body, errors, origin : dict, Sequence[ProviderError], str
        The request body shown, the provider's errors for it, and where it
        comes from (a sentence).
    timeline : bool
        Whether ``timeline.png`` was drawn beside the page (it needs matplotlib).
    """
    contexts = context_after(trace, system)
    title = str(trace.meta.get("title") or f"{trace.policy} under gate {trace.config.gate}")
    cut = next(
        (i for i, line in enumerate(header) if line.startswith("## What the provider")), None
    )
    head = markdown("\n".join(header[1:cut]))  # the title is the page's own
    seen: set[str] = set()
    shown = []
    for item, context in zip(steps, contexts, strict=False):
        shown.append(_step(item, context, seen))
        seen = {m.id for m in context}
    files = "".join(
        f'<a href="{f}">{f}</a>'
        for f in ("narrative.md", "trace.json", "request.json", "test_reproduction.py")
    )
    parts = [
        f"<h1>Reproduction: {escape(title)}</h1>",
        f"<nav>{files}<a href='#steps'>steps</a><a href='#request'>request</a></nav>",
        head,
        '<h2 id="request">The request and the provider\'s answer</h2>',
        f"<p>{inline(origin)}</p>",
        _answer(errors),
        "<details><summary>request.json</summary><pre>"
        + escape(json.dumps(body, indent=2, ensure_ascii=False))
        + "</pre></details>",
        '<h2 id="timeline">Timeline</h2>',
        '<figure><img src="timeline.png" alt="timeline: messages as lanes over steps">'
        "<figcaption>Messages as lanes over steps; a red band marks a step with a violation, "
        "a cross where a message left the context.</figcaption></figure>"
        if timeline
        else "<p>timeline.png was not drawn: it needs matplotlib (prunecheck[report]).</p>",
        f'<h2 id="steps">Steps ({len(steps)})</h2>',
        *shown,
    ]
    return page(f"Reproduction: {title}", "\n".join(parts))
