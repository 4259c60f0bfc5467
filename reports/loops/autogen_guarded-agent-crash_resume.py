"""AutoGen AgentChat: a schedule prunecheck found, replayed with the framework alone.

Run it from the directory the target's path is relative to:

    python reproduce.py

It prints every step and request, and each broken request (the provider's 400)
or ledger mismatch it finds; exit status 1 if it finds one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from collections.abc import Mapping

TARGET = 'examples/loops/autogen_guarded.py:agent'
SCHEDULE = json.loads('{\n  "expect": [\n    "silent_loss"\n  ],\n  "format": "prunecheck-loop-schedule/1",\n  "framework": "autogen",\n  "scenario": "crash_resume",\n  "seed": 1,\n  "spec": "loop:examples/loops/autogen_guarded.py:agent",\n  "steps": [\n    {\n      "kind": "user",\n      "text": "user message 1"\n    },\n    {\n      "calls": [\n        {\n          "arguments": "{\\"query\\": \\"query-1\\"}",\n          "id": "call_1",\n          "name": "search"\n        },\n        {\n          "arguments": "{\\"query\\": \\"query-2\\"}",\n          "id": "call_2",\n          "name": "search"\n        }\n      ],\n      "kind": "reply",\n      "text": ""\n    },\n    {\n      "call": "call_1",\n      "kind": "complete",\n      "output": "search result for call_1 lorem ipsum"\n    },\n    {\n      "kind": "crash"\n    },\n    {\n      "kind": "resume"\n    }\n  ],\n  "target": "examples/loops/autogen_guarded.py:agent"\n}\n')



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


# -------------------------------------------------------------- ag_doubles
"""AutoGen doubles for the loop harness: a ``ChatCompletionClient`` that asks
the :class:`~prunecheck.sim.loops.contract.Harness` what to answer, and fake
tools of the user's names and argument schemas.

The client renders each ``create`` call as the OpenAI Chat Completions body
``OpenAIChatCompletionClient`` would send for the same ``LLMMessage`` list:
an ``AssistantMessage`` of ``FunctionCall``\\ s becomes one assistant message
with ``tool_calls`` (arguments as the model wrote them), a
``FunctionExecutionResultMessage`` one ``tool`` message per result.  Like
that client it links the request's future to the ``CancellationToken``, so
``token.cancel()`` interrupts a pending model call.  ``count_tokens`` is
deterministic (four characters of rendered JSON per token), for
``TokenLimitedChatCompletionContext`` built on the same client.

A fake tool is a ``BaseTool`` with the user's tool's ``args_type``,
``return_type``, name and description; its body is ``harness.tool`` with the
call id AutoGen passes to ``run_json``.  AutoGen's workbench links it to the
cancellation token, as it does the user's tool.

