"""The environment's steps: the vocabulary of a loop schedule.

A *schedule* is the list of steps the harness applies to a live agent loop,
one at a time, each after the loop has gone quiescent (every task waits on
the harness, or the turn is over).  Steps carry everything concrete (the
reply's calls, a tool's output), so a schedule replays without the search
that chose it — by prunecheck, or by an adapter's standalone script.

==============  ==========================================  ================================
step            what the harness does                       enabled when
==============  ==========================================  ================================
``user``        starts a turn: ``loop.send(text)``          no turn runs, the loop is up
``reply``       answers the oldest pending model request    a model request is pending
``complete``    a started tool body returns ``output``      that body waits
``fail``        a started tool body raises ``ToolFailed``   that body waits
``timeout``     a started tool body raises ``TimeoutError`` that body waits
``advance``     the virtual clock moves ``seconds`` on      always
``cancel``      ``loop.cancel(turn)``                       a turn runs (CANCEL)
``crash``       the process dies: tasks and memory dropped  the loop is up
``resume``      a new loop on the store; ``loop.resume()``  after a crash (CRASH_RESUME)
``new_message`` a new loop on the store; ``send(text)``     after a crash (CRASH_NEW_MESSAGE)
``approve``     ``loop.approve(call, approved)``            an approval is awaited (INTERRUPT)
``model_error`` the user's own model request fails          a summarizer's request is pending
==============  ==========================================  ================================

``model_error`` is a fault like a tool's failure: the oldest pending model
request, when it is one the user's own code made (a summarizer's: it offers
the model no tools although the agent has some), raises
:class:`~.contract.ModelFailed` with ``error`` in the framework, as a provider
error would.

The JSON form (:func:`schedule_to_json`) is what bundles hold and what an
adapter's ``script()`` reads::

    {"format": "prunecheck-loop-schedule/1", "target": "...", "framework": "...",
     "seed": 1, "steps": [{"kind": "user", "text": "hi"},
                          {"kind": "reply", "text": "", "calls": [
                              {"id": "call_1", "name": "read", "arguments": "{}"}]},
                          {"kind": "complete", "call": "call_1", "output": "..."}, ...]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from .contract import ToolCall

__all__ = [
    "SCHEDULE_FORMAT",
    "Advance",
    "Approve",
    "Cancel",
    "Complete",
    "Crash",
    "Fail",
    "ModelError",
    "NewMessage",
    "ReplyStep",
    "Resume",
    "ScheduleError",
    "Step",
    "Timeout",
    "User",
    "schedule_from_json",
    "schedule_to_json",
    "step_from_json",
    "step_to_json",
]

#: The ``format`` field of a schedule's JSON.
SCHEDULE_FORMAT = "prunecheck-loop-schedule/1"


class ScheduleError(ValueError):
    """A schedule's JSON is malformed: names the step, the rule and a hint."""


@dataclass(frozen=True, slots=True)
class User:
    """A user message starting a turn."""

    kind: ClassVar[str] = "user"
    text: str


@dataclass(frozen=True, slots=True)
class ReplyStep:
    """The model's answer to the oldest pending request: text, and calls (a parallel batch)."""

    kind: ClassVar[str] = "reply"
    text: str = ""
    calls: tuple[ToolCall, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Complete:
    """The body of ``call`` returns ``output``."""

    kind: ClassVar[str] = "complete"
    call: str
    output: str


@dataclass(frozen=True, slots=True)
class Fail:
    """The body of ``call`` raises ``ToolFailed(error)``."""

    kind: ClassVar[str] = "fail"
    call: str
    error: str = "tool failed"


@dataclass(frozen=True, slots=True)
class Timeout:
    """The body of ``call`` raises ``TimeoutError`` (the tool itself timed out)."""

    kind: ClassVar[str] = "timeout"
    call: str


@dataclass(frozen=True, slots=True)
class Advance:
    """The virtual clock moves on; the framework's own timers due meanwhile fire in order."""

    kind: ClassVar[str] = "advance"
    seconds: float


@dataclass(frozen=True, slots=True)
class Cancel:
    """The running turn is cancelled with the framework's own API."""

    kind: ClassVar[str] = "cancel"


@dataclass(frozen=True, slots=True)
class Crash:
    """The process dies mid-run: the turn's task and every in-memory object are dropped."""

    kind: ClassVar[str] = "crash"


@dataclass(frozen=True, slots=True)
class Resume:
    """After a crash: a new loop on the same store continues the run (its resume API)."""

    kind: ClassVar[str] = "resume"


@dataclass(frozen=True, slots=True)
class NewMessage:
    """After a crash: a new loop on the same store gets a new user message."""

    kind: ClassVar[str] = "new_message"
    text: str


@dataclass(frozen=True, slots=True)
class Approve:
    """A human answers the pending approval of ``call``."""

    kind: ClassVar[str] = "approve"
    call: str
    approved: bool = True


@dataclass(frozen=True, slots=True)
class ModelError:
    """The oldest pending model request, one the user's own code made (a
    summarizer's), fails: the provider answers ``error``."""

    kind: ClassVar[str] = "model_error"
    error: str = "503 Service Unavailable"


Step = (
    User | ReplyStep | Complete | Fail | Timeout | Advance | Cancel | Crash | Resume | NewMessage
    | Approve | ModelError
)  # fmt: skip

_KINDS: dict[str, type[Step]] = {
    cls.kind: cls
    for cls in (
        User,
        ReplyStep,
        Complete,
        Fail,
        Timeout,
        Advance,
        Cancel,
        Crash,
        Resume,
        NewMessage,
        Approve,
        ModelError,
    )
}
_FIELDS: dict[str, tuple[tuple[str, type], ...]] = {
    "user": (("text", str),),
    "reply": (("text", str), ("calls", list)),
    "complete": (("call", str), ("output", str)),
    "fail": (("call", str), ("error", str)),
    "timeout": (("call", str),),
    "advance": (("seconds", float),),
    "cancel": (),
    "crash": (),
    "resume": (),
    "new_message": (("text", str),),
    "approve": (("call", str), ("approved", bool)),
    "model_error": (("error", str),),
}


def step_to_json(step: Step) -> dict[str, object]:
    """The JSON form of one step.

    >>> step_to_json(Complete("call_1", "ok"))
    {'kind': 'complete', 'call': 'call_1', 'output': 'ok'}
    """
    out: dict[str, object] = {"kind": step.kind}
    for name, _ in _FIELDS[step.kind]:
        value = getattr(step, name)
        if name == "calls":
            value = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in value]
        out[name] = value
    return out


