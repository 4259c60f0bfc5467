"""The judge: every request a loop sends, held against the ledger.

Checks, in this order, each an :class:`~prunecheck.model.incidents.Incident`:

* **provider rejection** — the request under the rules of the provider the
  agent's model talks to (its adapter's ``providers``, read from the model
  as configured, :mod:`.frameworks.model_providers`), and only its: an
  OpenAI client gets no Anthropic text, nor an Anthropic client OpenAI's,
  and a history the agent's provider accepts is no rejection because
  another would refuse it.  The request is rendered in that provider's
  format (:func:`prunecheck.model.provider.as_provider`; the adapter renders
  OpenAI Chat Completions; the Anthropic rendering is the one a converter
  sends: system prompt on top, ``tool_use`` / ``tool_result`` blocks,
  consecutive same-role messages merged) and judged with the provider's
  exact texts (:func:`prunecheck.model.provider.validate`).  When the
  provider is unknown (a test double, a provider prunecheck has no rules
  for), OpenAI Chat Completions' and Anthropic's rules both judge
  (:func:`judged_by`; :func:`rules_line` says which and why);
  and a request emptied by a trim (the system prompt and no conversation:
  Anthropic's :data:`ANTHROPIC_NO_MESSAGES`; Gemini and Bedrock refuse it too);
* **unanswered call** / **orphaned result** — a call no result answers, a
  result no call of the request asked for;
* **truncated payload** — a call's arguments differ from what the model
  issued, or a result is a shortened copy of the tool's output (its start,
  or its start and end with the middle cut);
* **synthesized result** — a result that is neither its tool's output nor
  an honest placeholder, by the rule of :mod:`.placeholder`: a placeholder
  holds no piece of the output, says the content was *cleared* or the call
  *not run* / *refused* / *failed* (true of the call), and speaks only of
  the call, never of the world.  An honest placeholder is no violation; the
  ledger's rulings tell the narrative which rule applied;
* **invalid prune** — in a configuration that trims, a request keeps part
  of a batch the loop held whole with a call or a result missing (the cut
  broke the pairing).  A trim that removed whole calls of a batch, each
  with its result, leaving every kept call paired, is judged by the
  provider's rules: they accept it, so it is no violation (a ruling);
* **silent loss** — a call whose tool body ran to an outcome (the side
  effect happened) is gone from what the model sees, with its result, and
  no trim removed its whole, closed unit: a configuration that does not trim
  loses it; one that trims kept part of its parallel batch the loop did
  not hold whole (else a whole-call trim, or an invalid prune), or never held the whole unit
  since the last cancel, crash or raising turn (the loop discarded it: a
  trim cannot be what removed it, :meth:`.Ledger.holds`).
  A whole, closed unit the loop held and a trim removed — from the front or
  from the middle — is no loss: :func:`removed_by_trim` names it, and the
  narrative reports it as a trim.

* **unanswered call**, too — after a cancel, a user's message the framework
  refuses before any request, with a call in the history its cancel left
  that no result answers and no tool body still running
  (:func:`refused_turn`): the conversation cannot go on, as a provider's
  400 would leave it.

Repair layers hide 400s, so the history is judged against the ledger, not
only the request's shape.  :func:`hang` is the check after a cancel; the
ledger's duplicated bodies are judged where they end (:mod:`.scheduler`).
Pure but for the ledger's rulings: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.provider import PROVIDERS, Provider, as_provider, rule, validate

from .ledger import BodyEnd, Ledger
from .placeholder import call_words, ruling

__all__ = [
    "ANTHROPIC_NO_MESSAGES",
    "BEDROCK_FIRST_USER",
    "COMMON_PROVIDERS",
    "OWN_PROVIDERS",
    "calls_and_results",
    "hang",
    "judge_request",
    "judged_by",
    "refused_turn",
    "rejecting_provider",
    "removed_by_trim",
    "rules_line",
    "to_anthropic",
]


def _messages(body: Mapping[str, object]) -> list[dict[str, object]]:
    raw = body.get("messages")
    return [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def calls_and_results(
    body: Mapping[str, object],
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """The request's calls (id → name, arguments) and results (id → text)."""
    calls: dict[str, tuple[str, str]] = {}
    results: dict[str, str] = {}
    for m in _messages(body):
        for c in m.get("tool_calls") or []:  # type: ignore[attr-defined]
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                assert isinstance(fn, dict)
                calls[c["id"]] = (str(fn.get("name", "")), str(fn.get("arguments", "")))
        if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
            results[str(m["tool_call_id"])] = _text(m.get("content"))
    return calls, results