Everything here imports AutoGen: imported only when the AutoGen adapter is used.
"""


import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelInfo,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from autogen_core.tools import BaseTool, Tool, ToolSchema
from pydantic import BaseModel


__all__ = ["HarnessClient", "fake_tool", "render_messages", "tool_spec"]

_CURRENT_CALL: ContextVar[tuple[str, str]] = ContextVar("prunecheck_ag_call", default=("", "{}"))
_INFO: ModelInfo = {
    "vision": False,
    "function_calling": True,
    "json_output": True,
    "family": "unknown",
    "structured_output": True,
    "multiple_system_messages": True,
}


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part for part in content if isinstance(part, str))
    return str(content)


def render_messages(messages: Sequence[LLMMessage]) -> list[dict[str, object]]:
    """AutoGen ``LLMMessage``\\ s as OpenAI Chat Completions messages."""
    out: list[dict[str, object]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            out.append({"role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": _content_text(message.content)})
        elif isinstance(message, AssistantMessage):
            if isinstance(message.content, list):
                calls = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in message.content
                ]
                out.append({"role": "assistant", "content": message.thought, "tool_calls": calls})
            else:
                out.append({"role": "assistant", "content": message.content})
        elif isinstance(message, FunctionExecutionResultMessage):
            out.extend(
                {"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                for r in message.content
            )
    return out


def _tool_schema(tool: Tool | ToolSchema) -> dict[str, object]:
    schema: Mapping[str, Any] = tool.schema if isinstance(tool, Tool) else tool
    function: dict[str, object] = {"name": schema["name"]}
    if "description" in schema:
        function["description"] = schema["description"]
    function["parameters"] = dict(schema.get("parameters", {}))
    return {"type": "function", "function": function}


def tool_spec(tool: Tool) -> ToolSpec:
    """The name, description and JSON schema of an AutoGen tool."""
    schema = tool.schema
    return ToolSpec(
        name=schema["name"],
        description=schema.get("description", ""),
        parameters=dict(schema.get("parameters", {})),
    )


class HarnessClient(ChatCompletionClient):
    """A ``ChatCompletionClient`` whose every answer comes from ``harness.model``.

    Parameters
    ----------
    harness : Harness or None
        None builds a client for reading the agent's configuration only
        (calling it then is an error).
    """

    def __init__(self, harness: Harness | None = None) -> None:
        self._harness = harness
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    async def _ask(
        self,
        messages: Sequence[LLMMessage],
        tools: Sequence[Tool | ToolSchema],
        cancellation_token: CancellationToken | None,
    ) -> tuple[Reply, CreateResult]:
        if self._harness is None:
            raise RuntimeError("this HarnessClient only reads the agent's configuration")
        request: dict[str, object] = {"messages": render_messages(messages)}
        if tools:
            request["tools"] = [_tool_schema(t) for t in tools]
        future = asyncio.ensure_future(self._harness.model(request))
        if cancellation_token is not None:
            cancellation_token.link_future(future)
        reply = await future
        if reply.calls:
            calls = [FunctionCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.calls]
            result = CreateResult(
                finish_reason="function_calls",
                content=calls,
                usage=self._usage,
                cached=False,
                thought=reply.text or None,
            )
        else:
            result = CreateResult(
                finish_reason="stop", content=reply.text, usage=self._usage, cached=False
            )
        return reply, result

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | str = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        return (await self._ask(messages, tools, cancellation_token))[1]

    async def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | str = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """The reply's text in ``reply.chunks`` pieces, then the whole result
        (as ``model_client_stream=True`` agents consume it)."""
        reply, result = await self._ask(messages, tools, cancellation_token)
        text = reply.text if not reply.calls else ""
        pieces = max(1, reply.chunks)
        size = -(-len(text) // pieces) if text else 0
        for start in range(0, len(text), size or 1):
            yield text[start : start + size]
        yield result

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(
        self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []
    ) -> int:
        body = json.dumps(render_messages(messages)) + json.dumps([_tool_schema(t) for t in tools])
        return len(body) // 4

    def remaining_tokens(
        self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []
    ) -> int:
        return 128_000 - self.count_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> Any:  # deprecated in AutoGen, still abstract
        return {"vision": False, "function_calling": True, "json_output": True}

    @property
    def model_info(self) -> ModelInfo:
        return _INFO


class _FakeTool(BaseTool[BaseModel, BaseModel]):
    def __init__(self, tool: BaseTool[Any, Any], harness: Harness) -> None:
        super().__init__(
            args_type=tool.args_type(),
            return_type=tool.return_type(),
            name=tool.name,
            description=tool.description,
            strict=bool(tool.schema.get("strict", False)),
        )
        self._harness = harness

    async def run_json(
        self,
        args: Mapping[str, Any],
        cancellation_token: CancellationToken,
        call_id: str | None = None,
    ) -> Any:
        token = _CURRENT_CALL.set((call_id or "", json.dumps(dict(args), ensure_ascii=False)))
        try:
            return await super().run_json(args, cancellation_token, call_id=call_id)
        finally:
            with contextlib.suppress(ValueError):  # closed by a crashed loop's teardown
                _CURRENT_CALL.reset(token)

    async def run(self, args: BaseModel, cancellation_token: CancellationToken) -> Any:
        call_id, arguments = _CURRENT_CALL.get()
        return await self._harness.tool(ToolCall(id=call_id, name=self.name, arguments=arguments))

    def return_value_as_string(self, value: Any) -> str:
        return value if isinstance(value, str) else super().return_value_as_string(value)


def fake_tool(tool: BaseTool[Any, Any], harness: Harness) -> BaseTool[Any, Any]:
    """A tool of ``tool``'s name, description and argument schema whose body is ``harness.tool``."""
    return _FakeTool(tool, harness)


