"""LangChain and LangGraph: a schedule prunecheck found, replayed with the framework alone.

Run it from the directory the target's path is relative to:

    python reproduce.py

It prints every step and request, and each broken request (the provider's 400)
or ledger mismatch it finds; exit status 1 if it finds one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from collections.abc import Mapping

TARGET = 'examples/loops/langgraph_trim.py:agent'
SCHEDULE = json.loads('{\n  "expect": [\n    "provider_rejection",\n    "unanswered_call"\n  ],\n  "format": "prunecheck-loop-schedule/1",\n  "framework": "langgraph",\n  "scenario": "trim",\n  "seed": 1,\n  "spec": "loop:examples/loops/langgraph_trim.py:agent",\n  "steps": [\n    {\n      "kind": "user",\n      "text": "user message 1"\n    },\n    {\n      "calls": [\n        {\n          "arguments": "{\\"query\\": \\"query-1\\"}",\n          "id": "call_1",\n          "name": "search"\n        }\n      ],\n      "kind": "reply",\n      "text": ""\n    },\n    {\n      "call": "call_1",\n      "error": "search failed for call_1",\n      "kind": "fail"\n    },\n    {\n      "kind": "user",\n      "text": "user message 4"\n    }\n  ],\n  "target": "examples/loops/langgraph_trim.py:agent"\n}\n')



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


# -------------------------------------------------------------- lc_doubles
"""LangChain doubles for the loop harness: a chat model that asks the
:class:`~prunecheck.sim.loops.contract.Harness` what to answer, fake tools
of the user's names and schemas, and an SQLite checkpointer whose async
methods run inline.

The chat model renders every request as the OpenAI Chat Completions body
``langchain-openai`` would send for the same LangChain messages (tool-call
arguments as ``json.dumps(args, ensure_ascii=False)``, as ``ChatOpenAI``
writes them), so the judge reads exactly what a provider would receive.

Why the checkpointer is :class:`InlineSqliteSaver`, not ``AsyncSqliteSaver``:
``AsyncSqliteSaver`` runs every statement on aiosqlite's worker thread and
hands the result back with ``call_soon_threadsafe``, so when a checkpoint
write finishes relative to the harness's steps would depend on the
operating system's thread scheduler, and the harness could not tell
"every task waits on me" from "a task waits on a thread".  ``SqliteSaver``
is the same storage (the same tables, the same serializer, one committed
transaction per write, the file is the durable record); its async methods
here call the synchronous ones on the event loop's thread, so a write is
durable exactly when LangGraph's ``await aput(...)`` returns.  Every other
part of the checkpointer is LangGraph's own.