def to_anthropic(body: Mapping[str, object]) -> dict[str, object]:
    """The Anthropic Messages rendering of an OpenAI Chat Completions body.

    >>> to_anthropic({"messages": [{"role": "system", "content": "s"},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "x"}]})["messages"]
    [{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'c1', 'content': 'x'}]}]
    """
    system: list[str] = []
    out: list[dict[str, object]] = []

    def push(role: str, blocks: list[dict[str, object]]) -> None:
        if out and out[-1]["role"] == role:
            previous = out[-1]["content"]
            assert isinstance(previous, list)
            previous.extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in _messages(body):
        role, text = m.get("role"), _text(m.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": text}
            push("user", [block])
        elif role == "assistant":
            blocks: list[dict[str, object]] = [{"type": "text", "text": text}] if text else []
            for c in m.get("tool_calls") or []:  # type: ignore[attr-defined]
                fn = c.get("function", {}) if isinstance(c, dict) else {}
                blocks.append({"type": "tool_use", "id": c.get("id"), "name": fn.get("name"),
                               "input": _loads(str(fn.get("arguments", "")))})  # fmt: skip
            push("assistant", blocks)
        else:
            push("user", [{"type": "text", "text": text}])
    doc: dict[str, object] = {"messages": out}
    if system:
        doc["system"] = "\n".join(system)
    return doc


def _loads(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text


#: Bedrock Converse's answer (``ValidationException``, HTTP 400) to a conversation
#: whose first message is not the user's, verbatim as users quote it (Strands
#: issue 2085 with Amazon Nova; Dify issue 12340 with Claude on Bedrock).
BEDROCK_FIRST_USER = rule("bedrock.user_not_first").template


def _bedrock_first_user(body: Mapping[str, object], step: int) -> list[Incident]:
    """Bedrock Converse's rule that the conversation starts with the user: the
    first message after the system prompt, a tool result (a ``toolResult`` in a
    user turn) counting as no user message of its own."""
    first = next((m for m in _messages(body) if m.get("role") not in ("system", "developer")),
                 None)  # fmt: skip
    if first is None or first.get("role") == "user":
        return []
    ids = tuple(str(c.get("id")) for c in first.get("tool_calls") or []  # type: ignore[attr-defined]
                if isinstance(c, dict))  # fmt: skip
    return [Incident(IncidentKind.PROVIDER_REJECTION, step, ids,
                     f"bedrock rejects the request: the conversation starts with the "
                     f"{first.get('role')}'s message, not the user's",
                     reason="bedrock:first_message",
                     text=BEDROCK_FIRST_USER)]  # fmt: skip


#: The providers an adapter's ``providers`` may name (:func:`judge_request`).
OWN_PROVIDERS = frozenset(p.value for p in Provider)

#: The providers whose rules judge an agent whose provider is unknown.
COMMON_PROVIDERS = (Provider.OPENAI, Provider.ANTHROPIC)

#: The order providers are judged (and their texts shown) in.
_ORDER = (Provider.GEMINI, Provider.OPENAI_RESPONSES, Provider.OPENAI, Provider.ANTHROPIC,
          Provider.BEDROCK, Provider.MISTRAL, Provider.DEEPSEEK)  # fmt: skip


def judged_by(providers: frozenset[str]) -> tuple[Provider, ...]:
    """The providers whose rules judge an agent whose adapter names ``providers``:
    exactly those; none named (unknown): :data:`COMMON_PROVIDERS`.

    >>> [p.value for p in judged_by(frozenset({"anthropic"}))]
    ['anthropic']
    >>> [p.value for p in judged_by(frozenset())]
    ['openai', 'anthropic']
    """
    named = tuple(p for p in _ORDER if p.value in providers)
    return named or COMMON_PROVIDERS


def rejecting_provider(incident: Incident) -> tuple[str, str]:
    """The provider a rejection names and the kind of error, read from its reason
    (``provider:kind``, as :func:`judge_request` writes it); ``("", "")`` for
    any other incident.

    >>> rejecting_provider(Incident(IncidentKind.PROVIDER_REJECTION, 1, (), "",
    ...                             reason="openai-responses:result_without_call"))
    ('openai-responses', 'result_without_call')
    """
    if incident.kind is not IncidentKind.PROVIDER_REJECTION:
        return "", ""
    reason = incident.reason
    who = max((p.value for p in Provider if reason.startswith(f"{p.value}:")), key=len, default="")
    return (who, reason[len(who) + 1 :]) if who else ("", "")


def rules_line(providers: frozenset[str], source: str = "") -> str:
    """Which provider's rules judged the agent's requests, and why, as the verdict says it.

    >>> print(rules_line(frozenset({"openai"}), "model string 'openai:gpt-4o'"))
    ... # doctest: +NORMALIZE_WHITESPACE
    provider rules: OpenAI Chat Completions, the provider the agent's model talks to
    (model string 'openai:gpt-4o')
    >>> rules_line(frozenset(), "FunctionModel").startswith(
    ...     "provider rules: OpenAI Chat Completions and Anthropic Messages, both:")
    True
    """
    titles = [PROVIDERS[p].title for p in judged_by(providers)]
    named = titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]
    why = f" ({source})" if source else ""
    if not providers:
        return (f"provider rules: {named}, both: the provider the agent talks to is not "
                f"known{why}; a request either rejects is flagged")  # fmt: skip
    return f"provider rules: {named}, the provider the agent's model talks to{why}"


def _renderings(
    body: Mapping[str, object], providers: frozenset[str]
) -> list[tuple[Provider, Mapping[str, object]]]:
    """The request in each format whose rules judge it (:func:`judged_by`)."""
    out: list[tuple[Provider, Mapping[str, object]]] = []
    for provider in judged_by(providers):
        if provider is Provider.OPENAI:
            out.append((provider, body))
        elif provider is Provider.ANTHROPIC:
            out.append((provider, to_anthropic(body)))
        else:
            out.append((provider, as_provider(body, provider)))
    return out


#: Anthropic's answer (HTTP 400, ``invalid_request_error``) to a request whose
#: ``messages`` are empty (the system prompt goes apart), verbatim as users quote
#: it (DevoxxGenie issue 567); Bedrock and Gemini refuse an empty conversation too.
ANTHROPIC_NO_MESSAGES = "messages: at least one message is required"


#: The providers known to refuse a request whose conversation is empty (the
#: system prompt goes apart); Anthropic's text is :data:`ANTHROPIC_NO_MESSAGES`.
_REFUSE_EMPTY = (Provider.ANTHROPIC, Provider.GEMINI, Provider.BEDROCK)


def _emptied(
    body: Mapping[str, object], step: int, providers: frozenset[str] = frozenset()
) -> list[Incident]:
    """A request that holds nothing but the system prompt: a trim emptied the
    conversation (a loop's first request already holds the user's message), or
    a resume after a crash found none saved, and every provider that keeps the
    system prompt apart refuses it.  OpenAI Chat Completions and Responses take
    the system message as the conversation: an agent judged by them alone is
    not refused."""
    refusing = [p for p in judged_by(providers) if p in _REFUSE_EMPTY]
    if not refusing:
        return []
    raw = body.get("messages")
    if not isinstance(raw, list) or any(
        not isinstance(m, dict) or m.get("role") not in ("system", "developer") for m in raw
    ):
        return []
    held = f"only {len(raw)} system message(s)" if raw else "no message at all"
    who = refusing[0]
    text = ANTHROPIC_NO_MESSAGES if who is Provider.ANTHROPIC else ""
    return [Incident(IncidentKind.PROVIDER_REJECTION, step, (),
                     f"{who} rejects the request: it holds {held} and no conversation "
                     "(nothing of the conversation is left in it, the user's message included)",
                     reason=f"{who}:no_messages", text=text)]  # fmt: skip


def judge_request(
    body: Mapping[str, object],
    ledger: Ledger,
    step: int,
    *,
    trims: bool,
    providers: frozenset[str] = frozenset(),
) -> list[Incident]:
    """Every incident of one request (see the module's docs).

    Parameters
    ----------
    body : Mapping[str, object]
        The request, OpenAI Chat Completions.
    ledger : Ledger
        The run's ground truth so far.
    step : int
        The schedule step the request arrived in.
    trims : bool
        Whether the configuration trims at the framework's hook (a whole,
        closed unit may then be gone without loss).
    providers : frozenset[str]
        The providers the agent sends to (its adapter's ``providers``,
        :data:`OWN_PROVIDERS`): exactly their rules judge (:func:`judged_by`;
        none named: OpenAI Chat Completions' and Anthropic's).  Bedrock
        Converse's rule that a conversation starts with the user is told as
        :data:`BEDROCK_FIRST_USER`.
    """
    found: list[Incident] = _emptied(body, step, providers)
    if "bedrock" in providers:
        found += _bedrock_first_user(body, step)
    for provider, rendered in _renderings(body, providers):
        for error in validate(rendered, provider, source="request"):
            if provider is Provider.BEDROCK and error.kind == "user_not_first":
                continue  # told above, with the role that came first
            found.append(Incident(IncidentKind.PROVIDER_REJECTION, step, error.ids,
                                  f"{provider} rejects the request: {error.kind}",
                                  reason=f"{provider}:{error.kind}", text=error.text))  # fmt: skip
    calls, results = calls_and_results(body)
    for cid in calls:
        if cid not in results:
            found.append(Incident(IncidentKind.UNANSWERED_CALL, step, (cid,),
                                  f"call {cid} is sent without its result"))  # fmt: skip
    for cid, text in results.items():
        if cid not in calls:
            found.append(Incident(IncidentKind.ORPHANED_RESULT, step, (cid,),
                                  f"the result of {cid} is sent without its call"))  # fmt: skip
        found += _judge_result(cid, text, ledger, step, body)
    for cid, (_, arguments) in calls.items():
        issued = ledger.issued.get(cid)
        if issued is not None and _loads(arguments) != _loads(issued.call.arguments):
            found.append(Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                                  f"the arguments of {cid} differ from those the model issued",
                                  reason="arguments"))  # fmt: skip
    found += _silent_losses(calls, results, ledger, step, trims=trims, providers=providers)
    return found


