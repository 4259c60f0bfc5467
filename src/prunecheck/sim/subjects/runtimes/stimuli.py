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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prunecheck.model import events as _events
from prunecheck.model.events import Event

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
        return (
            event.last if isinstance(event, _events.AssistantChunk | _events.ResultChunk) else True
        )

    @property
    def call(self) -> str:
        """The name 0.2.0 gave a result chunk's or a failure's ``id`` (the call)."""
        return self.id

    @property
    def path(self) -> str:
        """The name 0.2.0 gave a file change's ``id`` (the file)."""
        return self.id


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


# ---------------------------------------------------------------- The classes of 0.2.0
# 0.2.0 fed a runtime one object of eleven classes (System, User, AssistantText,
# ToolCalls, ResultChunk, ToolFailed, BudgetCheck, Invoke, Retry, NewSession,
# FileChanged); 0.3 feeds one Stimulus whose kind says which.  Each old name
# (deprecated, goes in 0.4.0; prunecheck._deprecated says so) is a class that
# the stimuli of its kind are instances of (isinstance(st, System | User) works)
# and that builds one from the 0.2 fields (ResultChunk("c1", "ok", last=False)),
# so a 0.2 runtime and its own tests run.


def _text(id: str, text: str, make: Callable[[int], _events.Event]) -> Stimulus:
    return Stimulus(make(count_tokens(text)), id, text)


def _batch(id: str, text: str, calls: tuple[Call, ...] = ()) -> Stimulus:
    specs = tuple(
        _events.CallSpec(c.tool, str(dict(c.arguments).get("path", "")), _events.Effect(c.effect))
        for c in calls
    )
    return Stimulus(_events.IssueBatch(specs, count_tokens(text)), id, text, tuple(calls))


_BUILD: dict[str, tuple[str, Callable[..., Stimulus]]] = {
    "System": ("system", lambda id, text: _text(id, text, _events.SystemPrompt)),
    "User": ("user", lambda id, text: _text(id, text, _events.UserMessage)),
    "AssistantText": (
        "assistant",
        lambda id, text, last=True: _text(id, text, lambda n: _events.AssistantChunk(n, last)),
    ),
    "ToolCalls": ("batch", _batch),
    "ResultChunk": (
        "result",
        lambda call, text, last=True: _text(
            call, text, lambda n: _events.ResultChunk(call, n, last)
        ),
    ),
    "ToolFailed": (
        "failure",
        lambda call, text: _text(
            call, text, lambda n: _events.ToolFailure(call, _events.FailureReason.ERROR, n)
        ),
    ),
    "BudgetCheck": ("check", lambda: Stimulus(_events.BudgetCheck())),
    "Invoke": ("invoke", lambda: Stimulus(_events.Invoke())),
    "Retry": ("retry", lambda: Stimulus(_events.Retry())),
    "NewSession": ("session", lambda: Stimulus(_events.NewSession())),
    "FileChanged": ("write", lambda path: Stimulus(_events.ExternalWrite(path), path)),
}
#: The 0.2.0 names, each with the kind of stimulus it stands for.
_OLD_KINDS: dict[str, str] = {name: kind for name, (kind, _) in _BUILD.items()}


class _Old(type):
    """The metaclass of a 0.2 name: instances are the stimuli of its kind."""

    _kind: str
    _build: Callable[..., Stimulus]

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Stimulus) and obj.kind == cls._kind

    def __call__(cls, *args: Any, **kwargs: Any) -> Stimulus:
        return cls._build(*args, **kwargs)


_CLASSES: dict[str, type] = {}


def _old_class(name: str) -> type:
    """The 0.2.0 class ``name`` (one of ``_OLD_KINDS``), made once."""
    found = _CLASSES.get(name)
    if found is None:
        kind, build = _BUILD[name]
        found = _Old(
            name,
            (),
            {
                "_kind": kind,
                "_build": staticmethod(build),
                "__doc__": f"{name} of release 0.2.0 (deprecated): a Stimulus of kind {kind!r}.",
                "__module__": "prunecheck.sim.subjects.runtimes.stimuli",
            },
        )
        _CLASSES[name] = found
    return found


def __getattr__(name: str) -> type:
    """The stimulus classes of 0.2.0 (``System``, ``ResultChunk`` …), with a
    warning: each is now a :class:`Stimulus` of one ``kind``
    (see "The classes of 0.2.0" above).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     from prunecheck.sim.subjects.runtimes.stimuli import ResultChunk
    >>> chunk = ResultChunk("c1", "four words of output", last=False)
    >>> isinstance(chunk, ResultChunk), chunk.kind, chunk.call, chunk.last
    (True, 'result', 'c1', False)
    """
    if name not in _OLD_KINDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from prunecheck._deprecated import STIMULUS_NAME

    warnings.warn(STIMULUS_NAME.format(name=name, kind=_OLD_KINDS[name]), stacklevel=2)
    return _old_class(name)
