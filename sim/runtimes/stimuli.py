"""What prunecheck feeds a runtime under test, and what it reads back.

This is the :class:`RuntimeUnderTest` protocol: a small interface a user's
agent runtime (or a thin test harness around it) implements so that
prunecheck's drivers — ``search``, ``explore`` and the simulator — drive the
real code instead of the model runtime, and judge what it would send.

A runtime is fed *stimuli* (one per driver event) with ``feed``; after each,
prunecheck reads ``request()`` — the message list, in OpenAI Chat
Completions form, that it would send to the model now — and
``executions()`` — every tool execution it has performed.  Optionally
``costs()`` reports its own counters (``deferral``, ``spill``,
``reinjection``), shown as costs; ``advance(at)`` is told the time of the
next stimulus (simulated seconds) for runtimes that read a clock; ``copy()``
returns an independent copy (the explorer branches runtimes; without it
they are rebuilt by replaying).

Conventions
-----------
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

__all__ = [
    "AssistantText",
    "BudgetCheck",
    "Call",
    "Execution",
    "FileChanged",
    "Invoke",
    "NewSession",
    "Rejected",
    "ResultChunk",
    "Retry",
    "RuntimeUnderTest",
    "Stimulus",
    "System",
    "ToolCalls",
    "ToolFailed",
    "User",
    "count_tokens",
]


def count_tokens(text: str) -> int:
    """Tokens of a stimulus text: its whitespace-separated words."""
    return len(text.split())


@dataclass(frozen=True, slots=True)
class System:
    """The system prompt (``id``: the harness's name for the message)."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class User:
    """A user message; may arrive while calls are in flight."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class AssistantText:
    """A chunk of streamed assistant text for message ``id``; the first chunk
    opens the message, ``last`` closes it."""

    id: str
    text: str
    last: bool = True


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: ``effect`` is ``"read"`` or ``"write"``."""

    id: str
    tool: str
    arguments: Mapping[str, str]
    effect: str = "read"


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """The model's assistant message ``id`` issuing a parallel batch of
    calls: execute every call now, then wait for their results."""

    id: str
    text: str
    calls: tuple[Call, ...]


@dataclass(frozen=True, slots=True)
class ResultChunk:
    """A chunk of the result of ``call``; the result is complete at ``last``."""

    call: str
    text: str
    last: bool = True


@dataclass(frozen=True, slots=True)
class ToolFailed:
    """The tool failed or timed out: ``text`` is the error result."""

    call: str
    text: str


@dataclass(frozen=True, slots=True)
class BudgetCheck:
    """An explicit budget check (your runtime also checks when it does)."""


@dataclass(frozen=True, slots=True)
class Invoke:
    """Invoke the model now: get ``request()`` ready to send."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """The provider rejected the last request: HTTP ``status``, its ``text``,
    the call ids it names."""

    status: int
    text: str
    calls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Retry:
    """React to the last rejection as your runtime does (e.g. re-run the batch)."""


@dataclass(frozen=True, slots=True)
class NewSession:
    """The agent starts a fresh session: drop the context (and what you
    spilled); a system prompt and a user message follow.  Tool executions
    and call ids carry over."""


@dataclass(frozen=True, slots=True)
class FileChanged:
    """A file changed outside the agent (an intervening step)."""

    path: str


Stimulus = (
    System
    | User
    | AssistantText
    | ToolCalls
    | ResultChunk
    | ToolFailed
    | BudgetCheck
    | Invoke
    | Rejected
    | Retry
    | FileChanged
    | NewSession
)


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

    def feed(self, stimulus: Stimulus) -> None:
        """Handle one stimulus, as your runtime does (append, stream, check,
        prune, execute, retry …)."""

    def request(self) -> Sequence[Mapping[str, Any]]:
        """The message list (OpenAI Chat Completions form) you would send now."""

    def executions(self) -> Sequence[Execution]:
        """Every tool execution so far, in order."""