def _judge_result(
    cid: str, text: str, ledger: Ledger, step: int, body: Mapping[str, object]
) -> list[Incident]:
    """The result ``text`` of ``cid`` against what its tool did (the rule of
    :mod:`.placeholder`: the output, a copy of it, an honest placeholder, or invented)."""
    bodies = ledger.bodies_of(cid)
    done = ledger.executed(cid)
    issued = ledger.issued.get(cid)
    words = call_words(issued.call.name, cid, issued.call.arguments) if issued else (cid,)
    if done is not None and done.end is BodyEnd.OK:
        if done.output in text or json.dumps(done.output) in text:
            return []
        stripped = text.strip().strip('"')
        if stripped and (done.output.startswith(stripped[: max(1, len(stripped) - 3)])):
            return [Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                             f"the result of {cid} is a shortened copy of the tool's output "
                             f"({len(text)} of {len(done.output)} characters)",
                             reason="result")]  # fmt: skip
        head, tail = _head_and_tail(stripped, done.output)
        if head:
            cut = len(done.output) - head - tail
            return [Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                             f"the result of {cid} is a shortened copy of the tool's output: "
                             f"its first {head} and last {tail} characters kept, {cut} of the "
                             "middle cut", reason="result")]  # fmt: skip
        kept = _common(stripped, done.output)
        if _KEPT_HEAD <= kept < len(done.output):  # the output's start, then a note or nothing
            note = stripped[kept:].strip()
            says = (
                "it says so"
                if ruling(note, ran="ok", call_words=words).honest
                or re.search(r"truncat|cut|omit|shorten|trimm", note, re.IGNORECASE)
                else "nothing says so"
            )
            return [Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                             f"the result of {cid} is a shortened copy of the tool's output: "
                             f"its first {kept} of {len(done.output)} characters kept, the rest "
                             f"cut ({says}: {_short(note or '(no note)')})",
                             reason="result")]  # fmt: skip
        judged = ruling(text, ran="ok", call_words=words, outputs=[done.output])
        if judged.honest:
            ledger.rule(step, cid, f"the result of {cid} reads {_short(text)}: {judged.why} "
                                   "(honest: no loss)")  # fmt: skip
            return []
        return [Incident(IncidentKind.SYNTHESIZED_RESULT, step, (cid,),
                         f"the result of {cid} is not what its tool returned, nor an honest "
                         f"placeholder: {judged.why}", reason="rewritten")]  # fmt: skip
    if done is not None or cid in ledger.denied:
        return []  # an error, a timeout or a refusal, reported by the framework
    if cid not in ledger.issued:
        return []  # an orphan; judged above
    shown = any(cid in calls_and_results(r.body)[1] for r in ledger.requests if r.body is not body)
    judged = ruling(text, ran="answered" if shown else "none", call_words=words,
                    outputs=[b.output for b in bodies])  # fmt: skip
    if judged.honest:
        ledger.rule(step, cid, f"the result of {cid} reads {_short(text)}: {judged.why} "
                               "(honest: no tool ran, and it says so)")  # fmt: skip
        return []
    why = "no tool body ran for it"
    if bodies:
        cancelled = any(b.end is BodyEnd.CANCELLED for b in bodies)
        why = "its body was cancelled" if cancelled else "its body was dropped by a crash"
    return [Incident(IncidentKind.SYNTHESIZED_RESULT, step, (cid,),
                     f"the result of {cid} was invented: {why}, and {_short(text)} is not an "
                     f"honest placeholder: {judged.why}", reason="no_body")]  # fmt: skip


