"""openai-agents: a schedule prunecheck found, replayed with the framework alone.

Run it from the directory the target's path is relative to:

    python reproduce.py

It prints every step and request, and each broken request (the provider's 400)
or ledger mismatch it finds; exit status 1 if it finds one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from collections.abc import Mapping

TARGET = 'examples/loops/openai_agents_keep_last.py:app'
SCHEDULE = json.loads('{\n  "expect": [\n    "orphaned_result",\n    "provider_rejection"\n  ],\n  "format": "prunecheck-loop-schedule/1",\n  "framework": "openai-agents",\n  "scenario": "tool_timeout",\n  "seed": 1,\n  "spec": "loop:examples/loops/openai_agents_keep_last.py:app",\n  "steps": [\n    {\n      "kind": "user",\n      "text": "user message 1"\n    },\n    {\n      "calls": [\n        {\n          "arguments": "{\\"target\\": \\"target-1\\"}",\n          "id": "call_1",\n          "name": "run_tests"\n        },\n        {\n          "arguments": "{\\"target\\": \\"target-2\\"}",\n          "id": "call_2",\n          "name": "run_tests"\n        }\n      ],\n      "kind": "reply",\n      "text": ""\n    },\n    {\n      "kind": "advance",\n      "seconds": 30.0\n    },\n    {\n      "calls": [],\n      "kind": "reply",\n      "text": "answer 4"\n    },\n    {\n      "kind": "user",\n      "text": "user message 5"\n    },\n    {\n      "calls": [],\n      "kind": "reply",\n      "text": "answer 6"\n    },\n    {\n      "kind": "user",\n      "text": "user message 7"\n    }\n  ],\n  "target": "examples/loops/openai_agents_keep_last.py:app"\n}\n')



# -------------------------------------------------- the contract's records
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One of the user's tools, as the model sees it.

    Attributes
    ----------
    name : str
        The tool's name.
    description : str
        Its description (may be empty).
    parameters : Mapping[str, object]
        The JSON schema of its arguments.
    """

    name: str
    description: str
    parameters: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model double issued.

    Attributes
    ----------
    id : str
        The id the double issued (``"call_1"`` …).  An adapter whose framework
        does not hand the call id to the tool body passes ``""``: the harness
        then takes the earliest issued call of that name and arguments whose
        body has not started.
    name : str
        The tool's name.
    arguments : str
        The arguments as JSON text, as the provider sends them.
    """

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Reply:
    """What the scripted model answers one request with.

    Attributes
    ----------
    text : str
        The assistant's text (may be ``""`` when calls are issued).
    calls : tuple[ToolCall, ...]
        Parallel tool calls, any width (empty: the turn's final answer).
    chunks : int
        How many chunks an adapter driving its framework in streaming mode
        streams ``text`` (and the calls) in; 1: one chunk.
    """

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    chunks: int = 1


class ToolFailed(Exception):
    """The harness scheduled this tool call to fail; the message is the error text."""


class Capability(StrEnum):
    """What a configured agent can be put through (the scenario classes it applies to)."""

    CANCEL = "cancel"
    """The framework has a cancel API (:meth:`Loop.cancel`)."""
    CRASH_RESUME = "crash_resume"
    """Durable persistence and a resume API (:meth:`Loop.resume`)."""
    CRASH_NEW_MESSAGE = "crash_new_message"
    """Durable persistence; a new user message on the same thread or session."""
    INTERRUPT = "interrupt"
    """Human-in-the-loop approval and its resume (:meth:`Loop.approve`)."""
    TRIM_HOOK = "trim_hook"
    """The configuration trims at the framework's own hook."""
    TOOL_TIMEOUT = "tool_timeout"
    """The framework (or the agent's configuration) has tool timeouts."""


Harness = Loop = Adapter = object  # the contract's protocols: annotations only


class PolicyError(Exception):
    """prunecheck's error of a configuration it cannot check (subject, rule, hint)."""


class IncidentKind(StrEnum):
    """The incident classes (prunecheck.model.incidents)."""

    INVALID_PRUNE = 'invalid_prune'
    ORPHANED_RESULT = 'orphaned_result'
    UNANSWERED_CALL = 'unanswered_call'
    PROVIDER_REJECTION = 'provider_rejection'
    DUPLICATED_SIDE_EFFECT = 'duplicated_side_effect'
    TRUNCATED_PAYLOAD = 'truncated_payload'
    SYNTHESIZED_RESULT = 'synthesized_result'
    SILENT_LOSS = 'silent_loss'
    HANG = 'hang'
    HARD_CEILING_OVERRUN = 'hard_ceiling_overrun'
    DEFERRAL = 'deferral'
    SPILL = 'spill'
    REINJECTION = 'reinjection'
    SESSION_ABORT = 'session_abort'


@dataclass(frozen=True)
class Incident:
    """One finding of the ledger judge (prunecheck.model.incidents.Incident)."""

    kind: IncidentKind
    step: int
    ids: tuple
    detail: str
    reason: str = ""
    text: str = ""


# ------------------------------------------------------------------ ledger
"""The ledger: ground truth of a loop run, held against what the model is told.

Every call the model double issued, every tool body that started and how it
ended, every request the framework sent, every cancel, crash and approval.
The judge (:mod:`.judge`) reads it; nothing in it comes from the framework's
own account of what happened — only from the harness's callbacks, and from
what the framework was *seen holding*: a unit (a reply's calls with all
their results) witnessed whole in a request or in the framework's history
since the last disruption (a cancel, a crash, a turn that raised) is one the
framework holds, and only such a unit can a trim remove (:meth:`Ledger.holds`).
"""


import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


__all__ = ["Body", "BodyEnd", "IssuedCall", "Ledger", "Received"]


class BodyEnd(StrEnum):
    """How a tool body ended (or that it has not)."""

    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    DROPPED = "dropped"  # the process crashed while it ran

    @property
    def executed(self) -> bool:
        """Whether the tool ran to an outcome the model must be told of."""
        return self in (BodyEnd.OK, BodyEnd.FAILED, BodyEnd.TIMED_OUT)


@dataclass(frozen=True, slots=True)
class IssuedCall:
    """A call the model double issued.

    Attributes
    ----------
    call : ToolCall
        The call as issued.
    batch : tuple[str, ...]
        Every call id of the same reply (the parallel batch).
    step : int
        The schedule step that issued it.
    """

    call: ToolCall
    batch: tuple[str, ...]
    step: int


@dataclass(slots=True)
class Body:
    """One run of a tool body for a call.

    Attributes
    ----------
    call : str
        The call id it ran for.
    started : int
        The step it started in.
    end : BodyEnd
        How it ended.
    ended : int
        The step it ended in (-1 while running).
    output : str
        Its output (OK) or error text (FAILED).
    epoch : int
        Which process (0, then +1 after each crash) ran it.
    """

    call: str
    started: int
    end: BodyEnd = BodyEnd.RUNNING
    ended: int = -1
    output: str = ""
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class Received:
    """A request the model double received.

    Attributes
    ----------
    step : int
        The schedule step it arrived in.
    body : Mapping[str, object]
        The request body (OpenAI Chat Completions), as the adapter rendered it.
    """

    step: int
    body: Mapping[str, object]

    def to_json(self) -> str:
        return json.dumps({"step": self.step, "body": self.body}, sort_keys=True)


@dataclass(slots=True)
class Ledger:
    """What really happened in one run (see the module's docs)."""

    issued: dict[str, IssuedCall] = field(default_factory=dict)
    bodies: list[Body] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    denied: set[str] = field(default_factory=set)
    cancels: list[int] = field(default_factory=list)
    crashes: list[int] = field(default_factory=list)
    outcomes: list[tuple[int, str]] = field(default_factory=list)
    users: list[tuple[int, str]] = field(default_factory=list)
    raised: list[int] = field(default_factory=list)
    held: dict[str, int] = field(default_factory=dict)
    trimmed: dict[str, int] = field(default_factory=dict)
    trims: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)

    @property
    def disruptions(self) -> int:
        """Cancels, crashes and turns that raised so far: each may discard what the loop held."""
        return len(self.cancels) + len(self.crashes) + len(self.raised)

    @property
    def last_disruption(self) -> int:
        """The step of the last cancel, crash or raising turn (-1: none yet)."""
        return max((*self.cancels, *self.crashes, *self.raised), default=-1)

    def unit(self, call: str) -> tuple[str, ...]:
        """The call ids of ``call``'s unit: its reply's parallel batch."""
        issued = self.issued.get(call)
        return issued.batch if issued is not None else (call,)

    def witness(self, calls: Collection[str], results: Collection[str]) -> None:
        """The framework was seen holding every unit whose calls and results
        are all in ``calls`` and ``results`` (a request, or its history)."""
        for cid, issued in self.issued.items():
            if all(c in calls and c in results for c in issued.batch):
                self.held[cid] = self.disruptions
                self.trimmed.pop(cid, None)

    def holds(self, call: str) -> bool:
        """Whether the framework holds ``call``'s whole, closed unit: it was
        witnessed since the last disruption, or every call of the unit ran
        to an outcome after it (the loop took the results in, and nothing
        since could have discarded them)."""
        if self.held.get(call) == self.disruptions:
            return True
        last = self.last_disruption
        return call in self.issued and all(
            any(b.end.executed and b.ended > last for b in self.bodies_of(c))
            for c in self.unit(call)
        )

    def note_trim(self, step: int, unit: tuple[str, ...]) -> None:
        """A trim removed ``unit``, whole and closed, from the request of ``step``."""
        if any(c not in self.trimmed for c in unit):
            self.trims.append((step, unit))
        for c in unit:
            self.trimmed.setdefault(c, step)

    def issue(self, calls: tuple[ToolCall, ...], step: int) -> None:
        batch = tuple(c.id for c in calls)
        for c in calls:
            self.issued[c.id] = IssuedCall(c, batch, step)

    def match(self, call: ToolCall) -> str:
        """The issued call id a tool body runs for (``call.id``, or by name and arguments)."""
        if call.id:
            return call.id
        started = {b.call for b in self.bodies}
        for cid, issued in self.issued.items():
            if cid in started or issued.call.name != call.name:
                continue
            if _same_json(issued.call.arguments, call.arguments):
                return cid
        for cid, issued in self.issued.items():
            if issued.call.name == call.name and cid not in started:
                return cid
        return f"unknown:{call.name}"

    def bodies_of(self, call: str) -> list[Body]:
        return [b for b in self.bodies if b.call == call]

    def executed(self, call: str) -> Body | None:
        """The first body of ``call`` that ran to an outcome, if any."""
        return next((b for b in self.bodies_of(call) if b.end.executed), None)


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return a == b