Everything here imports LangChain: this module is imported only when the
LangGraph adapter is used.
"""


import contextlib
import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.sqlite import SqliteSaver


__all__ = [
    "HarnessChatModel",
    "InlineSqliteSaver",
    "fake_tool",
    "inline_langsmith",
    "render_message",
    "render_messages",
    "tool_spec",
]

#: The id and arguments of the tool call a fake tool's body is running for.
_CURRENT_CALL: ContextVar[tuple[str, str]] = ContextVar("prunecheck_call", default=("", "{}"))


def _arguments(args: object) -> str:
    return json.dumps(args, ensure_ascii=False)


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return str(content)


async def _inline_to_thread(
    _default: Any, ctx: Any, func: Callable[..., Any], /, *args: Any, **kwargs: Any
) -> Any:
    return ctx.run(func, *args, **kwargs)


def inline_langsmith() -> None:
    """Make LangSmith's ``traceable`` run its bookkeeping on the event loop's thread.

    ``create_agent`` wraps every ``wrap_model_call`` and ``wrap_tool_call``
    middleware hook in ``langsmith.traceable``, whose async wrapper runs its
    set-up and tear-down with ``run_in_executor`` even when tracing is off:
    a thread per hook call, finishing whenever the OS schedules it.
    ``langsmith.set_runtime_overrides(aio_to_thread=...)`` is LangSmith's own
    hook for deterministic runtimes (Temporal); the harness installs it once.
    """
    import langsmith

    langsmith.set_runtime_overrides(aio_to_thread=_inline_to_thread)


def render_message(message: BaseMessage) -> dict[str, object]:
    """One LangChain message as an OpenAI Chat Completions message.

    Parameters
    ----------
    message : BaseMessage
        A system, human, AI or tool message.

    Returns
    -------
    dict[str, object]
        ``{"role": ..., "content": ...}``, with ``tool_calls`` on an assistant
        message that issued calls and ``tool_call_id`` on a tool message.
    """
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": _content_text(message.content)}
    if isinstance(message, HumanMessage):
        return {"role": "user", "content": _content_text(message.content)}
    if isinstance(message, AIMessage):
        out: dict[str, object] = {"role": "assistant", "content": _content_text(message.content)}
        calls = [
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {"name": call["name"], "arguments": _arguments(call["args"])},
            }
            for call in message.tool_calls
        ]
        calls += [
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {"name": call.get("name") or "", "arguments": call.get("args") or ""},
            }
            for call in message.invalid_tool_calls
        ]
        if calls:
            out["tool_calls"] = calls
        return out
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": _content_text(message.content),
        }
    return {"role": message.type, "content": _content_text(message.content)}


def render_messages(messages: Sequence[BaseMessage]) -> list[dict[str, object]]:
    """A list of LangChain messages as OpenAI Chat Completions messages."""
    return [render_message(m) for m in messages]


def tool_spec(tool: BaseTool) -> ToolSpec:
    """The name, description and JSON schema of a LangChain tool, as the model sees it."""
    function = convert_to_openai_tool(tool)["function"]
    return ToolSpec(
        name=str(function["name"]),
        description=str(function.get("description", "")),
        parameters=dict(function.get("parameters", {})),
    )


class HarnessChatModel(BaseChatModel):
    """A chat model whose every answer comes from ``harness.model``.

    ``bind_tools`` keeps the OpenAI form of the tools (what
    ``ChatOpenAI.bind_tools`` sends); each call renders the messages and the
    tools as one Chat Completions body and turns the harness's
    :class:`~prunecheck.sim.loops.contract.Reply` into an ``AIMessage``.
    Only the async path exists: the harness owns every await point, and a
    synchronous call has none.
    """

    harness: Any = None
    model_name: str = "prunecheck-double"

    @property
    def _llm_type(self) -> str:
        return "prunecheck-harness"

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: object = None,
        **kwargs: Any,
    ) -> Any:
        formatted = [convert_to_openai_tool(t) for t in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        raise NotImplementedError(
            "the prunecheck model double answers only asynchronously: "
            "drive the agent with ainvoke/astream (the harness owns every await point)"
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        request: dict[str, object] = {"messages": render_messages(messages)}
        tools = kwargs.get("tools")
        if tools:
            request["tools"] = list(tools)
        harness: Harness = self.harness
        reply = await harness.model(request)
        message = AIMessage(
            content=reply.text,
            tool_calls=[
                {"name": c.name, "args": json.loads(c.arguments or "{}"), "id": c.id}
                for c in reply.calls
            ],
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class _FakeTool(StructuredTool):
    """A ``StructuredTool`` that knows the id of the call it runs for."""

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        if isinstance(input, Mapping) and input.get("type") == "tool_call":
            current = (str(input.get("id") or ""), _arguments(input.get("args", {})))
        else:
            current = ("", _arguments(input))
        token = _CURRENT_CALL.set(current)
        try:
            return await super().ainvoke(input, config, **kwargs)
        finally:
            with contextlib.suppress(ValueError):  # closed by a crashed loop's teardown
                _CURRENT_CALL.reset(token)


def fake_tool(tool: BaseTool, harness: Harness) -> BaseTool:
    """A tool of ``tool``'s name, description and argument schema whose body
    is ``harness.tool``.

    Parameters
    ----------
    tool : BaseTool
        The user's tool (its body is never run).
    harness : Harness
        Decides when and how every call of the fake returns.

    Returns
    -------
    BaseTool
        The fake; its error handling (``handle_tool_error``,
        ``handle_validation_error``) and ``return_direct`` are the user's.
    """
    name = tool.name
    schema = tool.args_schema if tool.args_schema is not None else tool.get_input_schema()

    async def body(**_kwargs: Any) -> str:
        call_id, arguments = _CURRENT_CALL.get()
        return await harness.tool(ToolCall(id=call_id, name=name, arguments=arguments))

    return _FakeTool(
        name=name,
        description=tool.description,
        args_schema=schema,
        coroutine=body,
        return_direct=tool.return_direct,
        handle_tool_error=tool.handle_tool_error,
        handle_validation_error=tool.handle_validation_error,
        response_format="content",
    )


class InlineSqliteSaver(SqliteSaver):
    """LangGraph's ``SqliteSaver`` with its async methods run inline on the
    event loop's thread (see the module docstring for why).

    Versions are deterministic (``SqliteSaver`` appends ``random.random()``
    to each channel version; here the suffix is 0), so the same schedule
    writes the same rows.
    """

    @classmethod
    def at(cls, path: Path) -> InlineSqliteSaver:
        """A saver on the SQLite file ``path`` (created if absent)."""
        conn = sqlite3.connect(str(path), check_same_thread=False)
        saver = cls(conn)
        saver.setup()
        return saver

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:032}.{0:016}"

    async def aget_tuple(self, config: Any) -> Any:
        return self.get_tuple(config)

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[Any]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return self.get_delta_channel_history(*args, **kwargs)

    def abandon(self) -> None:
        """Close the connection without committing (a crash): committed writes stay."""
        self.conn.close()


# --------------------------------------------------------------- langgraph
"""LangChain v1 ``create_agent`` on LangGraph, driven inside the loop harness.

