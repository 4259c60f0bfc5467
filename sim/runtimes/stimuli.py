"""What prunecheck feeds a runtime under test, and what it reads back.

This is the :class:`RuntimeUnderTest` protocol (public as
:mod:`prunecheck.runtime`): a small interface a user's agent runtime (or a
thin test harness around it) implements so that prunecheck's drivers —
``search``, ``explore`` and the simulator — drive the real code instead of
the model runtime, and judge what it would send.

There is one event vocabulary, the model's (:mod:`prunecheck.model.events`).
A :class:`Stimulus` is one of those events *rendered* for a runtime: the
event itself (its kind, sizes, ``last`` flags, failure reason, file path),
plus the harness's name for what it concerns, its text and, for a batch,
its calls with their ids.  The provider's answer to a request is the one
thing that is not an event (it is the harness's reply, not a driver's
choice): :class:`Rejected`.

A runtime is fed stimuli with ``feed``; after each, prunecheck reads
``request()`` — the message list, in OpenAI Chat Completions form, that it
would send to the model now — and ``executions()`` — every tool execution
it has performed.  Optionally ``costs()`` reports its own counters
(``deferral``, ``spill``, ``reinjection``), shown as costs; ``advance(at)``
is told the time of the next stimulus (simulated seconds) for runtimes that
read a clock; ``copy()`` returns an independent copy (the explorer branches
runtimes; without it they are rebuilt by replaying); ``state_key()`` names
what of its state the request does not show.

Conventions
-----------
* Branch on ``stimulus.kind`` (the event's ``kind``: ``system``, ``user``,
  ``assistant``, ``batch``, ``result``, ``failure``, ``check``,
  ``invoke``, ``retry``, ``write``, ``session``) or on the type of
  ``stimulus.event``.
* Sizes are words: a stimulus of ``N`` tokens has ``N`` whitespace-separated
  words; count tokens with :func:`count_tokens`.
* Texts carry markers (``⟦m3⟧``, ``⟦c2.0⟧`` …) that name the message or the
  result chunk they came from.  Keep texts as given: append chunks in order
  (a result's text is its chunks joined by a space); a placeholder or a
  summary you write yourself simply has no marker.
* Call ids are the harness's (``c1``, ``c2`` …): use them as ``tool_call_id``
  and as tool call ids in ``request()``.  Re-running a call (a naive retry)
  is an execution that names the same call id again, or a new id with
  ``retry_of`` set.
* A runtime is built by calling its factory with ``budget=`` and
  ``hard_ceiling=`` (ints): its own budget check decides when to prune.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prunecheck.model.events import AssistantChunk, Event, ResultChunk

__all__ = [
    "Call",
    "Execution",
    "Rejected",
    "RuntimeUnderTest",
    "Stimulus",
    "count_tokens",
]


def count_tokens(text: str) -> int:
    """Tokens of a stimulus text: its whitespace-separated words."""
    return len(text.split())


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a batch, with the harness's id: ``effect`` is
    ``"read"`` or ``"write"``."""

    id: str
    tool: str
    arguments: Mapping[str, str]
    effect: str = "read"


@dataclass(frozen=True, slots=True)
class Stimulus:
    """One model event, rendered for a runtime under test.

    Attributes
    ----------
    event : Event
        The model's event (:mod:`prunecheck.model.events`).
    id : str
        What it concerns, in the harness's names: the message it opens or
        continues (system, user, assistant text, a batch's assistant
        message), the call (a result chunk, a failure), the file (a write);
        empty for the others.
    text : str
        Its text, ``tokens`` words with the harness's markers (a failure's
        text is the error result); empty for events without a message.
    calls : tuple of Call
        A batch's calls, to execute now; empty for every other event.
    """

    event: Event
    id: str = ""
    text: str = ""
    calls: tuple[Call, ...] = ()

    @property
    def kind(self) -> str:
        """The event's kind (``user``, ``result`` …)."""
        return self.event.kind

    @property
    def last(self) -> bool:
        """Whether a chunk closes its stream (True for events that are not chunks)."""
        event = self.event
        return event.last if isinstance(event, AssistantChunk | ResultChunk) else True


@dataclass(frozen=True, slots=True)
class Rejected:
    """The provider rejected the last request: HTTP ``status``, its ``text``,
    the call ids it names.  Not an event: the harness's answer to an
    invocation."""

    status: int
    text: str
    calls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Execution:
    """One tool execution the runtime performed."""

    call: str
    tool: str
    path: str
    effect: str = "read"
    retry_of: str | None = None
    arguments: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class RuntimeUnderTest(Protocol):
    """What prunecheck needs of a runtime to test its real code."""

    def feed(self, stimulus: Stimulus | Rejected) -> None:
        """Handle one stimulus, as your runtime does (append, stream, check,
        prune, execute, retry …), or the provider's rejection."""

    def request(self) -> Sequence[Mapping[str, Any]]:
        """The message list (OpenAI Chat Completions form) you would send now."""

    def executions(self) -> Sequence[Execution]:
        """Every tool execution so far, in order."""


@runtime_checkable
class Advancing(Protocol):
    """A runtime that reads a clock: told the time of the next stimulus."""

    def advance(self, at: float) -> None: ...


@runtime_checkable
class Costed(Protocol):
    """A runtime that counts its own costs (``deferral``, ``spill``, ``reinjection``)."""

    def costs(self) -> Mapping[str, int]: ...


@runtime_checkable
class Copyable(Protocol):
    """A runtime that copies itself (else the explorer rebuilds it by replaying)."""

    def copy(self) -> RuntimeUnderTest: ...


@runtime_checkable
class Keyed(Protocol):
    """A runtime whose state holds more than its request shows (e.g. what it spilled)."""

    def state_key(self) -> tuple[object, ...]: ...