# ------------------------------------------------------------------- judge
"""The judge: every request a loop sends, held against the ledger.

Checks, in this order, each an :class:`~prunecheck.model.incidents.Incident`:

* **provider rejection** — the request under the OpenAI Chat Completions and
  the Anthropic Messages pairing rules (the adapter renders OpenAI; the
  Anthropic rendering is the one a converter sends: system prompt on top,
  ``tool_use`` / ``tool_result`` blocks, consecutive same-role messages
  merged), with the providers' exact texts (:func:`prunecheck.model.provider.validate`);
* **unanswered call** / **orphaned result** — a call no result answers, a
  result no call of the request asked for;
* **truncated payload** — a call's arguments differ from what the model
  issued, or a result is a shortened copy of the tool's output;
* **synthesized result** — a result no tool body produced: the call's body
  never ran to an outcome (never started, dropped by a crash) and the text is
  not a plain "not run" placeholder, or a text that is not the tool's output;
* **invalid prune** — in a configuration that trims, a request keeps part
  of a unit the loop held whole (a call of a parallel batch gone, its
  sibling kept): the trim split a unit;
* **silent loss** — a call whose tool body ran to an outcome (the side
  effect happened) is gone from what the model sees, with its result, and
  no trim removed its whole, closed unit: a configuration that does not trim
  loses it; one that trims kept part of its parallel batch (the loop did
  not hold it whole: else an invalid prune), or never held the whole unit
  since the last cancel, crash or raising turn (the loop discarded it: a
  trim cannot be what removed it, :meth:`.Ledger.holds`).
  A whole, closed unit the loop held and a trim removed — from the front or
  from the middle — is no loss: :func:`removed_by_trim` names it, and the
  narrative reports it as a trim.

Repair layers hide 400s, so the history is judged against the ledger, not
only the request's shape.  :func:`hang` is the check after a cancel; the
ledger's duplicated bodies are judged where they end (:mod:`.scheduler`).
Pure: no I/O.
"""