# ----------------------------------------------------------------- autogen
"""AutoGen AgentChat's ``AssistantAgent``, driven inside the loop harness.

The target is a factory taking the model client (``agent(model_client) ->
AssistantAgent``), or an ``AssistantAgent`` itself.  :meth:`AutoGenAdapter.open`
builds the agent with :class:`~.ag_doubles.HarnessClient` (so a
``TokenLimitedChatCompletionContext`` on the same client counts with it too),
replaces every tool by a fake of the same name and argument schema whose
body is ``harness.tool``, and keeps the agent's model context (its trimming:
``BufferedChatCompletionContext``, ``TokenLimitedChatCompletionContext``,
``HeadAndTailChatCompletionContext``, the guard's
``GuardedChatCompletionContext`` …), system message, ``max_tool_iterations``,
``reflect_on_tool_use`` and tool-call summary as configured.  A model
reply with several calls is a parallel batch: AutoGen runs the calls with
``asyncio.gather`` and adds one ``FunctionExecutionResultMessage`` when all
are done.

Persistence is what an AutoGen app writes itself: after every turn that
returns, ``await agent.save_state()`` is written to
``harness.store/autogen-state.json`` (written whole, then renamed); a new loop
(after a crash) starts with ``await agent.load_state(...)`` of that file
before its first step.  A turn that is cancelled, raises or crashes saves
nothing, as in an app that saves after ``run`` returns.

Scenario classes: a turn is ``agent.run(task=text, cancellation_token=t)``;
cancel is ``t.cancel()`` (AutoGen's own API: it cancels the linked model
call and the workbench's tool futures); resume after a crash is
``agent.run()`` without a task on the loaded state (AutoGen's way to
continue); a new message is ``run(task=text)`` on the loaded state.
``AssistantAgent`` has no tool-approval interrupt and no tool timeout.
"""


import inspect
import json
import os
from pathlib import Path
from typing import Any


__all__ = ["AutoGenAdapter", "AutoGenLoop", "state_file"]

_UNTRIMMED = "UnboundedChatCompletionContext"


def state_file(store: Path) -> Path:
    """Where the loop writes the agent's ``save_state()`` in ``store``."""
    return store / "autogen-state.json"


def _is_factory(target: object) -> bool:
    if not callable(target) or isinstance(target, type):
        return False
    try:
        return "model_client" in inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False


def _fresh_context(context: Any, client: Any) -> Any:
    from autogen_core.model_context import (
        BufferedChatCompletionContext,
        ChatCompletionContext,
        HeadAndTailChatCompletionContext,
        TokenLimitedChatCompletionContext,
        UnboundedChatCompletionContext,
    )

    if type(context) is TokenLimitedChatCompletionContext:
        return TokenLimitedChatCompletionContext(
            model_client=client,
            token_limit=context._token_limit,
            tool_schema=context._tool_schema,
            initial_messages=context._initial_messages,
        )
    kinds = (
        UnboundedChatCompletionContext,
        BufferedChatCompletionContext,
        HeadAndTailChatCompletionContext,
    )
    if type(context) in kinds:  # exactly: a subclass's own behaviour would be lost
        return ChatCompletionContext.load_component(context.dump_component())
    pass

    raise PolicyError(
        "autogen agent",
        f"its model context {type(context).__name__} cannot be rebuilt empty for each run.",
        "point prunecheck at a factory, def agent(model_client): return AssistantAgent(...).",
    )


def _rebuild(agent: Any, client: Any) -> Any:
    """A new ``AssistantAgent`` of ``agent``'s configuration on ``client``."""
    from autogen_agentchat.agents import AssistantAgent

    system = agent._system_messages[0].content if agent._system_messages else None
    return AssistantAgent(
        agent.name,
        model_client=client,
        tools=list(agent._tools),
        model_context=_fresh_context(agent._model_context, client),
        description=agent.description,
        system_message=system,
        model_client_stream=agent._model_client_stream,
        reflect_on_tool_use=agent._reflect_on_tool_use,
        max_tool_iterations=agent._max_tool_iterations,
        tool_call_summary_format=agent._tool_call_summary_format,
        tool_call_summary_formatter=agent._tool_call_summary_formatter,
    )


def _build(target: object, client: Any) -> Any:
    if _is_factory(target):
        assert callable(target)
        return target(model_client=client)
    return _rebuild(target, client)