#: Characters of a tool's output a result must keep at each end to be its
#: head-and-tail copy (Strands' sliding window keeps 200 at each end).
_KEPT_END = 16

#: Characters of a tool's output's start a result must keep to be its
#: truncated copy (its first characters and a note): longer than a line that
#: names the call, which an honest placeholder may repeat.
_KEPT_HEAD = 64


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _head_and_tail(text: str, output: str) -> tuple[int, int]:
    """How many characters of ``output``'s start and end ``text`` begins and
    ends with, when it keeps at least :data:`_KEPT_END` at each end and not
    the whole (its middle cut: a note in between, as truncating trimmers
    write it); else ``(0, 0)``."""
    head = _common(text, output)
    tail = _common(text[::-1], output[::-1])
    if head < _KEPT_END or tail < _KEPT_END or head + tail >= len(output):
        return 0, 0
    return head, tail


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _silent_losses(
    calls: Mapping[str, object],
    results: Mapping[str, str],
    ledger: Ledger,
    step: int,
    *,
    trims: bool,
    providers: frozenset[str] = frozenset(),
) -> Iterable[Incident]:
    for cid, issued in ledger.issued.items():
        if cid in calls or cid in results or ledger.executed(cid) is None:
            continue
        batch_kept = [b for b in issued.batch if b in calls or b in results]
        if batch_kept and trims and ledger.holds(cid):
            kept = ", ".join(batch_kept)
            if any((b in calls) != (b in results) for b in issued.batch):
                yield Incident(IncidentKind.INVALID_PRUNE, step, (cid,),
                               f"the trim removed {cid} ({issued.call.name}, it ran) and kept "
                               f"{kept} of the same batch with a call or a result missing: "
                               "the cut broke the pairing", reason="split_unit")  # fmt: skip
            else:
                ledger.rule(step, cid, f"the trim removed {cid} ({issued.call.name}) with its "
                                       f"result from its batch, {kept} kept whole: the request "
                                       "pairs every call with its result, which "
                                       f"{_accepting(providers)} (whole calls are judged by the "
                                       "provider's rules: no loss)")  # fmt: skip
            continue
        if batch_kept:
            why = f"its parallel batch was cut ({', '.join(batch_kept)} kept)"
        elif not trims:
            why = "no trim removed it"
        elif cid in ledger.trimmed or ledger.holds(cid):
            continue  # a whole, closed unit the loop held, removed by the trim
        else:
            why = _discarded(ledger, cid)
        told = f"{issued.call.name} ran for {cid} but the model is no longer told: {why}"
        yield Incident(IncidentKind.SILENT_LOSS, step, (cid,), told)


