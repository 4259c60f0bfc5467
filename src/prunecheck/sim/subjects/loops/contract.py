"""The contract between the loop harness and a framework adapter.

prunecheck drives a framework's own agent loop (pydantic-ai's ``Agent``,
LangChain's ``create_agent`` on LangGraph, the OpenAI Agents SDK's
``Runner``, AutoGen's ``AssistantAgent`` …) and owns everything the loop
waits on.  An *adapter* (one per framework, :mod:`prunecheck.sim.subjects.loops.frameworks`)
replaces the user's model by a double and the user's tools by fakes that
call back into the :class:`Harness`; the harness decides when and how each
call returns.  An adapter never sleeps, never reads the wall clock and never
spawns work the harness cannot see.

The names here are the contract: the core may add to them, never rename.
Nothing here imports a framework.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = [
    "Adapter",
    "Capability",
    "Harness",
    "Loop",
    "ModelFailed",
    "Reply",
    "ToolCall",
    "ToolFailed",
    "ToolSpec",
]


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


class ModelFailed(Exception):
    """The harness scheduled this model request to fail (a request the user's own
    code made, a summarizer's: the provider answered an error); the message is
    the error text.  Raised out of :meth:`Harness.model` only for an adapter
    whose ``model_faults`` is true (its reproductions replay the fault)."""


@runtime_checkable
class Harness(Protocol):
    """What prunecheck gives an adapter: one per schedule run.

    It outlives a crash: after a crash the adapter's :meth:`Adapter.open` is
    called again with the same harness (the same :attr:`store`).

    Optional (read with ``getattr``, not part of the protocol):
    ``repaired(layer, before, after)`` tells the harness that the framework's
    repair layer rewrote the history ``before`` into ``after`` (both rendered
    as request messages) on its way to the next request; the judge then says
    what was repaired, whether honestly, and which providers would have
    rejected ``before`` (:mod:`.repair`; :meth:`.scheduler.LoopRun.repaired`).
    """

    store: Path
    """A directory for durable persistence (SQLite files, saved state)."""

    async def model(self, request: Mapping[str, object], *, aside: bool | None = None) -> Reply:
        """The model double.

        Parameters
        ----------
        request : Mapping[str, object]
            The OpenAI Chat Completions body the framework would send,
            rendered by the adapter from the framework's own message objects:
            ``{"messages": [...], "tools": [...]}`` with roles ``system``,
            ``user``, ``assistant`` (with ``tool_calls``: ``id``,
            ``type: "function"``, ``function: {name, arguments}``) and
            ``tool`` (with ``tool_call_id``).
        aside : bool or None
            Whether the request is one the user's own code made (a summarizer's),
            not the agent's turn, as the adapter knows it: true, a side request
            (not judged as the agent's context; a ``model_error`` step may fail
            it); false, the agent's own even without tools (AutoGen's reflection
            on tool use); None, inferred: a request offering no tools is a side
            request (for an adapter whose ``model_faults`` is true).

        Returns
        -------
        Reply
            The scheduled reply.

        Raises
        ------
        asyncio.CancelledError
            If the run is cancelled meanwhile.
        """
        ...

    async def tool(self, call: ToolCall) -> str:
        """The body of every fake tool.

        Records the start in the ledger, waits for the harness's decision,
        records the end and the side effect.

        Returns
        -------
        str
            The tool's output text.

        Raises
        ------
        ToolFailed
            If the harness scheduled a failure (the message is the error).
        TimeoutError
            If the harness scheduled a timeout of the tool itself.
        asyncio.CancelledError
            If the framework cancelled the body (its own timeout, a cancel).
        """
        ...

    def now(self) -> float:
        """Virtual time in seconds (for frameworks that read a clock)."""
        ...

    def awaiting_approval(self, call_id: str) -> None:
        """Tell the harness that the run paused for a human's approval of
        ``call_id`` (INTERRUPT): the ``approve`` step becomes enabled."""
        ...

    def holds(self, messages: Sequence[Mapping[str, object]]) -> None:
        """Tell the harness what the loop holds before the user's code edits
        it (the input a model-input filter is given, rendered as request
        messages): a unit whose calls and results are all there is whole and
        closed in the loop, so a trim that drops it from a request removes a
        unit, it loses nothing.  An adapter that cannot see it calls nothing."""
        ...


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


@runtime_checkable
class Loop(Protocol):
    """One live instance of the user's agent inside the harness."""

    async def send(self, text: str) -> None:
        """Run one user turn through the framework's own loop until it
        returns (or raises: the core records the exception as the turn's
        outcome)."""
        ...

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        """Cancel the running turn with the framework's own API
        (``CancellationToken``, ``task.cancel()``,
        ``RunResultStreaming.cancel()`` …)."""
        ...

    async def resume(self) -> None:
        """After a crash: continue the interrupted run from persistence with
        the framework's own resume API (CRASH_RESUME)."""
        ...

    async def approve(self, call_id: str, approved: bool) -> None:
        """Answer a pending human-in-the-loop interrupt and resume (INTERRUPT)."""
        ...

    def history(self) -> list[dict[str, object]]:
        """What the framework holds now, rendered as OpenAI chat messages
        (for the narrative and the silent-loss judge)."""
        ...

    def abandon(self) -> None:
        """Release the operating system's resources (threads, open files,
        SQLite connections) without flushing or committing anything: the
        process crashed.  Called once by the harness at a crash, outside the
        event loop; the loop object is never used again."""
        ...


@runtime_checkable
class Adapter(Protocol):
    """One framework's way into the harness."""

    framework: str
    """``"pydantic-ai"``, ``"openai-agents"``, ``"langgraph"``, ``"autogen"``."""

    def accepts(self, target: object) -> bool:
        """Whether ``target`` is an agent of this framework (or a factory of one)."""
        ...

    def capabilities(self, target: object) -> frozenset[Capability]:
        """The scenario classes the configured agent supports."""
        ...

    def tools(self, target: object) -> list[ToolSpec]:
        """The user's tools' names and schemas."""
        ...

    def open(self, target: object, harness: Harness) -> Loop:
        """A fresh loop of the user's agent.

        The model is replaced by a double calling ``harness.model``, every
        tool by a fake of the same name and schema calling ``harness.tool``;
        the user's middleware, history processors, trimming, sessions,
        checkpointers and repair layers are kept as configured, persistence
        pointed at ``harness.store``.  Called again after a crash: a new
        :class:`Loop` on the same store (all in-memory state dropped).
        """
        ...

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """The text of a standalone Python script that replays a schedule
        (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`) with the
        framework alone (no prunecheck import), printing the broken request
        or the ledger mismatch: for bundles.  ``folder`` is where the script
        will be written: it imports the user's module by its path relative to
        that folder, so it runs from any working directory (``None``: the
        working directory)."""
        ...