class AutoGenAdapter:
    """The :class:`~prunecheck.sim.loops.contract.Adapter` of AutoGen AgentChat."""

    framework = "autogen"

    def _probe(self, target: object) -> Any:
        pass

        return _build(target, HarnessClient())

    def accepts(self, target: object) -> bool:
        """An ``AssistantAgent``, or a callable with a ``model_client`` parameter returning one."""
        try:
            from autogen_agentchat.agents import AssistantAgent
        except ImportError:
            return False
        if isinstance(target, AssistantAgent):
            return True
        if not _is_factory(target):
            return False
        try:
            return isinstance(self._probe(target), AssistantAgent)
        except Exception:
            return False

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel and both crash scenarios always (``save_state`` after each
        turn); the trim hook when the model context trims."""
        caps = {Capability.CANCEL, Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        if type(self._probe(target)._model_context).__name__ != _UNTRIMMED:
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def tools(self, target: object) -> list[ToolSpec]:
        """The names and schemas of the agent's tools."""
        pass

        return [tool_spec(t) for t in self._probe(target)._tools]

    def open(self, target: object, harness: Harness) -> Loop:
        """A new agent on the double client with fake tools; state loaded
        from ``harness.store`` before its first step."""
        from autogen_core.tools import StaticStreamWorkbench

        pass

        agent = _build(target, HarnessClient(harness))
        if any(type(w) is not StaticStreamWorkbench for w in agent._workbench):
            pass

            raise PolicyError(
                f"autogen agent {agent.name}",
                "it uses a workbench (MCP …) whose tools prunecheck cannot replace.",
                "give the agent its tools with tools=[...] for the check.",
            )
        fakes = [fake_tool(t, harness) for t in agent._tools]
        agent._tools = fakes
        agent._workbench = [StaticStreamWorkbench(fakes)]
        return AutoGenLoop(agent, harness)

    def script(self, target_spec: str, schedule_json: str) -> str:
        """A standalone script replaying the schedule with AutoGen alone."""
        import sys

        pass
        pass

        modules = [ag_doubles, sys.modules[__name__]]
        return script_text(modules, "AutoGen AgentChat", target_spec, schedule_json,
                           "AutoGenAdapter()")  # fmt: skip


class AutoGenLoop:
    """One live ``AssistantAgent``; its state file in ``harness.store``."""

    def __init__(self, agent: Any, harness: Harness) -> None:
        self._agent = agent
        self._file = state_file(harness.store)
        self._loaded = False
        self._token: Any = None

    async def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            if self._file.exists():
                await self._agent.load_state(json.loads(self._file.read_text()))

    async def _save(self) -> None:
        state = await self._agent.save_state()
        tmp = self._file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, sort_keys=True))
        os.replace(tmp, self._file)

    async def _run(self, task: str | None) -> None:
        from autogen_core import CancellationToken

        await self._load()
        self._token = CancellationToken()
        if task is None:
            await self._agent.run(cancellation_token=self._token)
        else:
            await self._agent.run(task=task, cancellation_token=self._token)
        await self._save()

    async def send(self, text: str) -> None:
        """One user turn: ``agent.run(task=text)``, then ``save_state`` to the store."""
        await self._run(text)

    async def cancel(self, turn: Any) -> None:
        """AutoGen's cancel: ``CancellationToken.cancel()`` of the running turn."""
        if self._token is not None:
            self._token.cancel()

    async def resume(self) -> None:
        """After a crash: ``agent.run()`` without a task on the saved state."""
        await self._run(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        """``AssistantAgent`` has no approval interrupt (no INTERRUPT capability)."""
        raise NotImplementedError("AutoGen's AssistantAgent has no tool-approval interrupt")

    def history(self) -> list[dict[str, object]]:
        """Everything the model context holds (before its trimming view); before
        the first step of a new process, what the saved state holds."""
        pass

        if not self._loaded and self._file.exists():
            from autogen_core.models import LLMMessage
            from pydantic import TypeAdapter

            state = json.loads(self._file.read_text())
            saved = (state.get("llm_context") or {}).get("messages") or []
            return render_messages([TypeAdapter(LLMMessage).validate_python(m) for m in saved])
        return render_messages(list(self._agent._model_context._messages))

    def abandon(self) -> None:
        """A crash: nothing to release (the state file is written whole or not at all)."""
        self._token = None


# ------------------------------------------------------------- the adapter
ADAPTER = AutoGenAdapter()


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