The target is a factory the user already has, or writes in three lines: a
callable with a ``model`` parameter returning the compiled graph that
``langchain.agents.create_agent`` builds::

    def agent(model):
        return create_agent(model, tools=[search, send_email],
                            middleware=[SummarizationMiddleware(model=model, ...)],
                            checkpointer=SqliteSaver(...))

:meth:`LangGraphAdapter.open` calls it with :class:`~.lc_doubles.HarnessChatModel`
(so the agent's model and any middleware built on the same ``model``, a
summarizer, ask the harness), replaces each tool in the graph's ``ToolNode``
by a fake of the same name and argument schema whose body is
``harness.tool``, and keeps every middleware, the system prompt and the
repair of invalid tool calls as built.  The checkpointer keeps its kind:
none stays none, ``InMemorySaver`` stays in memory (a crash loses it), any
other (SQLite, Postgres …) becomes LangGraph's SQLite checkpointer on
``harness.store`` (:class:`~.lc_doubles.InlineSqliteSaver`, whose module
docstring says why its async methods run inline).

Scenario classes: a turn is ``ainvoke`` on one ``thread_id`` (without a
checkpointer, with the conversation the last turn returned, as a stateless
app passes it); cancel is
``task.cancel()`` on the turn (LangGraph has no other cancel API); a crash
drops the graph, its task and the connection, and :meth:`open` builds a new
graph on the same checkpoint file; resume is ``ainvoke(None, config)``; a
new message after a crash is ``ainvoke`` on the same ``thread_id``;
approvals answer ``HumanInTheLoopMiddleware``'s interrupt with
``Command(resume=...)``.  LangGraph has no tool timeout of its own.

