"""A loop's schedule told step by step (its narrative), and its requests as JSON.

:func:`narrative` writes a retold run (:func:`prunecheck.sim.subjects.loops.story.retell`)
step by step, as the model runtime's narratives do: each step, what the loop
did (the requests it sent, the whole units its trim removed, the stated
rules that found no violation — an honest placeholder, a whole call a trim
removed, judged by the provider's rules —, tool bodies it started, how its
turn ended), and each incident at the step it happened.
"""

from __future__ import annotations

import json

from prunecheck.sim.subjects.loops.steps import Step, step_to_json
from prunecheck.sim.subjects.loops.story import Story

__all__ = ["describe", "narrative", "requests_json"]


def describe(step: Step) -> str:
    """One line for a step."""
    data = step_to_json(step)
    kind = str(data.pop("kind"))
    if kind == "reply":
        calls = data.get("calls") or []
        assert isinstance(calls, list)
        if calls:
            shown = ", ".join(f"{c['name']}({c['id']}, {c['arguments']})" for c in calls)
            return f"the model replies with {len(calls)} call(s): {shown}"
        return f"the model answers {data.get('text')!r}"
    words = {
        "user": "the user says {text!r}",
        "complete": "the tool of {call} returns {output!r}",
        "fail": "the tool of {call} fails: {error!r}",
        "timeout": "the tool of {call} times out",
        "advance": "{seconds:g} s pass (virtual clock)",
        "cancel": "the turn is cancelled (the framework's cancel API)",
        "crash": "the process crashes: the run's task and every in-memory object are dropped",
        "resume": "a new process resumes the run from the store",
        "new_message": "a new process gets a new user message on the same thread: {text!r}",
        "approve": "a human answers the approval of {call}: {approved}",
        "model_error": "the summarizer's model call fails (injected): {error!r}",
    }
    text = words[kind].format(**data)
    return text if len(text) <= 160 else text[:157] + "..."


def narrative(story: Story, *, provider_texts: bool = True) -> str:
    """The run step by step, each incident where it happened (plain text)."""
    lines: list[str] = []
    led = story.ledger
    for i, step in enumerate(story.steps):
        lines.append(f"{i + 1:>3}. {describe(step)}")
        for r, req in enumerate(led.requests):
            if req.step == i:
                msgs = req.body.get("messages")
                count = len(msgs) if isinstance(msgs, list) else 0
                lines.append(f"       -> request #{r + 1} to the model ({count} messages)")
        for at, unit in led.trims:
            if at == i:
                lines.append(f"       -> the trim removed the whole, closed unit of "
                             f"{', '.join(unit)} (allowed: no loss)")  # fmt: skip
        for at, told in led.rulings:
            if at == i:
                lines.append(f"       -> rule: {told}")
        for b in led.bodies:
            if b.started == i:
                lines.append(f"       -> the tool body of {b.call} starts (process {b.epoch})")
        for at, what in led.outcomes:
            if at == i:
                lines.append(f"       -> the turn: {what}")
        for inc in story.incidents:
            if inc.step == i:
                mark = "VIOLATION" if inc.is_violation else "cost"
                lines.append(f"       !! {mark} {inc.kind.value}: {inc.detail}")
                if provider_texts and inc.text:
                    lines.append(f"          provider says: {inc.text}")
    return "\n".join(lines) + "\n"


def requests_json(story: Story) -> str:
    """The requests the model received, as JSON lines (sorted keys)."""
    return "".join(
        json.dumps({"request": n + 1, "step": r.step + 1, "body": r.body}, sort_keys=True) + "\n"
        for n, r in enumerate(story.ledger.requests)
    )
