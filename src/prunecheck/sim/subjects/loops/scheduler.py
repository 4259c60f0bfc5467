"""The scheduler: one run of a schedule against a live agent loop.

:class:`LoopRun` is the :class:`~prunecheck.sim.subjects.loops.contract.Harness` an
adapter's loop calls back into, and the driver that applies a schedule's
steps to it (:meth:`LoopRun.apply`).  The framework's loop runs on a
:class:`~prunecheck.sim.subjects.loops.clock.VirtualLoop`; after each step the
harness runs it until quiescent, so every model reply, every tool's end and
every tick of the clock happens only when a step says so.  The same schedule
gives the same requests, the same ledger and the same incidents, byte for
byte.

A crash drops the turn's task, the loop object and the event loop itself
(nothing of the process survives but :attr:`LoopRun.store`); ``resume`` and
``new_message`` then call ``adapter.open`` again on the same store.  A
cancel is followed by a hang check: if the turn is still running when the
loop is quiescent, the clock moves :data:`HANG_DEADLINE` virtual seconds on,
and a turn still running then is a ``hang``.

The user's code runs in the cage (:func:`.confine.user_code`): each run
(one schedule) has :data:`.confine.SCHEDULE_TIMEOUT` real seconds for its
steps, and code
that exits, raises ``KeyboardInterrupt`` or blocks past them ends the check
with its error (:class:`.confine.Abort`), as does an ``ImportError`` a turn
raises (an adapter or a framework module that moved: never a schedule's
doing, never "vacuous").
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections import deque
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.model.incidents import Incident, IncidentKind

from . import confine
from .clock import LoopStuck, VirtualLoop, foreign_threads
from .contract import Adapter, Capability, Loop, ModelFailed, Reply, ToolCall, ToolFailed
from .judge import calls_and_results, hang, judge_request, refused_turn, removed_by_trim
from .ledger import Body, BodyEnd, Ledger, Received
from .leftovers import forget
from .reach import Watch
from .repair import judge_repair
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

__all__ = ["HANG_DEADLINE", "LoopError", "LoopRun", "Phase", "StepRefused", "debris_unreported"]

#: Virtual seconds a cancelled turn has to return before it is a hang.
HANG_DEADLINE = 60.0


class LoopError(PolicyError):
    """The agent loop (or its adapter) failed in a way no schedule explains:
    it spins, a thread of it stays busy, or the adapter cannot open it (the
    command line's exit status 2, one paragraph)."""


class StepRefused(ValueError):
    """A step is not enabled in the run's current state (a schedule that does not fit)."""


class Phase(Enum):
    """Whether the process of the agent is alive."""

    UP = "up"
    CRASHED = "crashed"


@dataclass(slots=True)
class _Waiting:
    body: Body
    future: asyncio.Future[str]


#: A run that sets the heap aside first collects it whole (:func:`_set_heap_aside`) once
#: the heap it sets aside has grown by this fraction since the last whole collection.
REGROWTH = 0.25

#: The objects set aside right after the last whole collection (0: none yet).
_collected_heap = 0


def _set_heap_aside() -> bool:
    """Freeze what the process holds before a run (:func:`gc.freeze`); True if this call did.

    :func:`_drop` collects after every run, and a full collection walks the
    whole heap: with a framework imported (LangChain, pydantic, the OpenAI
    SDK…) that is about half a million objects, ~0.2–0.5 s a run, most of a
    check's time.  Set aside, the objects from before the run are not
    walked; the run's own debris, all allocated after, still is.  Whatever
    was set aside is put back (:func:`gc.unfreeze`) when the run closes.
    If something froze the heap already (an enclosing run, or the user's
    program), it is left as it is.

    What a run leaves in reference cycles that its caller still held when it
    closed (the run itself, its ledger, its session: a search drops them just
    after) becomes garbage outside any run and is set aside by the next run
    before a collection sees it: Python's own collector, which runs its whole
    collection only when the heap it walks grew by a quarter, walks nothing
    set aside either.  So, as Python does, once the heap set aside has grown by
    :data:`REGROWTH` since the last whole collection, it is put back and
    collected whole first (quietly: :func:`_drop`).  Before, a search kept
    every run's cycles: 400 runs of ADK's example left 473,966 objects that
    one whole collection freed (RSS 292 MB, against 214 MB collecting whole
    every 50 runs); its 2,000-run search peaked at 754 MB, LlamaIndex's at
    976 MB (tests/test_loops_leftovers.py has the figures after).

    The heap is measured in the allocator's blocks (:func:`sys.getallocatedblocks`,
    a walk of its pools), not by :func:`gc.get_freeze_count`, which walks
    every frozen object: with four frameworks imported (a quarter of a million
    objects) that was 31 ms a run, four times a fake agent's run itself; in the
    fast suite's processes, heavier still, one test took 75 s against 2 s alone.
    """
    global _collected_heap
    if gc.get_freeze_count():  # walks what is frozen: nothing, unless someone else froze it
        return False
    gc.freeze()
    heap = sys.getallocatedblocks()
    if not _collected_heap:
        _collected_heap = heap  # the first run: what the process holds now is the base
    elif heap > _collected_heap * (1 + REGROWTH):
        gc.unfreeze()
        with _quietly():
            gc.collect()
        gc.freeze()
        _collected_heap = sys.getallocatedblocks()
    return True


def _drop_detach_failures(record: logging.LogRecord) -> bool:
    """A logging filter: OpenTelemetry's "Failed to detach context" of a dropped
    run's span does not pass (:func:`debris_unreported`); every other record does."""
    return record.getMessage() != "Failed to detach context"


@contextlib.contextmanager
def debris_unreported() -> Iterator[None]:
    """For a whole search: what a dropped run's objects raise when Python's own
    collector takes them between two runs is not reported either.

    Each run's debris is collected quietly when it closes (:func:`_drop`) or
    with the heap set aside (:func:`_set_heap_aside`), but what its caller
    still held at close becomes garbage just after, when Python's collector
    may take it first: a LlamaIndex workflow's coroutine then printed
    "Exception ignored in …" with a traceback (its context variable reset in
    another context) once in a 2,000-run search.  Nor is a coroutine such a
    collection leaves never awaited (LangGraph's ``await run_manager.on_chain_error(e)``
    in the ``except`` of a node's coroutine closed mid-await): Python's "coroutine
    … was never awaited" warning, printed under the verdict when the collector
    ran just before :func:`_quietly` could set it aside.  Nor is OpenTelemetry's
    "Failed to detach context" (logged with a traceback) when such a collection
    closes a dropped turn's span in another context: AutoGen's and Strands'
    runs that a search abandoned mid-draw (Hypothesis's buffer ran out) printed
    it under the verdict.
    """
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    spans = logging.getLogger("opentelemetry.context")
    spans.addFilter(_drop_detach_failures)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            yield
    finally:
        spans.removeFilter(_drop_detach_failures)
        sys.unraisablehook = hook


@contextlib.contextmanager
def _quietly() -> Iterator[None]:
    """What the collector runs of dropped runs' debris (their ``finally``
    clauses, "never awaited" warnings, log records) is not reported."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    logging.disable(logging.CRITICAL)  # e.g. OpenTelemetry's "Failed to detach context" in AutoGen
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "coroutine ... never awaited"
            yield
    finally:
        logging.disable(logging.NOTSET)
        sys.unraisablehook = hook


def _drop(clocks: list[VirtualLoop], *, forget_them: bool = True) -> None:
    """Discard event loops and collect what they held, quietly.

    The tasks of a crashed (or finished) run are never resumed; when the
    garbage collector closes their coroutines, a framework's ``finally``
    clause may try to schedule work on a loop that is gone.  What it raises
    then is the run's debris, not the user's: it goes unreported.  (The
    collection walks only what the run allocated: :func:`_set_heap_aside`.)
    """
    with _quietly():
        for clock in clocks:
            clock.discard()
            if forget_them:
                forget(clock)
        clocks.clear()
        gc.collect()


def _fresh_store() -> Path:
    """A new, empty store directory: in memory-backed ``/dev/shm`` where there is
    one (a simulated crash needs no disk, and a run writes its store often)."""
    shm = Path("/dev/shm")
    where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="prunecheck-loop-", dir=where))


class LoopRun:
    """One run: the harness of an adapter's loop and the driver of a schedule.

    Parameters
    ----------
    adapter : Adapter
        The framework's adapter.
    target : object
        The user's agent (or its factory), as the adapter accepts it.
    store : Path or None
        The directory for the framework's durable persistence; None: a fresh
        temporary one, removed by :meth:`close`.
    set_heap_aside : bool
        Freeze the process's heap until :meth:`close` (:func:`_set_heap_aside`),
        so that closing collects only this run's objects.  Only for a run that
        is sure to be closed (``with LoopRun(...)``): one left open would keep
        the heap frozen.
    """

    def __init__(
        self,
        adapter: Adapter,
        target: object,
        *,
        store: Path | None = None,
        set_heap_aside: bool = True,
    ) -> None:
        # first: the run's own objects stay collectable
        self._set_aside = set_heap_aside and _set_heap_aside()
        try:
            self._set_up(adapter, target, store)
        except BaseException:
            self._put_heap_back()
            raise

    def _set_up(self, adapter: Adapter, target: object, store: Path | None) -> None:
        self.adapter, self.target = adapter, target
        self._spent = 0.0  # real seconds the run's steps took (its schedule's time)
        self._broken: ImportError | None = None
        self._own_store = store is None
        self.store = _fresh_store() if store is None else store
        self.capabilities = adapter.capabilities(target)
        self.trims = Capability.TRIM_HOOK in self.capabilities
        providers = getattr(adapter, "providers", None)  # optional: judge.OWN_PROVIDERS
        self.providers: frozenset[str] = frozenset(providers(target)) if providers else frozenset()
        # optional: an adapter whose side requests (a summarizer's) may fail (``model_error``)
        self.model_faults = bool(getattr(adapter, "model_faults", False)) and bool(
            adapter.tools(target)
        )
        # optional: side requests the framework does not retry after a backoff (a hand-built
        # graph's own node calls its model once): their ``model_error`` needs no clock steps
        untimed = getattr(adapter, "untimed_faults", None)
        self.untimed_faults = self.model_faults and callable(untimed) and bool(untimed(target))
        self._side: set[asyncio.Future[Reply]] = set()
        #: Side requests that offer no tools: a provider answers them with text only.
        self._toolless: set[asyncio.Future[Reply]] = set()
        self.ledger = Ledger()
        self.watch = Watch()
        self._repaired: list[tuple[str, list[Mapping[str, object]], list[Mapping[str, object]]]]
        self._repaired = []
        self.incidents: list[Incident] = []
        self.steps: list[Step] = []
        #: Indices in :attr:`steps` of the replies (and failures) that answered a model
        #: call the user's own code made aside (a summarizer's): the plain agent makes none.
        self.aside_steps: set[int] = set()
        self.phase = Phase.UP
        self.epoch = 0
        self._closed = False
        self._fatal = False
        self._seen: set[tuple[str, tuple[str, ...], str]] = set()
        self._requests: deque[asyncio.Future[Reply]] = deque()
        self._waiting: dict[str, list[_Waiting]] = {}
        self.approvals: list[str] = []
        self._foreign = foreign_threads()
        self._clock = VirtualLoop(0.0, foreign=self._foreign)
        self._dead: list[VirtualLoop] = []
        self._graveyard: list[object] = []
        self._turn: asyncio.Task[None] | None = None
        self.loop: Loop | None = None
        self._open()

    # ------------------------------------------------------ the Harness side
    async def model(self, request: Mapping[str, object], *, aside: bool | None = None) -> Reply:
        """Record and judge the request, then wait for the schedule's reply.

        A request the user's own code made (a summarizer's prompt, with an
        adapter whose ``model_faults`` is true: ``aside`` true, or, when the
        adapter does not say, a prompt offering no tools although the agent has
        some) is recorded but not judged as the agent's context: it is no
        history the agent sends, and a ``model_error`` step may fail it.
        """
        body = json.loads(json.dumps(request, sort_keys=True, default=str))
        at = self._at()
        self.ledger.requests.append(Received(at, body))
        side = self.model_faults and (not body.get("tools") if aside is None else aside)
        if not side:
            self._record(judge_request(body, self.ledger, at, trims=self.trims,
                                       providers=self.providers))  # fmt: skip
            for layer, before, after in self._repaired:
                repair = judge_repair(layer, before, after, self.ledger, at)
                if repair is not None:
                    self.watch.repairs.append(repair)
                    self.ledger.rule(at, layer, repair.text())
            self._repaired.clear()
            self.watch.see(body, self.ledger, self._clock.time())
            if self.trims:
                for unit in removed_by_trim(body, self.ledger):
                    self.ledger.note_trim(at, unit)
            self.ledger.witness(*calls_and_results(body))
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._requests.append(future)
        if side:
            self._side.add(future)
            if not body.get("tools"):
                self._toolless.add(future)
        try:
            return await future
        finally:
            self._side.discard(future)
            self._toolless.discard(future)
            if future in self._requests:
                self._requests.remove(future)

    async def tool(self, call: ToolCall) -> str:
        """Record the body's start, wait for the schedule's decision, return or raise it."""
        cid = self.ledger.match(call)
        body = Body(cid, self._at(), epoch=self.epoch)
        self.ledger.bodies.append(body)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        waiting = _Waiting(body, future)
        self._waiting.setdefault(cid, []).append(waiting)
        try:
            return await future
        except asyncio.CancelledError:
            if body.end is BodyEnd.RUNNING:
                body.end, body.ended = BodyEnd.CANCELLED, self._at()
            raise
        finally:
            queue = self._waiting.get(cid, [])
            if waiting in queue:
                queue.remove(waiting)

    def now(self) -> float:
        """The virtual time."""
        return self._clock.time()

    def repaired(
        self,
        layer: str,
        before: Sequence[Mapping[str, object]],
        after: Sequence[Mapping[str, object]],
    ) -> None:
        """The framework's repair layer rewrote ``before`` into ``after``: judged
        with the next request the agent sends (:func:`.repair.judge_repair`)."""
        self._repaired.append((layer, list(before), list(after)))

    def holds(self, messages: Sequence[Mapping[str, object]]) -> None:
        """Witness the units the loop holds before the user's code edits them."""
        self.ledger.witness(*calls_and_results({"messages": list(messages)}), sent=False)

    def awaiting_approval(self, call_id: str) -> None:
        """The run paused for a human's approval of ``call_id``."""
        if call_id not in self.approvals:
            self.approvals.append(call_id)

    # ------------------------------------------------------------- the state
    @property
    def turn_running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    @property
    def crashable(self) -> bool:
        """Whether a crash means anything now: a turn runs, or a call was issued
        (a crash before the first message drops nothing, and a resume after it
        would resume a run that never began)."""
        return self.turn_running or bool(self.ledger.issued)

    def pending_requests(self) -> int:
        return sum(1 for f in self._requests if not f.done())

    def side_request(self) -> bool:
        """Whether the oldest pending model request is one the user's own code made
        (a summarizer's: it offers no tools), which a ``model_error`` step may fail."""
        return next((f for f in self._requests if not f.done()), None) in self._side

    def reply_takes_calls(self) -> bool:
        """Whether the oldest pending model request may be answered with tool calls:
        not when it is a side request offering no tools (a summarizer's prompt), which
        a provider answers with text only."""
        return next((f for f in self._requests if not f.done()), None) not in self._toolless

    def waiting_calls(self) -> list[str]:
        """Call ids with a tool body waiting for the harness, in issue order."""
        order = {cid: i for i, cid in enumerate(self.ledger.issued)}
        live = [cid for cid, q in self._waiting.items() if any(not w.future.done() for w in q)]
        return sorted(live, key=lambda c: (order.get(c, len(order)), c))

    def has_timers(self) -> bool:
        return self.phase is Phase.UP and self._clock.next_timer() is not None

    # ------------------------------------------------------------ the driver
    def apply(self, step: Step) -> list[Incident]:
        """Apply one step and run the loop until quiescent; the new incidents.

        Raises
        ------
        StepRefused
            If the step is not enabled now.
        LoopError
            If the loop spins or its adapter fails.
        """
        before = len(self.incidents)
        self._check_enabled(step)
        self.steps.append(step)
        disruptions = self.ledger.disruptions
        try:
            with self._caged(f"step {len(self.steps)} ({step.kind}) of a schedule ran"):
                self._apply(step)
        except BaseException:
            self._fatal = True  # the check ends here: see close()
            raise
        if self.ledger.disruptions != disruptions:
            self._witness_history()  # what the loop still holds after a cancel or a raise
        return self.incidents[before:]

    def _apply(self, step: Step) -> None:
        match step:
            case User(text):
                self.ledger.users.append((self._at(), text))
                self._start(self._live_loop().send(text), "send")
            case ReplyStep(text, calls):
                future = next(f for f in self._requests if not f.done())
                if future in self._side:
                    self.aside_steps.add(len(self.steps) - 1)
                self.ledger.issue(calls, self._at())
                future.set_result(Reply(text, calls))
            case Complete(call, output):
                w = self._first_waiting(call)
                w.body.end, w.body.ended, w.body.output = BodyEnd.OK, self._at(), output
                if sum(1 for b in self.ledger.bodies_of(call) if b.end is BodyEnd.OK) > 1:
                    twice = f"the tool body of {call} ran twice"
                    self._record([Incident(IncidentKind.DUPLICATED_SIDE_EFFECT, self._at(),
                                           (call,), twice)])  # fmt: skip
                w.future.set_result(output)
            case ModelError(error):
                future = next(f for f in self._requests if not f.done())
                if future in self._side:
                    self.aside_steps.add(len(self.steps) - 1)
                self.watch.faults += 1
                future.set_exception(ModelFailed(error))
            case Fail(call, error):
                w = self._first_waiting(call)
                w.body.end, w.body.ended, w.body.output = BodyEnd.FAILED, self._at(), error
                w.future.set_exception(ToolFailed(error))
            case Timeout(call):
                w = self._first_waiting(call)
                w.body.end, w.body.ended = BodyEnd.TIMED_OUT, self._at()
                w.future.set_exception(TimeoutError(f"the tool of {call} timed out"))
            case Advance(seconds):
                self._run(lambda: self._clock.advance(seconds))
                return
            case Cancel():
                self._cancel()
                return
            case Crash():
                self._crash()
                return
            case Resume():
                self._reopen()
                self._witness_history()
                self._start(self._live_loop().resume(), "resume")
            case NewMessage(text):
                self.ledger.users.append((self._at(), text))
                self._reopen()
                self._witness_history()
                self._start(self._live_loop().send(text), "send")
            case Approve(call, approved):
                self.approvals.remove(call)
                if not approved:
                    self.ledger.denied.add(call)
                self._start(self._live_loop().approve(call, approved), "approve")
        self._run(self._clock.settle)

    def _check_enabled(self, step: Step) -> None:
        up = self.phase is Phase.UP
        ok = {
            "user": up and not self.turn_running and not self.approvals,
            "reply": up
            and self.pending_requests() > 0
            and (not getattr(step, "calls", ()) or self.reply_takes_calls()),
            "model_error": up and self.side_request(),
            "advance": up,
            "cancel": up and self.turn_running,
            "crash": up and self.crashable,
            "resume": not up,
            "new_message": not up,
            "approve": up and not self.turn_running and getattr(step, "call", "") in self.approvals,
        }.get(step.kind)
        if ok is None:  # complete, fail, timeout
            ok = up and getattr(step, "call", "") in self.waiting_calls()
        if not ok:
            raise StepRefused(f"step {len(self.steps)} ({step.kind}) is not enabled now")

    @contextlib.contextmanager
    def _caged(self, doing: str) -> Iterator[None]:
        """Run a stretch of the agent's code in the cage, within what is left
        of the run's :data:`.confine.SCHEDULE_TIMEOUT` (the time its steps took,
        not the time since it was made: a driver may keep a run a while)."""
        started = time.monotonic()
        left = confine.SCHEDULE_TIMEOUT - self._spent
        try:
            with confine.user_code(f"the {self.adapter.framework} agent", doing,
                                   deadline=started + left):  # fmt: skip
                yield
        finally:
            self._spent += time.monotonic() - started

    def _witness_history(self) -> None:
        """Witness the units the loop's own history holds (after a disruption,
        or on reopening from the store: what survived it)."""
        if self.loop is None:
            return
        try:
            history = self.loop.history()
        except Exception:  # a history the adapter cannot read now witnesses nothing
            return
        self.ledger.witness(*calls_and_results({"messages": history}))

    def _refused(self, error: str) -> None:
        """A user's message the framework refused before any request, on the history
        its own cancel left: judged against that history (:func:`.judge.refused_turn`;
        a history the application saved before a crash or a raise is the
        application's, not judged here)."""
        try:
            history = self._live_loop().history()
        except Exception:  # a history the adapter cannot read now: nothing to judge
            return
        running = [c for c, ws in self._waiting.items() if any(not w.future.done() for w in ws)]
        self._record(refused_turn(self._at(), history, running, error))

    def _first_waiting(self, call: str) -> _Waiting:
        return next(w for w in self._waiting[call] if not w.future.done())

    def _at(self) -> int:
        return max(0, len(self.steps) - 1)

    def _record(self, incidents: list[Incident]) -> None:
        for i in incidents:
            key = (i.kind.value, i.ids, i.reason)
            if key not in self._seen:
                self._seen.add(key)
                self.incidents.append(i)

    def _live_loop(self) -> Loop:
        assert self.loop is not None
        return self.loop

    def _start(self, coro: Coroutine[Any, Any, None], what: str) -> None:
        epoch = self.epoch
        sent = len(self.ledger.requests)

        def note(outcome: str, raised: bool = False) -> None:
            # a dropped process's turn, collected when the run closes (its
            # finally clauses run then), is debris: it says nothing of the run
            if self._closed or self.epoch != epoch:
                return
            if raised:
                self.ledger.raised.append(self._at())
            self.ledger.outcomes.append((self._at(), f"{what} {outcome}"))

        async def turn() -> None:
            try:
                await coro
                note("returned")
            except asyncio.CancelledError:
                note("was cancelled")
            except ImportError as exc:  # the adapter's or the framework's, not a schedule's
                self._broken = self._broken or exc
            except Exception as exc:
                # a history the framework's own cancel handed back, then refused by it
                refused = (what == "send" and len(self.ledger.requests) == sent
                           and self.ledger.last_disruption in self.ledger.cancels)  # fmt: skip
                note(f"raised {type(exc).__name__}: {exc}", raised=True)
                if refused and epoch == self.epoch and not self._closed:
                    self._refused(f"{type(exc).__name__}: {exc}")

        self._turn = self._clock.create_task(turn())

    def _run(self, settle: Any) -> None:
        try:
            settle()
        except LoopStuck as exc:
            hint = ("make it return (or wait on the model or a tool), or make it async"
                    if str(exc).startswith("a sync function") else
                    "an adapter must await only the harness (model, tool) "
                    "and the framework's own work")  # fmt: skip
            raise LoopError(f"the {self.adapter.framework} loop", str(exc), hint) from None
        if self._broken is not None:
            raise confine.Abort(self._import_error(self._broken))

    def _import_error(self, exc: ImportError) -> PolicyError:
        return adapter_import_error(self.adapter, exc, "a turn raised")

    def _cancel(self) -> None:
        turn = self._turn
        assert turn is not None
        self.ledger.cancels.append(self._at())
        self._clock.create_task(self._live_loop().cancel(turn))
        self._run(self._clock.settle)
        if not turn.done():
            self._run(lambda: self._clock.advance(HANG_DEADLINE))
        if not turn.done():
            self._record([hang(self._at(), HANG_DEADLINE)])

    def _crash(self) -> None:
        self.ledger.crashes.append(self._at())
        for queue in self._waiting.values():
            for w in queue:
                if w.body.end is BodyEnd.RUNNING:
                    w.body.end, w.body.ended = BodyEnd.DROPPED, self._at()
        # the dropped process's objects are kept until close, which collects
        # them quietly: garbage-collected mid-run, their finally clauses
        # would report errors about a loop that is gone
        self._graveyard += [self._waiting.copy(), list(self._requests), self._turn, self.loop]
        self._waiting.clear()
        self._requests.clear()
        self._side.clear()
        self._toolless.clear()
        self.approvals.clear()
        loop, self.loop, self._turn = self.loop, None, None
        if loop is not None:
            try:
                loop.abandon()
            except Exception as exc:
                self.ledger.outcomes.append((self._at(), f"abandon raised {exc!r}"))
        self._dead.append(self._clock)
        self._clock = VirtualLoop(self._clock.time(), foreign=self._foreign)
        self.phase = Phase.CRASHED
        self.epoch += 1

    def _reopen(self) -> None:
        self.phase = Phase.UP
        self._open()

    def _open(self) -> None:
        asyncio.set_event_loop(self._clock)
        try:
            with self._caged("its loop was opened"):
                self.loop = self.adapter.open(self.target, self)
        except Exception as exc:
            raise LoopError(
                f"the {self.adapter.framework} adapter",
                f"could not open the agent ({type(exc).__name__}: {exc}).",
                "check that the target builds an agent without a network or an API key",
            ) from None
        finally:
            asyncio.set_event_loop(None)

    # ------------------------------------------------------------------ end
    def close(self) -> None:
        """Drop every event loop and the temporary store."""
        self._closed = True
        if self.loop is not None:
            with contextlib.suppress(Exception):
                self.loop.abandon()
            self.loop = None
        clocks, self._dead = [*self._dead, self._clock], []
        self._turn = None
        self._requests.clear()
        self._side.clear()
        self._toolless.clear()  # a future's callbacks hold its task: nothing may outlive close
        self._waiting.clear()
        self._graveyard.clear()
        # a run that ended the check (the agent exited, hung, or an import
        # failed) leaves its debris where the frameworks put it: collected
        # later, outside the quiet collection below, its finally clauses would
        # print to stderr under the one paragraph the check ends with
        _drop(clocks, forget_them=not self._fatal)
        self._put_heap_back()
        if self._own_store:
            shutil.rmtree(self.store, ignore_errors=True)

    def _put_heap_back(self) -> None:
        if self._set_aside:
            self._set_aside = False
            gc.unfreeze()

    def __enter__(self) -> LoopRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def adapter_import_error(adapter: Adapter, exc: ImportError, when: str) -> PolicyError:
    """The one paragraph for an ``ImportError`` inside an adapter (``when``:
    what raised it): a release the adapter does not drive is named first."""
    from prunecheck.sim.subjects.cage_wire import where_raised

    from .versions import Supported, check_supported

    framework = adapter.framework
    supported = getattr(adapter, "supported", None)
    if isinstance(supported, Supported):
        try:
            check_supported(framework, supported)
        except PolicyError as wrong:  # a release it does not drive: named first
            return wrong
    drives = f"it drives {supported.text()}; " if isinstance(supported, Supported) else ""
    return LoopError(
        f"the {framework} adapter",
        f"could not run the agent: {when} {type(exc).__name__}: {exc}"
        f"{where_raised(exc)} (a module it needs moved or is not installed).",
        f"{drives}pip install 'prunecheck[loops]' installs the releases it is tested with",
    )
