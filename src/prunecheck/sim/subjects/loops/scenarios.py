"""Scenario classes and the choice of the next step of a schedule.

A *scenario class* bounds what the environment may do to a loop: every class
has users, model replies (text, or parallel calls of any width) and tool
completions in any order; each adds its own steps (a cancel, a crash and a
resume …) and applies only where the configured agent has the capability.
:func:`enabled_kinds` is the loop's enabled actions (what the live run can
take now, within the class) and :func:`make_step` turns a draw (an integer
chooser: Hypothesis's during a search, a seeded ``random.Random``'s in a
walk) into a step of a chosen kind, materialised with every concrete value
(call ids, arguments, outputs), so a schedule replays without its chooser:
the loop's action vocabulary, which :class:`.system.LoopSystem` offers the
drivers.

A :class:`LoopShape` (search's shape options on the command line: the
widest batch, batches and user messages per schedule, tool output sizes,
the clock's jumps) bounds every class alike; the default shape draws as
it always did, so the same seed gives the same schedules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from .contract import Capability, ToolCall, ToolSpec
from .reach import CHARS_PER_TOKEN as _CHARS_PER_TOKEN
from .scheduler import LoopRun, Phase
from .steps import (
    Advance,
    Approve,
    Cancel,
    Complete,
    Crash,
    Fail,
    ModelError,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    Timeout,
    User,
)

__all__ = [
    "ADVANCES",
    "SCENARIOS",
    "Bounds",
    "Draw",
    "LoopShape",
    "Scenario",
    "ScenarioClass",
    "enabled_kinds",
    "make_step",
]

#: ``draw(n)``: an integer in ``range(n)`` (n >= 1).
Draw = Callable[[int], int]  # the System protocol's (prunecheck.model.system.Draw)


class ScenarioClass(StrEnum):
    """The scenario classes of the table (issue 21)."""

    PARALLEL = "parallel"
    TOOL_TIMEOUT = "tool_timeout"
    CANCEL = "cancel"
    CRASH_RESUME = "crash_resume"
    CRASH_NEW_MESSAGE = "crash_new_message"
    INTERRUPT = "interrupt"
    TRIM = "trim"


#: Seconds the virtual clock may jump in one ``advance`` step (a tool timeout's
#: class): a second, half a minute, five minutes.
ADVANCES: tuple[float, ...] = (1.0, 30.0, 300.0)

#: Characters per token of a sized tool output (``LoopShape.sizes``).
CHARS_PER_TOKEN = _CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class LoopShape:
    """Bounds every scenario class shares (``search``'s shape options).

    Attributes
    ----------
    width : int
        Calls one reply may issue at most (the widest parallel batch; each
        run draws its own width up to it).
    batches : int or None
        Replies with calls one schedule may hold at most (None: no bound).
    users : int or None
        User messages (a new message after a crash included) one schedule
        may hold at most (None: no bound).
    sizes : tuple[int, ...]
        Token sizes a tool output may have (about :data:`CHARS_PER_TOKEN`
        characters a token); empty: a short text, or a long one in the
        trimming class.
    advances : tuple[float, ...]
        Seconds the virtual clock may jump in one step; empty: it never
        jumps (no ``advance`` step).
    """

    width: int = 3
    batches: int | None = None
    users: int | None = None
    sizes: tuple[int, ...] = ()
    advances: tuple[float, ...] = ADVANCES


@dataclass(frozen=True, slots=True)
class Scenario:
    """What a scenario class lets the environment do.

    Attributes
    ----------
    name : ScenarioClass
        The class.
    title : str
        How the table names it.
    extra : frozenset[str]
        Step kinds beyond ``user``, ``reply``, ``complete`` and ``fail``.
    needs : Capability or None
        The capability the agent must have, or None.
    key : str
        The step kind the class is about (a safe verdict without one is vacuous).
    large_outputs : bool
        Whether tool outputs may be large (pressure for a trimming hook).
    shape : LoopShape
        The bounds every class shares (the default: as the table draws).
    """

    name: ScenarioClass
    title: str
    extra: frozenset[str]
    needs: Capability | None
    key: str
    large_outputs: bool = False
    shape: LoopShape = field(default=LoopShape())

    def applies(self, capabilities: frozenset[Capability]) -> bool:
        return self.needs is None or self.needs in capabilities


SCENARIOS: Mapping[ScenarioClass, Scenario] = {
    s.name: s
    for s in (
        Scenario(ScenarioClass.PARALLEL, "plain parallel batches", frozenset(), None, "reply"),
        Scenario(ScenarioClass.TOOL_TIMEOUT, "tool timeout", frozenset({"timeout", "advance"}),
                 None, "timeout"),
        Scenario(ScenarioClass.CANCEL, "cancellation", frozenset({"cancel"}), Capability.CANCEL,
                 "cancel"),
        Scenario(ScenarioClass.CRASH_RESUME, "crash then resume", frozenset({"crash", "resume"}),
                 Capability.CRASH_RESUME, "resume"),
        Scenario(ScenarioClass.CRASH_NEW_MESSAGE, "crash then a new message",
                 frozenset({"crash", "new_message"}), Capability.CRASH_NEW_MESSAGE, "new_message"),
        Scenario(ScenarioClass.INTERRUPT, "interrupt/approval then resume", frozenset({"approve"}),
                 Capability.INTERRUPT, "approve"),
        Scenario(ScenarioClass.TRIM, "trimming at the framework's hook", frozenset(),
                 Capability.TRIM_HOOK, "reply", large_outputs=True),
    )
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bounds:
    """One schedule's own bounds (swarm testing: each run draws its own).

    Attributes
    ----------
    steps : int
        Steps at most.
    width : int
        Calls per reply at most.
    kinds : frozenset[str]
        The step kinds this run may use.
    """

    steps: int
    width: int
    kinds: frozenset[str]

    @staticmethod
    def draw(scenario: Scenario, draw: Draw, *, max_steps: int = 16) -> Bounds:
        steps = min(max_steps, 3 + draw(max(1, max_steps - 2)))
        width = 1 + draw(scenario.shape.width)
        kinds = {"user", "reply", "complete"}
        for kind in sorted({"fail", *scenario.extra}):
            if kind in scenario.extra or draw(2) == 1:  # the class's own steps always
                kinds.add(kind)
        return Bounds(steps, width, frozenset(kinds))


def _arguments(spec: ToolSpec, n: int) -> str:
    """Valid arguments for ``spec``'s schema: each required property a plain value."""
    props = spec.parameters.get("properties")
    props = props if isinstance(props, Mapping) else {}
    required = spec.parameters.get("required")
    names = list(required) if isinstance(required, list) else list(props)
    args: dict[str, object] = {}
    for name in names:
        schema = props.get(name, {})
        kind = schema.get("type") if isinstance(schema, Mapping) else None
        if kind in ("integer", "number"):
            args[str(name)] = n
        elif kind == "boolean":
            args[str(name)] = True
        elif kind == "array":
            args[str(name)] = []
        elif kind == "object":
            args[str(name)] = {}
        else:
            args[str(name)] = f"{name}-{n}"
    return json.dumps(args, sort_keys=True)


def _output(call: ToolCall, large: bool, size: int) -> str:
    head = f"{call.name} result for {call.id}"
    return head + (" " + "lorem ipsum " * (40 if large and size else 1)).rstrip()


def _sized_output(call: ToolCall, tokens: int) -> str:
    """A tool output of ``tokens`` tokens of :data:`CHARS_PER_TOKEN` characters
    (no shorter than the line naming the call)."""
    head = f"{call.name} result for {call.id}"
    length = tokens * CHARS_PER_TOKEN
    if length <= len(head):
        return head
    text = (head + " " + "lorem ipsum " * (length // 12 + 1))[:length]
    return text[:-1] + "." if text.endswith(" ") else text


def _count(run: LoopRun, *types: type) -> int:
    return sum(1 for s in run.steps if isinstance(s, types))


def _count_batches(run: LoopRun) -> int:
    return sum(1 for s in run.steps if isinstance(s, ReplyStep) and s.calls)


def enabled_kinds(run: LoopRun, scenario: Scenario, kinds: frozenset[str]) -> list[str]:
    """The kinds of step enabled now in ``run`` that ``kinds`` allows, a kind
    repeated to weigh more (the loop's enabled actions).

    A reply while a model request waits; a completion, failure or timeout
    per call outstanding; a user message between turns; an approval while an
    interrupt waits; a cancel while a turn runs; a crash once anything ran;
    the clock while a timer is set; after a crash, a resume or a new message.
    """
    options: list[str] = []
    shape = scenario.shape
    users_left = shape.users is None or _count(run, User, NewMessage) < shape.users
    if run.phase is Phase.UP:
        if run.pending_requests():
            options += ["reply", "reply"]
            # a summarizer's call may fail, as a tool may: in a class whose clock moves (its
            # framework's retry waits out a backoff; elsewhere the turn would stall on it),
            # or in any class where no retry waits (``untimed_faults``: the user's own node)
            timed = "advance" in kinds and bool(shape.advances)
            if run.side_request() and (timed or run.untimed_faults):
                options.append("model_error")
        waiting = run.waiting_calls()
        if waiting:  # completing is the common case: weighted by the calls waiting
            options += ["complete"] * (2 * len(waiting))
            options += [k for k in ("fail", "timeout") if k in kinds]
        if not run.turn_running and not run.approvals and users_left:
            options.append("user")
        if run.approvals and not run.turn_running and "approve" in kinds:
            options.append("approve")
        # a cancel or a crash is most telling mid-batch: some bodies done, some waiting
        mid_batch = bool(waiting) and any(
            b.end.executed and b.epoch == run.epoch for b in run.ledger.bodies
        )
        weight = 4 if mid_batch else 1
        if run.turn_running and "cancel" in kinds:
            options += ["cancel"] * weight
        if "crash" in kinds and run.crashable:
            options += ["crash"] * weight
        if "advance" in kinds and run.has_timers() and shape.advances:
            options.append("advance")
    else:
        options += [k for k in ("resume", "new_message") if k in kinds]
        if not users_left and "new_message" in options:
            options.remove("new_message")
    return options


def make_step(
    kind: str,
    run: LoopRun,
    scenario: Scenario,
    bounds: Bounds,
    tools: list[ToolSpec],
    draw: Draw,
    counter: list[int],
    on_call: str | None = None,
) -> Step:
    """A step of an enabled ``kind``, every value drawn (call ids, arguments,
    outputs), so that a schedule replays without its chooser.

    ``counter`` holds the numbers used so far (call ids, user messages) and
    is advanced.  ``on_call`` names the waiting call a completion, failure or
    timeout concerns (None: drawn among the waiting calls).
    """
    shape = scenario.shape
    counter[0] += 1
    n = counter[0]
    if kind == "user":
        return User(f"user message {n}")
    if kind == "new_message":
        return NewMessage(f"user message {n} after the crash")
    if kind == "reply":
        width = (draw(bounds.width + 1) if draw(3) else 0) if tools else 0
        if shape.batches is not None and _count_batches(run) >= shape.batches:
            width = 0
        if not run.reply_takes_calls():  # a summarizer's prompt offers no tools
            width = 0
        if width == 0:
            return ReplyStep(f"answer {n}")
        calls = []
        for _ in range(width):
            counter[1] += 1
            spec = tools[draw(len(tools))]
            calls.append(ToolCall(f"call_{counter[1]}", spec.name, _arguments(spec, counter[1])))
        return ReplyStep("", tuple(calls))
    if kind in ("complete", "fail", "timeout"):
        waiting = run.waiting_calls()
        cid = on_call if on_call is not None else waiting[draw(len(waiting))]
        issued = run.ledger.issued.get(cid)
        call = issued.call if issued is not None else ToolCall(cid, "tool", "{}")
        if kind == "complete" and shape.sizes:
            return Complete(cid, _sized_output(call, shape.sizes[draw(len(shape.sizes))]))
        if kind == "complete":
            return Complete(cid, _output(call, scenario.large_outputs, draw(2)))
        if kind == "fail":
            return Fail(cid, f"{call.name} failed for {cid}")
        return Timeout(cid)
    if kind == "model_error":
        return ModelError("503 Service Unavailable: the provider is overloaded (injected)")
    if kind == "approve":
        return Approve(run.approvals[draw(len(run.approvals))], approved=draw(2) == 0)
    if kind == "advance":
        return Advance(shape.advances[draw(len(shape.advances))])
    plain: dict[str, Step] = {"cancel": Cancel(), "crash": Crash(), "resume": Resume()}
    return plain[kind]