def _accepting(providers: frozenset[str]) -> str:
    """Who accepts a request that pairs every call: the providers that judged it."""
    titles = [PROVIDERS[p].title for p in judged_by(providers)]
    if len(titles) == 1:
        return f"{titles[0]} accepts"
    return f"{', '.join(titles[:-1])} and {titles[-1]} accept"


def _discarded(ledger: Ledger, cid: str) -> str:
    at = ledger.last_disruption
    what = ("a cancel" if at in ledger.cancels else "a crash" if at in ledger.crashes
            else "a turn that raised")  # fmt: skip
    open_ = [c for c in ledger.unit(cid) if ledger.executed(c) is None]
    if open_ and cid not in ledger.held:
        return (
            f"its unit never closed ({', '.join(open_)} never finished) and went with "
            f"{what} at step {at + 1}, so no trim removed it"
        )
    return (
        f"the loop has not held its whole, closed unit since {what} at step {at + 1}, "
        "so no trim removed it"
    )


def removed_by_trim(body: Mapping[str, object], ledger: Ledger) -> list[tuple[str, ...]]:
    """The units a trim removed from this request: whole (no call or result
    of the unit is sent), closed and held by the loop (:meth:`.Ledger.holds`),
    and not already removed by an earlier trim; in issue order."""
    calls, results = calls_and_results(body)
    out: list[tuple[str, ...]] = []
    for cid, issued in ledger.issued.items():
        unit = issued.batch
        if cid != unit[0] or any(c in calls or c in results for c in unit):
            continue
        if all(c in ledger.trimmed for c in unit) or not ledger.holds(cid):
            continue
        out.append(unit)
    return out