import json
from collections.abc import Iterable, Mapping



__all__ = [
    "PLACEHOLDER_WORDS",
    "calls_and_results",
    "hang",
    "judge_request",
    "removed_by_trim",
    "to_anthropic",
]

#: Words that make a result for a call that never ran an honest placeholder
#: ("cancelled", "interrupted" …) rather than an invented outcome.
PLACEHOLDER_WORDS = (
    "cancel", "interrupt", "abort", "denied", "reject", "not run", "not executed",
    "error", "fail", "timeout", "timed out", "skipped", "missing", "no result",
)  # fmt: skip


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


def judge_request(
    body: Mapping[str, object], ledger: Ledger, step: int, *, trims: bool
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
    """
    found: list[Incident] = []
    for provider, rendered in ((Provider.OPENAI, body), (Provider.ANTHROPIC, to_anthropic(body))):
        for error in validate(rendered, provider, source="request"):
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
        found += _judge_result(cid, text, ledger, step)
    for cid, (_, arguments) in calls.items():
        issued = ledger.issued.get(cid)
        if issued is not None and _loads(arguments) != _loads(issued.call.arguments):
            found.append(Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                                  f"the arguments of {cid} differ from those the model issued",
                                  reason="arguments"))  # fmt: skip
    found += _silent_losses(calls, results, ledger, step, trims=trims)
    return found


def _judge_result(cid: str, text: str, ledger: Ledger, step: int) -> list[Incident]:
    bodies = ledger.bodies_of(cid)
    done = ledger.executed(cid)
    if done is not None and done.end is BodyEnd.OK:
        if done.output in text or json.dumps(done.output) in text:
            return []
        stripped = text.strip().strip('"')
        if stripped and (done.output.startswith(stripped[: max(1, len(stripped) - 3)])):
            return [Incident(IncidentKind.TRUNCATED_PAYLOAD, step, (cid,),
                             f"the result of {cid} is a shortened copy of the tool's output "
                             f"({len(text)} of {len(done.output)} characters)",
                             reason="result")]  # fmt: skip
        return [Incident(IncidentKind.SYNTHESIZED_RESULT, step, (cid,),
                         f"the result of {cid} is not what its tool returned",
                         reason="rewritten")]  # fmt: skip
    if done is not None or any(b.end is BodyEnd.CANCELLED for b in bodies) or cid in ledger.denied:
        return []  # an error, a timeout, a cancel or a refusal, reported by the framework
    if cid not in ledger.issued:
        return []  # an orphan; judged above
    lowered = text.lower()
    if any(word in lowered for word in PLACEHOLDER_WORDS):
        return []
    why = "its body was dropped by a crash" if bodies else "no tool body ran for it"
    return [Incident(IncidentKind.SYNTHESIZED_RESULT, step, (cid,),
                     f"the result of {cid} was invented: {why}", reason="no_body")]  # fmt: skip


def _silent_losses(
    calls: Mapping[str, object],
    results: Mapping[str, str],
    ledger: Ledger,
    step: int,
    *,
    trims: bool,
) -> Iterable[Incident]:
    for cid, issued in ledger.issued.items():
        if cid in calls or cid in results or ledger.executed(cid) is None:
            continue
        batch_kept = [b for b in issued.batch if b in calls or b in results]
        if batch_kept and trims and ledger.holds(cid):
            kept = ", ".join(batch_kept)
            yield Incident(IncidentKind.INVALID_PRUNE, step, (cid,),
                           f"the trim removed {cid} ({issued.call.name}, it ran) and kept "
                           f"{kept} of the same unit: a prune must remove whole units",
                           reason="split_unit")  # fmt: skip
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


# ----------------------------------------------------------------- _common
"""What the pydantic-ai and OpenAI Agents SDK adapters share: recognizing a
target (an agent, or a factory of one) and keeping executor work on the
event loop's thread."""


import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["InlineExecutor", "build_target", "inline_executor"]


def _of_package(obj: object, package: str) -> bool:
    return type(obj).__module__.split(".")[0] == package


def build_target(target: object, package: str, is_agent: Callable[[Any], bool]) -> Any:
    """The agent ``target`` stands for, or ``None`` if it is not ``package``'s.

    Parameters
    ----------
    target : object
        An agent, or a factory (a callable taking no argument) building one.
        A factory is called each time: every loop gets a fresh agent.
    package : str
        The framework's top-level package (``"pydantic_ai"``, ``"agents"``):
        nothing is imported unless ``target`` (or what the factory built)
        comes from it.
    is_agent : Callable[[Any], bool]
        Whether an object of ``package`` is an agent.

    Returns
    -------
    object or None
        The agent (or what the factory returned, when its first element is an
        agent: ``(agent, run_config)``).
    """
    if _of_package(target, package):
        return target if is_agent(target) else None
    if callable(target) and not isinstance(target, type) and _takes_no_argument(target):
        built = target()
        head = built[0] if isinstance(built, tuple) and built else built
        if _of_package(head, package) and is_agent(head):
            return built
    return None


def _takes_no_argument(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    )


class InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor that runs each function at once on the calling thread.

    Frameworks hand blocking work to the loop's default executor
    (``asyncio.to_thread``: the Agents SDK's ``SQLiteSession``; sync history
    processors).  A worker thread finishes whenever the operating system lets
    it, which a deterministic harness cannot order; run inline, the work is
    done before the ``await`` that asked for it yields, and its result is one
    more ready callback of the loop.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered to the awaiting task, as a worker would
            future.set_exception(exc)
        return future


def inline_executor() -> None:
    """Make the running loop's default executor an :class:`InlineExecutor` (idempotent)."""
    loop = asyncio.get_running_loop()
    if not isinstance(getattr(loop, "_default_executor", None), InlineExecutor):
        loop.set_default_executor(InlineExecutor(max_workers=1))


# ----------------------------------------------------------- openai_agents
"""The OpenAI Agents SDK's ``Runner`` driven through its own loop (issue 21).

The user's ``Agent`` and ``RunConfig`` run as configured — the run config's
``call_model_input_filter``, ``session_input_callback`` and
``session_settings`` (the SDK's trimming hooks), the tools' ``needs_approval``,
``timeout_seconds`` and failure handlers — with two substitutions at the SDK's
own boundaries:

- the model is a ``Model`` (the SDK's provider-neutral interface, set as
  ``RunConfig.model`` so that it serves every agent of the run) which renders
  the Responses input items it is handed with the SDK's own Chat Completions
  converter (``Converter.items_to_messages``, what ``OpenAIChatCompletionsModel``
  sends), asks :meth:`Harness.model` and answers with the scripted message and
  parallel ``function_call`` items;
- every ``FunctionTool`` of the agent is a copy whose ``on_invoke_tool`` calls
  :meth:`Harness.tool`, rebound to the original's failure handler: name, JSON
  schema, approval, timeout and error-as-result behaviour are the user's.

**Durable persistence** is the SDK's ``SQLiteSession`` on
``<store>/openai-agents-session.sqlite``: what the runner wrote there is what a
crash keeps.  The session's ``asyncio.to_thread`` work runs inline on the loop
(:class:`~._common.InlineExecutor`) so that the harness sees every step.

**Cancel** is ``RunResultStreaming.cancel()`` (the turn runs
``Runner.run_streamed``; ``cancel_mode`` chooses ``"immediate"``, the SDK's
default, or ``"after_turn"``).  There is no resume of a crashed run: the SDK
resumes only a ``RunState`` the application kept from an interruption, so
after a crash the loop offers a **new message** on the same session.
**Approval**: a run that ends with ``interruptions`` waits; once every pending
call is answered, ``RunState.approve``/``reject`` and ``Runner.run_streamed(agent,
state)`` continue it.

A target is an ``Agent``, or a factory returning one or ``(agent, run_config)``.
Needs ``pip install 'prunecheck[loops]'``.
"""


import asyncio
import dataclasses
import json
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


__all__ = ["OpenAIAgentsAdapter", "render_items"]

_FILE = "openai-agents-session.sqlite"
_SESSION = "prunecheck"


def _is_agent(obj: object) -> bool:
    from agents import Agent

    return isinstance(obj, Agent)


def _target(target: object) -> tuple[Any, Any] | None:
    """``(agent, run_config)`` of ``target``, or None if it is not the SDK's."""
    from_target = build_target(target, "agents", _is_agent)
    if from_target is None:
        return None
    if isinstance(from_target, tuple):
        agent, config = (*from_target, None)[:2]
    else:
        agent, config = from_target, None
    if config is None:
        from agents import RunConfig

        config = RunConfig()
    return agent, config


def _need(target: object) -> tuple[Any, Any]:
    found = _target(target)
    if found is None:
        raise TypeError(
            f"{target!r}: the OpenAI Agents SDK adapter drives an Agent; this is not one, nor "
            "a function of no argument returning one or (agent, run_config). Hint: point at "
            "the Agent (file.py:agent) or at a factory returning it with its RunConfig."
        )
    return found


def _function_tools(agent: Any) -> list[Any]:
    from agents import FunctionTool

    return [t for t in agent.tools if isinstance(t, FunctionTool)]


@dataclass(slots=True)
class OpenAIAgentsAdapter:
    """The :class:`~prunecheck.sim.loops.contract.Adapter` of the OpenAI Agents SDK.

    Attributes
    ----------
    cancel_mode : str
        ``RunResultStreaming.cancel(mode=...)``: ``"immediate"`` (the SDK's
        default) or ``"after_turn"``.
    """

    cancel_mode: str = "immediate"
    framework: str = field(default="openai-agents", init=False)

    def accepts(self, target: object) -> bool:
        return _target(target) is not None

    def tools(self, target: object) -> list[ToolSpec]:
        agent, _ = _need(target)
        return [
            ToolSpec(t.name, t.description or "", dict(t.params_json_schema))
            for t in _function_tools(agent)
        ]

    def capabilities(self, target: object) -> frozenset[Capability]:
        agent, config = _need(target)
        caps = {Capability.CANCEL, Capability.CRASH_NEW_MESSAGE}
        tools = _function_tools(agent)
        if any(t.needs_approval is not False for t in tools):
            caps.add(Capability.INTERRUPT)
        settings = config.session_settings
        if (
            config.call_model_input_filter is not None
            or config.session_input_callback is not None
            or (settings is not None and settings.limit is not None)
        ):
            caps.add(Capability.TRIM_HOOK)
        if any(t.timeout_seconds is not None for t in tools):
            caps.add(Capability.TOOL_TIMEOUT)
        return frozenset(caps)

    def open(self, target: object, harness: Harness) -> _AgentsLoop:
        agent, config = _need(target)
        return _AgentsLoop(agent, config, harness, self.cancel_mode)

    def script(self, target_spec: str, schedule_json: str) -> str:
        pass

        module = sys.modules[__name__]
        adapter = f"OpenAIAgentsAdapter(cancel_mode={self.cancel_mode!r})"
        return script_text([module], "openai-agents", target_spec, schedule_json, adapter)


def render_items(items: Any, instructions: str | None) -> list[dict[str, object]]:
    """Responses input items as OpenAI Chat Completions messages, by the
    SDK's own converter (the instructions first, as a system message)."""
    from agents.models.chatcmpl_converter import Converter

    messages = [dict(m) for m in Converter.items_to_messages(items)]
    if instructions:
        messages.insert(0, {"role": "system", "content": instructions})
    return messages


class _Double:
    """The model double: an ``agents.models.interface.Model``."""

    @staticmethod
    def make(loop: _AgentsLoop) -> Any:
        from agents.items import ModelResponse
        from agents.models.chatcmpl_converter import Converter
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import (
            Response,
            ResponseCompletedEvent,
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )

        class PrunecheckModel(Model):
            async def _output(self, instructions: str | None, input: Any, tools: Any) -> list[Any]:
                specs = []
                for tool in tools:
                    try:
                        specs.append(dict(Converter.tool_to_openai(tool)))
                    except Exception:  # hosted tools have no Chat Completions form
                        continue
                request = {"messages": render_items(input, instructions), "tools": specs}
                reply: Reply = await loop.harness.model(request)
                loop.replies += 1
                out: list[Any] = []
                if reply.text or not reply.calls:
                    out.append(
                        ResponseOutputMessage(
                            id=f"msg_{loop.replies}",
                            type="message",
                            role="assistant",
                            status="completed",
                            content=[
                                ResponseOutputText(
                                    type="output_text", text=reply.text, annotations=[]
                                )
                            ],
                        )
                    )
                for call in reply.calls:
                    loop.issued[call.id] = call
                    out.append(
                        ResponseFunctionToolCall(
                            id=f"fc_{call.id}",
                            type="function_call",
                            call_id=call.id,
                            name=call.name,
                            arguments=call.arguments,
                            status="completed",
                        )
                    )
                return out

            async def get_response(
                self, system_instructions: str | None, input: Any, model_settings: Any,
                tools: Any, output_schema: Any, handoffs: Any, tracing: Any, **_: Any,
            ) -> Any:  # fmt: skip
                output = await self._output(system_instructions, input, tools)
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            async def stream_response(
                self, system_instructions: str | None, input: Any, model_settings: Any,
                tools: Any, output_schema: Any, handoffs: Any, tracing: Any, **_: Any,
            ) -> AsyncIterator[Any]:  # fmt: skip
                output = await self._output(system_instructions, input, tools)
                response = Response(
                    id=f"resp_{loop.replies}",
                    created_at=0,
                    model="prunecheck-double",
                    object="response",
                    output=output,
                    parallel_tool_calls=True,
                    tool_choice="auto",
                    tools=[],
                )
                yield ResponseCompletedEvent(
                    type="response.completed", response=response, sequence_number=0
                )

        return PrunecheckModel()


def _fake_tool(tool: Any, loop: _AgentsLoop) -> Any:
    """A copy of ``tool`` whose body calls the harness (failure handling kept)."""
    from agents import tool as agents_tool

    async def body(ctx: Any, arguments: str) -> str:
        call_id = str(getattr(ctx, "tool_call_id", "") or "")
        call = loop.issued.get(call_id) or ToolCall(call_id, tool.name, arguments)
        return await loop.harness.tool(call)

    invoker_type = getattr(agents_tool, "_FailureHandlingFunctionToolInvoker", None)
    original = tool.on_invoke_tool
    invoke: Any = body
    if invoker_type is not None and isinstance(original, invoker_type):
        invoke = invoker_type(body, original._on_handled_error)
    return dataclasses.replace(tool, on_invoke_tool=invoke)


class _AgentsLoop:
    """One live instance of the user's agent (see the module docstring)."""

    def __init__(self, agent: Any, config: Any, harness: Harness, cancel_mode: str) -> None:
        from agents import SQLiteSession, set_tracing_disabled

        set_tracing_disabled(True)
        self.harness = harness
        self.issued: dict[str, ToolCall] = {}
        self.replies = 0
        self._cancel_mode = cancel_mode
        self._path = Path(harness.store) / _FILE
        model = _Double.make(self)
        fakes = {id(t): _fake_tool(t, self) for t in _function_tools(agent)}
        self._agent = agent.clone(tools=[fakes.get(id(t), t) for t in agent.tools])
        self._config = dataclasses.replace(config, model=model, tracing_disabled=True)
        self._session = SQLiteSession(_SESSION, db_path=self._path)
        self._result: Any = None
        self._pending: dict[str, bool | None] = {}

    async def _drive(self, given: Any) -> None:
        from agents import Runner

        inline_executor()
        result = Runner.run_streamed(
            self._agent, given, session=self._session, run_config=self._config
        )
        self._result = result
        async for _event in result.stream_events():
            pass
        for item in result.interruptions:
            call_id = str(getattr(item.raw_item, "call_id", "") or "")
            self._pending[call_id] = None
            self.harness.awaiting_approval(call_id)

    async def send(self, text: str) -> None:
        await self._drive(text)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        if self._result is not None and not self._result.is_complete:
            self._result.cancel(mode=self._cancel_mode)
        else:
            turn.cancel()

    async def resume(self) -> None:
        raise NotImplementedError(
            "the OpenAI Agents SDK resumes only a RunState kept from an interruption; "
            "after a crash, send a new message on the session"
        )

    async def approve(self, call_id: str, approved: bool) -> None:
        if call_id not in self._pending or self._result is None:
            raise KeyError(f"no approval of {call_id!r} is pending")
        self._pending[call_id] = approved
        if any(v is None for v in self._pending.values()):
            return
        state = self._result.to_state()
        for item in self._result.interruptions:
            call_id = str(getattr(item.raw_item, "call_id", "") or "")
            if self._pending.get(call_id):
                state.approve(item)
            else:
                state.reject(item)
        self._pending.clear()
        await self._drive(state)

    def history(self) -> list[dict[str, object]]:
        """The session's items (read from its SQLite file), rendered."""
        if not self._path.exists():
            return []
        with closing(sqlite3.connect(self._path)) as conn:
            try:
                rows = conn.execute(
                    "SELECT message_data FROM agent_messages WHERE session_id = ? ORDER BY id",
                    (_SESSION,),
                ).fetchall()
            except sqlite3.OperationalError:  # no table yet
                return []
        return render_items([json.loads(r[0]) for r in rows], None)

    def abandon(self) -> None:
        self._session.close()
        self._result = None


# ------------------------------------------------------------- the adapter
ADAPTER = OpenAIAgentsAdapter(cancel_mode='immediate')


# ------------------------------------------------------------- the harness

# ---------------------------------------------------------------- the harness
import asyncio as _asyncio
import heapq as _heapq
import importlib.util as _ilu
import json as _json
import sys as _sys
import tempfile as _tempfile
from pathlib import Path as _Path

_TEXT_ORPHAN = ("Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.")
_TEXT_UNANSWERED = ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    "have response messages: {ids}")