def step_from_json(data: object, where: str = "step") -> Step:
    """Parse one step; raise :class:`ScheduleError` naming ``where`` if malformed.

    >>> step_from_json({"kind": "advance", "seconds": 5})
    Advance(seconds=5.0)
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        raise ScheduleError(f"{where}: a step must be a JSON object with a string 'kind'.")
    kind = data["kind"]
    cls = _KINDS.get(kind)
    if cls is None:
        raise ScheduleError(
            f"{where}: unknown step kind {kind!r}; use one of: {', '.join(sorted(_KINDS))}."
        )
    allowed = {"kind"} | {name for name, _ in _FIELDS[kind]}
    if not allowed.issuperset(data):
        raise ScheduleError(
            f"{where}: step {kind!r} has unknown field(s) {sorted(set(data) - allowed)}."
        )
    kwargs: dict[str, object] = {}
    for name, typ in _FIELDS[kind]:
        if name not in data:
            continue
        value = data[name]
        if typ is float and isinstance(value, int | float) and not isinstance(value, bool):
            value = float(value)
        elif name == "calls":
            value = _calls_from_json(value, f"{where}.calls")
        elif not isinstance(value, typ):
            raise ScheduleError(f"{where}: field {name!r} must be a {typ.__name__}, got {value!r}.")
        kwargs[name] = value
    try:
        return cls(**kwargs)  # type: ignore[arg-type]
    except TypeError:
        raise ScheduleError(
            f"{where}: step {kind!r} needs the field(s) "
            f"{[n for n, _ in _FIELDS[kind] if n not in data]}."
        ) from None


def _calls_from_json(value: object, where: str) -> tuple[ToolCall, ...]:
    if not isinstance(value, list):
        raise ScheduleError(f"{where}: 'calls' must be a list of calls.")
    calls = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not all(
            isinstance(item.get(k), str) for k in ("id", "name", "arguments")
        ):
            raise ScheduleError(
                f"{where}[{i}]: a call is an object with string 'id', 'name' and 'arguments'."
            )
        calls.append(ToolCall(str(item["id"]), str(item["name"]), str(item["arguments"])))
    return tuple(calls)


def schedule_to_json(
    steps: Sequence[Step],
    *,
    target: str = "",
    framework: str = "",
    seed: int = 0,
    extra: Mapping[str, object] | None = None,
) -> str:
    """A schedule's JSON text (sorted keys, two-space indent: byte-stable)."""
    doc: dict[str, object] = {
        "format": SCHEDULE_FORMAT,
        "target": target,
        "framework": framework,
        "seed": seed,
        "steps": [step_to_json(s) for s in steps],
    }
    if extra:
        doc.update(extra)
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def schedule_from_json(text: str, where: str = "schedule") -> list[Step]:
    """The steps of a schedule's JSON text.

    Raises
    ------
    ScheduleError
        If the text is not a schedule (naming the bad step).
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScheduleError(f"{where}: not JSON ({exc}).") from None
    if not isinstance(doc, Mapping) or doc.get("format") != SCHEDULE_FORMAT:
        raise ScheduleError(
            f"{where}: not a loop schedule (its 'format' must be {SCHEDULE_FORMAT!r})."
        )
    steps = doc.get("steps")
    if not isinstance(steps, list):
        raise ScheduleError(f"{where}: 'steps' must be a list.")
    return [step_from_json(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)]
