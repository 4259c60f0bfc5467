"""A rejected request whose span holds no messages, recovered from what the stack does record.

The OpenAI Agents SDK (under OpenInference) and pydantic-ai write a model
call's messages on its span only with the response: the request the
provider rejected — the incident — is a span with an error and nothing
else.  What the stack records around it still tells most of it:

1. pydantic-ai's agent run span holds the run's messages when it ended
   (``pydantic_ai.all_messages``): pydantic-ai 1.x keeps what its history
   processors returned, so they are the failed request's messages;
2. else the previous request of the conversation, the response it got,
   and the results the tool spans recorded in between make the request
   the runtime would have sent without removing anything; the provider's
   error then says what the sent request lacked (``No tool call found for
   function call output with call_id X``: X's call was not in it), and
   that is removed — nothing else, so what else the runtime removed stays
   unknown and is said so.

A request that cannot be recovered is an incomplete request
(:class:`~.records.Incomplete`) that keeps its rejection: named with what
is known, and ``prunecheck import`` exits 1 on it (a logged 400 is an
incident, seen or not).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from prunecheck.model.context import Role
from prunecheck.sim.ingest.records import Incomplete, LoggedCall, LoggedMessage, LoggedRequest
from prunecheck.sim.ingest.spans import UNLOGGED, ToolRun

__all__ = ["from_run_history", "is_responses_text", "named_ids", "recover"]


def from_run_history(
    request: LoggedRequest, histories: Iterable[tuple[str, tuple[LoggedMessage, ...]]]
) -> LoggedRequest:
    """A failed request whose span holds no messages, with the messages of
    the nearest agent run span above it that holds them (1. of the module
    notes): ``histories`` are (span id, messages) of its ancestors, nearest
    first."""
    if UNLOGGED not in request.blind or request.messages:
        return request
    for span_id, history in histories:
        if history:
            blind = tuple(b for b in request.blind if b != UNLOGGED)
            note = (
                f"its span holds no messages: they are read from the agent run span "
                f"{span_id} (the run's messages when it failed)"
            )
            return replace(request, messages=history, blind=(*blind, note))
    return request


def _templates() -> list[tuple[str, str]]:
    """(kind, verbatim text template) of every tool pairing rule prunecheck
    knows, of any provider (prunecheck.model.provider.RULES)."""
    from prunecheck.model.provider import CALL_WITHOUT_RESULT, RESULT_WITHOUT_CALL, RULES

    pairing = (RESULT_WITHOUT_CALL, CALL_WITHOUT_RESULT)
    return [(r.kind, r.template) for r in RULES.values() if r.kind in pairing]


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[a-z_]+\})", template)
    out = []
    for part in parts:
        if part in ("{id}", "{ids}"):
            out.append(r"(?P<ids>[A-Za-z0-9_\-]+(?:, ?[A-Za-z0-9_\-]+)*)")
        elif re.fullmatch(r"\{[a-z_]+\}", part):
            out.append(r".*?")
        else:
            out.append(re.escape(part))
    return re.compile("".join(out).rstrip(r"\."))


def named_ids(text: str) -> tuple[str, tuple[str, ...]] | None:
    """The tool pairing rule a provider's error text states and the ids it
    names: ``("result_without_call", ids)`` (the ids' calls were not in the
    request) or ``("call_without_result", ids)``; None if it names none.

    >>> named_ids("No tool call found for function call output with call_id call_7.")
    ('result_without_call', ('call_7',))
    """
    from prunecheck.model.provider import recognize

    rule = recognize(text)  # the registry's reading of any provider's text
    candidates = [(rule.kind, rule.template)] if rule is not None else []
    for kind, template in [*candidates, *_templates()]:
        found = _pattern(template).search(text)
        if found is not None and found.groupdict().get("ids"):
            return kind, tuple(i.strip() for i in found.group("ids").split(","))
    return None


def is_responses_text(text: str) -> bool:
    """Whether ``text`` is one of the OpenAI Responses API's tool pairing errors.

    >>> is_responses_text("No tool output found for function call call_1."), is_responses_text("x")
    (True, False)
    """
    from prunecheck.sim.ingest.bodies import RESPONSES_TEXT

    return any(_pattern(template).search(text) for template in RESPONSES_TEXT.values())


def _args(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _results(
    calls: Sequence[LoggedCall], runs: Sequence[ToolRun], after: float | None, before: float | None
) -> list[LoggedMessage] | None:
    """The results of ``calls`` as tool spans recorded them (matched by call
    id, else by name and arguments, in order), or None if one is missing."""
    pool = [
        r for r in runs
        if r.at is None or ((after is None or r.at >= after) and (before is None or r.at <= before))
    ]  # fmt: skip
    out = []
    for call in calls:
        run = next((r for r in pool if r.call == call.id), None) or next(
            (r for r in pool if r.call is None and r.name == call.name
             and _args(r.arguments) == _args(call.arguments)),
            None,
        )  # fmt: skip
        if run is None:
            return None
        pool.remove(run)
        out.append(LoggedMessage(Role.TOOL, run.output, answers=call.id))
    return out


def _rebuilt(
    before: LoggedRequest, failed: LoggedRequest, runs: Sequence[ToolRun]
) -> tuple[tuple[LoggedMessage, ...], str] | None:
    """2. of the module notes: the failed request's messages and how they
    were found, or None."""
    reply = list(before.reply or ())
    calls = [c for m in reply for c in m.calls]
    results = _results(calls, runs, before.ended, failed.at)
    if results is None or failed.rejection is None:
        return None
    messages = [*before.messages, *reply, *results]
    named = named_ids(failed.rejection)
    if named is None:
        return None
    kind, ids = named
    if kind == "result_without_call":
        messages = [
            LoggedMessage(m.role, m.text, tuple(c for c in m.calls if c.id not in ids), m.answers)
            if m.calls else m
            for m in messages
        ]  # fmt: skip
        messages = [m for m in messages if m.role is not Role.ASSISTANT or m.calls or m.text]
        what = f"the call{'s' if len(ids) > 1 else ''} {', '.join(ids)}"
    else:
        messages = [m for m in messages if m.answers not in ids]
        what = f"the result{'s' if len(ids) > 1 else ''} of {', '.join(ids)}"
    how = (
        f"its span holds no messages: they are rebuilt from request {{n}}, its response and "
        f"the {len(results)} tool result(s) its tool spans recorded, less {what}, which the "
        "provider's error says the request lacked; what else the runtime removed is not logged"
    )
    return tuple(messages), how


def recover(
    requests: list[LoggedRequest], runs: Sequence[ToolRun]
) -> tuple[list[LoggedRequest], list[Incomplete]]:
    """The conversation's requests with every failed request whose messages
    are not logged recovered (see the module notes); those that cannot be
    are incomplete requests that keep their rejection (the incident)."""
    out: list[LoggedRequest] = []
    lost: list[Incomplete] = []
    for request in requests:
        if UNLOGGED not in request.blind or request.messages:
            out.append(request)
            continue
        blind = tuple(b for b in request.blind if b != UNLOGGED)
        before = out[-1] if out else None
        rebuilt = _rebuilt(before, request, runs) if before is not None else None
        if rebuilt is not None:
            messages, how = rebuilt
            out.append(replace(request, messages=messages,
                               blind=(*blind, how.format(n=len(out)))))  # fmt: skip
            continue
        lost.append(
            Incomplete(
                request.conversation,
                request.at,
                request.source,
                f"{UNLOGGED}, and neither an agent run span nor the request before it, its "
                "response, the tool spans and the provider's error tell what it sent",
                "the provider rejected it",
                request.rejection,
                request.status,
            )
        )
    return out, lost