class VirtualLoop(_asyncio.SelectorEventLoop):
    """An event loop whose clock moves only on an ``advance`` step."""

    made = []

    def __init__(self, start=0.0):
        super().__init__()
        self.now = start
        VirtualLoop.made.append(self)

    def time(self):
        return self.now

    def settle(self):
        for _ in range(200_000):
            self.call_soon(self.stop)
            self.run_forever()
            timers = self._scheduled
            while timers and timers[0].cancelled():
                _heapq.heappop(timers)
            if not self._ready and not (timers and timers[0].when() <= self.now):
                return
        raise RuntimeError("the loop never went quiescent")

    def advance(self, seconds):
        target = self.now + seconds
        while True:
            live = [h.when() for h in self._scheduled if not h.cancelled()]
            if not live or min(live) > target:
                break
            self.now = max(self.now, min(live))
            self.settle()
        self.now = target
        self.settle()


class ScriptHarness:
    """What the adapter's loop calls back into; holds the core's ledger."""

    def __init__(self, store):
        self.store = store
        self.clock = VirtualLoop()
        self.ledger = Ledger()
        self.findings, self.approvals = [], []
        self.replies, self.waiting = [], {}
        self.trims = False
        self.step = 0
        self.epoch = 0

    def now(self):
        return self.clock.time()

    def awaiting_approval(self, call_id):
        if call_id not in self.approvals:
            self.approvals.append(call_id)

    async def model(self, request):
        body = _json.loads(_json.dumps(request, sort_keys=True, default=str))
        self.ledger.requests.append(Received(self.step, body))
        print(f"  request {len(self.ledger.requests)}: {short(body)}")
        self.judge(body)
        future = _asyncio.get_running_loop().create_future()
        self.replies.append(future)
        return await future

    async def tool(self, call):
        body = Body(self.ledger.match(call), self.step, epoch=self.epoch)
        self.ledger.bodies.append(body)
        future = _asyncio.get_running_loop().create_future()
        self.waiting.setdefault(body.call, []).append((future, body))
        try:
            return await future
        except _asyncio.CancelledError:
            if body.end is BodyEnd.RUNNING:
                body.end, body.ended = BodyEnd.CANCELLED, self.step
            raise

    def find(self, text):
        if text not in self.findings:
            print("  >>> " + text)
            self.findings.append(text)

    def judge(self, body):
        """The provider's pairing rules (OpenAI's texts), then the core judge's
        ledger rules: a result no tool returned, arguments not as issued, an
        executed call the model is no longer told of."""
        messages = body["messages"]
        for i, m in enumerate(messages):
            if m.get("role") == "tool":
                j = i - 1
                while j >= 0 and messages[j].get("role") == "tool":
                    j -= 1
                prior = (messages[j].get("tool_calls") or []) if j >= 0 else []
                if m.get("tool_call_id") not in {c["id"] for c in prior}:
                    self.find(f"BROKEN REQUEST (HTTP 400): messages.{i}: {_TEXT_ORPHAN}")
            calls = m.get("tool_calls") or []
            if calls:
                answered = set()
                for n in messages[i + 1:]:
                    if n.get("role") != "tool":
                        break
                    answered.add(n.get("tool_call_id"))
                missing = [c["id"] for c in calls if c["id"] not in answered]
                if missing:
                    self.find(f"BROKEN REQUEST (HTTP 400): messages.{i}: "
                              + _TEXT_UNANSWERED.format(ids=", ".join(missing)))
        calls, results = calls_and_results(body)
        found = []
        for cid, text in results.items():
            found += _judge_result(cid, text, self.ledger, self.step)
        for cid, (_, arguments) in calls.items():
            issued = self.ledger.issued.get(cid)
            if issued is not None and _loads(arguments) != _loads(issued.call.arguments):
                self.find(f"LEDGER MISMATCH: the arguments of {cid} differ from those the "
                          "model issued")
        found += _silent_losses(calls, results, self.ledger, self.step, trims=self.trims)
        for incident in found:
            self.find(f"LEDGER MISMATCH: {incident.detail}")
        if self.trims:
            for unit in removed_by_trim(body, self.ledger):
                self.ledger.note_trim(self.step, unit)
        self.ledger.witness(calls, results)

    def witness_history(self, loop):
        """What the loop holds after a disruption, or on reopening from the store."""
        try:
            history = loop.history()
        except Exception:
            return
        self.ledger.witness(*calls_and_results({"messages": history}))

    def body(self, cid):
        return next(w for w in self.waiting.get(cid, []) if not w[0].done())


