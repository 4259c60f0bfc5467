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

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from .contract import ToolCall

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
    rulings: list[tuple[int, str]] = field(default_factory=list)
    _ruled: list[tuple[str, str]] = field(default_factory=list, repr=False)

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

    def witness(
        self, calls: Collection[str], results: Collection[str], *, sent: bool = True
    ) -> None:
        """The framework was seen holding every unit whose calls and results
        are all in ``calls`` and ``results`` (a request, or its history).
        ``sent``: they were in what the model was sent, so a unit a trim had
        removed is back (not so for what the loop holds before the user's
        trimmer edits it: the trim still removes it)."""
        for cid, issued in self.issued.items():
            if all(c in calls and c in results for c in issued.batch):
                self.held[cid] = self.disruptions
                if sent:
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

    def rule(self, step: int, call: str, told: str) -> None:
        """The judge applied a stated rule to ``call`` and found no violation
        (an honest placeholder, a whole call a trim removed): ``told`` says
        which, once per call and rule, for the narrative."""
        if all(not (c == call and t == told) for c, t in self._ruled):
            self._ruled.append((call, told))
            self.rulings.append((step, told))

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