Limits: a tool body is never run, so an ``interrupt()`` the user's own tool
raises, or a ``Command`` it returns, is not reproduced (the fake returns the
harness's text); ``HumanInTheLoopMiddleware`` is the interrupt driven here.
"""


import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


__all__ = ["LangGraphAdapter", "LangGraphLoop", "checkpoint_file"]

_THREAD = "prunecheck"
_HITL = "HumanInTheLoopMiddleware"
_HOOKS = ("before_model", "abefore_model", "wrap_model_call", "awrap_model_call")


def checkpoint_file(store: Path) -> Path:
    """Where the SQLite checkpointer writes in ``store``."""
    return store / "langgraph-checkpoints.sqlite"


@dataclass(frozen=True, slots=True)
class _Pending:
    """A call waiting for a human: its interrupt, its place in it, the interrupt's mode."""

    interrupt: str
    position: int
    per_call: bool


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a built graph is made of (read once per target)."""

    tools: tuple[Any, ...]
    middleware: tuple[Any, ...]
    checkpointer: str  # "none" | "memory" | "durable"


def _is_factory(target: object) -> bool:
    if not callable(target) or isinstance(target, type):
        return False
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
    return "model" in params


def _takes_checkpointer(target: Callable[..., Any]) -> bool:
    return "checkpointer" in inspect.signature(target).parameters


def _build(target: Callable[..., Any], model: Any, checkpointer: Any = None) -> Any:
    if _takes_checkpointer(target):
        return target(model=model, checkpointer=checkpointer)
    return target(model=model)


def _middleware_of(graph: Any) -> list[Any]:
    from langchain.agents.middleware import AgentMiddleware

    found: dict[int, Any] = {}

    def visit(obj: Any, depth: int) -> None:
        if depth > 8 or obj is None:
            return
        owner = getattr(obj, "__self__", None)
        if isinstance(owner, AgentMiddleware):
            found.setdefault(id(owner), owner)
            return
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                visit(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue

    for name, node in graph.nodes.items():
        bound = node.bound
        if name == "model":
            for cell in bound.afunc.__closure__ or ():
                try:
                    visit(cell.cell_contents, 0)
                except ValueError:
                    continue
        for attr in ("func", "afunc"):
            visit(getattr(bound, attr, None), 0)
    return sorted(found.values(), key=lambda m: str(m.name))


def _shape(target: Callable[..., Any]) -> _Shape:
    from langgraph.checkpoint.memory import InMemorySaver

    pass

    durable = _takes_checkpointer(target)
    graph = _build(target, HarnessChatModel(), InMemorySaver() if durable else None)
    node = graph.nodes.get("tools")
    tools = tuple(node.bound.tools_by_name.values()) if node is not None else ()
    saver = graph.checkpointer
    if durable or (saver not in (None, False) and not isinstance(saver, InMemorySaver)):
        kind = "durable"
    else:
        kind = "none" if saver in (None, False) else "memory"
    return _Shape(tools=tools, middleware=tuple(_middleware_of(graph)), checkpointer=kind)


def _overrides(middleware: Any, hook: str) -> bool:
    from langchain.agents.middleware import AgentMiddleware

    return getattr(type(middleware), hook, None) is not getattr(AgentMiddleware, hook)


class LangGraphAdapter:
    """The :class:`~prunecheck.sim.loops.contract.Adapter` of LangChain v1 agents."""

    framework = "langgraph"

    def __init__(self) -> None:
        self._shapes: dict[int, _Shape] = {}

    def _shape_of(self, target: object) -> _Shape:
        key = id(target)
        if key not in self._shapes:
            assert callable(target)
            self._shapes[key] = _shape(target)
        return self._shapes[key]

    def accepts(self, target: object) -> bool:
        """A callable with a ``model`` parameter returning a LangGraph ``CompiledStateGraph``."""
        if not _is_factory(target):
            return False
        try:
            from langgraph.graph.state import CompiledStateGraph

            pass

            assert callable(target)
            return isinstance(_build(target, HarnessChatModel()), CompiledStateGraph)
        except Exception:
            return False

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; crash scenarios with a durable checkpointer; interrupts
        with ``HumanInTheLoopMiddleware`` and a checkpointer; the trim hook when
        another middleware rewrites messages before the model."""
        shape = self._shape_of(target)
        caps = {Capability.CANCEL}
        if shape.checkpointer == "durable":
            caps |= {Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        names = {type(m).__name__ for m in shape.middleware}
        if _HITL in names and shape.checkpointer != "none":
            caps.add(Capability.INTERRUPT)
        if any(
            type(m).__name__ != _HITL and any(_overrides(m, h) for h in _HOOKS)
            for m in shape.middleware
        ):
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def tools(self, target: object) -> list[ToolSpec]:
        """The names and schemas of the tools in the agent's ``ToolNode``."""
        pass

        return [tool_spec(t) for t in self._shape_of(target).tools]

    def open(self, target: object, harness: Harness) -> Loop:
        """A new graph from the factory: the model double, fake tools, the
        checkpointer on ``harness.store``."""
        from langgraph.checkpoint.memory import InMemorySaver

        pass

        assert callable(target)
        inline_langsmith()
        model = HarnessChatModel(harness=harness)
        saver: Any = None
        if self._shape_of(target).checkpointer == "durable":
            saver = InlineSqliteSaver.at(checkpoint_file(harness.store))
        graph = _build(target, model, saver)
        node = graph.nodes.get("tools")
        if node is not None:
            by_name = node.bound.tools_by_name
            for name, tool in list(by_name.items()):
                by_name[name] = fake_tool(tool, harness)
        if saver is not None:
            graph.checkpointer = saver  # the user's own durable kind, pointed at the store
        elif isinstance(graph.checkpointer, InMemorySaver):
            graph.checkpointer = InMemorySaver()  # in memory: a crash loses it
        return LangGraphLoop(graph, harness, saver)

    def script(self, target_spec: str, schedule_json: str) -> str:
        """A standalone script replaying the schedule with LangChain and LangGraph alone."""
        import sys

        pass
        pass

        modules = [lc_doubles, sys.modules[__name__]]
        return script_text(modules, "LangChain and LangGraph", target_spec, schedule_json,
                           "LangGraphAdapter()")  # fmt: skip


class LangGraphLoop:
    """One live graph on one ``thread_id``."""

    def __init__(self, graph: Any, harness: Harness, saver: Any) -> None:
        self._graph = graph
        self._harness = harness
        self._saver = saver
        self._config: dict[str, Any] = {"configurable": {"thread_id": _THREAD}}
        self._messages: list[Any] = []
        self._awaiting: dict[str, _Pending] = {}
        self._decisions: dict[str, bool] = {}

    async def _run(self, payload: Any) -> None:
        result = await self._graph.ainvoke(payload, self._config)
        if isinstance(result, dict) and "messages" in result:
            self._messages = list(result["messages"])
        await self._collect_interrupts()

    async def _collect_interrupts(self) -> None:
        self._awaiting.clear()
        self._decisions.clear()
        if self._graph.checkpointer in (None, False):
            return
        state = await self._graph.aget_state(self._config)
        self._messages = list(state.values.get("messages", self._messages))
        last_calls = _last_tool_calls(self._messages)
        for intr in state.interrupts:
            value = intr.value
            if not isinstance(value, dict):
                continue
            if value.get("type") == "tool_approval":  # per_call mode: one call per interrupt
                self._awaiting[str(value["tool_call_id"])] = _Pending(intr.id, 0, True)
                continue
            free = list(last_calls)  # batched mode: action requests in the calls' order
            for pos, req in enumerate(value.get("action_requests") or []):
                match = next(
                    (
                        c
                        for c in free
                        if (c["name"], c["args"]) == (req.get("name"), req.get("args"))
                    ),
                    None,
                )
                if match is not None:
                    free.remove(match)
                    self._awaiting[str(match["id"])] = _Pending(intr.id, pos, False)
        for call_id in self._awaiting:
            self._harness.awaiting_approval(call_id)

    async def send(self, text: str) -> None:
        """One user turn: ``ainvoke({"messages": [user]}, config)``.

        Without a checkpointer the graph remembers nothing between turns, so
        the app passes the conversation so far, as LangChain's docs do: the
        messages the last ``ainvoke`` returned, then the new user message.  A
        turn that never returned (cancelled) leaves that conversation as it was.
        """
        from langchain_core.messages import HumanMessage

        user = HumanMessage(content=text)
        stateless = self._graph.checkpointer in (None, False)
        await self._run({"messages": [*self._messages, user] if stateless else [user]})

    async def cancel(self, turn: Any) -> None:
        """LangGraph's cancel: cancel the task running ``ainvoke``."""
        turn.cancel()

    async def resume(self) -> None:
        """After a crash: ``ainvoke(None, config)`` continues from the last checkpoint."""
        await self._run(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        """Record the decision; once every awaited call has one, resume with
        ``Command(resume={interrupt_id: answer})`` (a batched interrupt's answer
        lists its decisions in order; a per-call interrupt's is one decision)."""
        from langgraph.types import Command

        if call_id not in self._awaiting:
            raise KeyError(f"no approval is awaited for call {call_id!r}")
        self._decisions[call_id] = approved
        if set(self._decisions) != set(self._awaiting):
            return
        batched: dict[str, list[tuple[int, dict[str, str]]]] = {}
        answers: dict[str, Any] = {}
        for cid, pending in self._awaiting.items():
            decision = _decision(self._decisions[cid])
            if pending.per_call:
                answers[pending.interrupt] = decision
            else:
                batched.setdefault(pending.interrupt, []).append((pending.position, decision))
        for interrupt, items in batched.items():
            answers[interrupt] = {"decisions": [d for _, d in sorted(items)]}
        await self._run(Command(resume=answers))

    def history(self) -> list[dict[str, object]]:
        """The thread's messages as checkpointed (the last result's without a checkpointer)."""
        pass

        messages = self._messages
        if self._graph.checkpointer not in (None, False):
            state = self._graph.get_state(self._config)
            messages = list(state.values.get("messages", messages))
        return render_messages(messages)

    def abandon(self) -> None:
        """A crash: close the checkpoint connection, committing nothing more."""
        if self._saver is not None:
            self._saver.abandon()


def _decision(approved: bool) -> dict[str, str]:
    if approved:
        return {"type": "approve"}
    return {"type": "reject", "message": "The user rejected this tool call."}


def _last_tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    from langchain_core.messages import AIMessage

    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return [dict(c) for c in message.tool_calls]
    return []


# ------------------------------------------------------------- the adapter
ADAPTER = LangGraphAdapter()


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