def hang(step: int, deadline: float) -> Incident:
    """The incident of a turn still running ``deadline`` virtual seconds after a cancel."""
    return Incident(
        IncidentKind.HANG,
        step,
        (),
        f"the turn did not return within {deadline:g} s (virtual) of the cancel",
    )


def refused_turn(
    step: int, history: list[dict[str, object]], running: Iterable[str], error: str
) -> list[Incident]:
    """The incident of a user's message refused, before any request, by a framework
    whose history holds calls without a result (``running``: the calls whose tool
    body still runs, which are pending, not unanswered); none if every call is answered.

    Examples
    --------
    >>> h = [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {}}]}]
    >>> [i.kind.value for i in refused_turn(3, h, (), "UserError: unprocessed tool calls")]
    ['unanswered_call']
    >>> refused_turn(3, h, ("c1",), "UserError")
    []
    """
    calls, results = calls_and_results({"messages": history})
    busy = set(running)
    open_ = tuple(c for c in calls if c not in results and c not in busy)
    if not open_:
        return []
    names = ", ".join(f"{c} ({calls[c][0]})" for c in open_)
    return [
        Incident(
            IncidentKind.UNANSWERED_CALL,
            step,
            open_,
            f"the history holds {names} without a result and the framework refuses the "
            f"user's message ({error}): the conversation cannot go on",
            reason="refused_turn",
        )
    ]