def short(request):
    out = []
    for m in request["messages"]:
        if m.get("tool_calls"):
            out.append("assistant(" + ",".join(c["id"] for c in m["tool_calls"]) + ")")
        elif m.get("role") == "tool":
            out.append(f"tool({m.get('tool_call_id')})")
        else:
            out.append(str(m.get("role")))
    return " ".join(out)


def load_target(spec):
    """``path/to/file.py:attr`` or ``package.module:attr``."""
    where, _, attr = spec.rpartition(":")
    if where.endswith(".py"):
        path = _Path(where).resolve()
        _sys.path.insert(0, str(path.parent))
        module_spec = _ilu.spec_from_file_location(path.stem, path)
        module = _ilu.module_from_spec(module_spec)
        _sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
    else:
        module = __import__(where, fromlist=[attr])
    return getattr(module, attr)


def run_schedule(adapter, target, steps):
    """Apply ``steps`` in order to a fresh loop of ``target``; the harness, findings in it."""
    h = ScriptHarness(_Path(_tempfile.mkdtemp(prefix="reproduce-")))
    h.trims = Capability.TRIM_HOOK in adapter.capabilities(target)
    ledger = h.ledger
    _asyncio.set_event_loop(h.clock)
    loop = adapter.open(target, h)
    turn = None

    def start(coro, what):
        async def run():
            try:
                await coro
                print(f"  ({what} returned)")
            except _asyncio.CancelledError:
                print(f"  ({what} was cancelled)")
            except Exception as exc:
                ledger.raised.append(h.step)
                print(f"  ({what} raised {type(exc).__name__}: {exc})")
        return h.clock.create_task(run())

    def end(step, kind, output=""):
        future, body = h.body(step["call"])
        body.end, body.ended, body.output = kind, h.step, output
        return future

    for n, step in enumerate(steps):
        kind = step["kind"]
        h.step = n
        disruptions = ledger.disruptions
        print(f"step {n}: {_json.dumps(step, sort_keys=True)}")
        if kind == "user":
            ledger.users.append((n, step["text"]))
            turn = start(loop.send(step["text"]), "send")
        elif kind == "reply":
            calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                          for c in step.get("calls", []))
            ledger.issue(calls, n)
            pending = next(f for f in h.replies if not f.done())
            pending.set_result(Reply(step.get("text", ""), calls))
        elif kind == "complete":
            future = end(step, BodyEnd.OK, step["output"])
            if sum(1 for b in ledger.bodies_of(step["call"]) if b.end is BodyEnd.OK) > 1:
                h.find(f"LEDGER MISMATCH: the tool body of {step['call']} ran twice")
            future.set_result(step["output"])
        elif kind == "fail":
            error = step.get("error", "tool failed")
            end(step, BodyEnd.FAILED, error).set_exception(ToolFailed(error))
        elif kind == "timeout":
            end(step, BodyEnd.TIMED_OUT).set_exception(
                TimeoutError(f"the tool of {step['call']} timed out"))
        elif kind == "advance":
            h.clock.advance(float(step["seconds"]))
        elif kind == "cancel":
            ledger.cancels.append(n)
            h.clock.create_task(loop.cancel(turn))
            h.clock.settle()
            if not turn.done():
                h.clock.advance(60.0)
            if not turn.done():
                h.find("HANG: the turn did not return within 60 s after the cancel")
        elif kind == "crash":
            ledger.crashes.append(n)
            for queue in h.waiting.values():
                for _, body in queue:
                    if body.end is BodyEnd.RUNNING:
                        body.end, body.ended = BodyEnd.DROPPED, n
            h.waiting, h.replies, h.approvals = {}, [], []
            loop.abandon()  # the dropped loop's tasks are never run again
            h.clock = VirtualLoop(h.clock.now)
            h.epoch += 1
            _asyncio.set_event_loop(h.clock)
            loop = adapter.open(target, h)
            print("  (the process died; a new one opens the agent on the same store)")
            continue
        elif kind in ("resume", "new_message"):
            h.witness_history(loop)  # what survived the crash
            if kind == "resume":
                turn = start(loop.resume(), "resume")
            else:
                ledger.users.append((n, step["text"]))
                turn = start(loop.send(step["text"]), "send")
        elif kind == "approve":
            h.approvals.remove(step["call"])
            if not step.get("approved", True):
                ledger.denied.add(step["call"])
            turn = start(loop.approve(step["call"], step.get("approved", True)), "approve")
        h.clock.settle()
        if ledger.disruptions != disruptions:
            h.witness_history(loop)  # what the loop still holds after a cancel or a raise
    return h


def _quiet_exit(code):
    """Exit without the debris of the dropped tasks (their ``finally`` clauses
    run at collection, on loops that are gone): it is not the schedule's."""
    import logging

    _sys.stdout.flush()
    logging.disable(logging.CRITICAL)
    _sys.unraisablehook = lambda _: None
    for clock in VirtualLoop.made:
        clock.set_exception_handler(lambda loop, context: None)
    _sys.exit(code)


if __name__ == "__main__":
    replayed = run_schedule(ADAPTER, load_target(TARGET), SCHEDULE["steps"])
    if replayed.findings:
        print(f"{len(replayed.findings)} finding(s); the first: {replayed.findings[0]}")
        _quiet_exit(1)
    print("no broken request and no ledger mismatch")
    _quiet_exit(0)
