"""A virtual-time event loop the harness runs one quiescent step at a time.

The harness owns every await point (Coyote, Shuttle, FoundationDB's
simulation): the framework's loop runs on a :class:`VirtualLoop` whose
``time()`` is a number the harness moves (:meth:`VirtualLoop.advance`), so
``asyncio.sleep``, ``wait_for`` and ``timeout`` in the framework wait for the
harness, never for the wall clock.  :meth:`VirtualLoop.settle` runs the loop
until it is *quiescent*: nothing is ready to run, no timer is due at the
current virtual time, and no thread the run started is busy — every task
waits on a future only the harness resolves (a model reply, a tool's
completion), on a timer in the virtual future, or is done.

Threads.  The user's sync code runs on the loop's :class:`~.handoff.Handoff`
executor (also AnyIO's ``to_thread``): its threads and the loop's pass one
baton, so they never run at once (:mod:`.handoff`).  Other thread-backed
persistence (aiosqlite's connection thread) completes work outside the loop
and posts the result with ``call_soon_threadsafe``.
Quiescence therefore also asks every thread started since the loop was made
whether it is idle: its innermost Python frame is a wait of ``threading`` or
``queue`` (aiosqlite's queue, a condition) or an executor worker's wait for
its next job.  A busy thread is waited for (a short real sleep, then the loop
runs again), so a thread's work always lands before the harness applies the
next step: the schedule, not the machine's speed, decides what happens.  Two
threads busy at once could post their results in either order; the frameworks
driven here use one store thread per run, and a run whose threads do not go
idle within ``thread_patience`` seconds fails loudly (:class:`LoopStuck`).

An agent that runs *outside* the process (a subprocess pointed at a fake
endpoint: :mod:`prunecheck.sim.subjects.blackbox`) cannot be seen by the
frames of threads: its adapter sets :attr:`VirtualLoop.outside` (an
:class:`Outside`), and quiescence then asks it instead of the threads, which
serve the outside agent and wait on it (an HTTP server's handler threads).
It is waited for as a busy thread is, but its patience is not the wall
clock alone: an outside that tells its CPU time (its optional ``cpu()``) is
stuck only when, over ``thread_patience`` seconds without waiting on the
harness, it also either spent that many seconds of CPU time (it works on its
own) or stayed still that long (it sleeps on its own timer).  A process that
starts slowly on a loaded machine is runnable, not still, and spends no more
CPU than on an idle one: it is waited for, and a run does not end (nor, on
its replay, not end) on how loaded the machine was.

Why private asyncio attributes: ``_ready`` and ``_scheduled`` are the only
way to see that nothing is runnable; they exist with these meanings in
CPython 3.11 to 3.14 (the event loop's own ``_run_once`` reads them).
"""

from __future__ import annotations

import asyncio
import heapq
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, cast, runtime_checkable

from . import handoff

__all__ = ["LoopStuck", "Outside", "VirtualLoop", "foreign_threads"]

#: Loop iterations one settle may take before the run is declared to spin forever.
MAX_TICKS = 50_000

_IDLE_FILES = ("threading.py", "queue.py")


def foreign_threads() -> set[int]:
    """Every thread alive now (also those started without ``threading``, as
    pytest-xdist's execnet does): threads a run never waits for."""
    return {t.ident or 0 for t in threading.enumerate()} | set(sys._current_frames())


@runtime_checkable
class Outside(Protocol):
    """Work outside the process that a run waits for (a subprocess agent)."""

    def busy(self) -> bool:
        """Whether the outside still works (called on the loop's thread, at
        every quiescence check: it may start tasks on the loop, handing the
        loop what the outside asked of it)."""
        ...

    # Optional: ``cpu() -> int | None``, the CPU nanoseconds the outside has
    # spent so far (its processes, all their threads), None if it cannot tell.


class _Patience:
    """When an outside that works without waiting on the harness is stuck
    (see the module's docs): over ``seconds`` of wall time, and either
    ``seconds`` of its CPU time or ``seconds`` without its CPU time moving."""

    def __init__(self, seconds: float, cpu: int | None) -> None:
        self.seconds = seconds
        self.start = self.moved = time.monotonic()
        self.cpu0 = self.cpu = cpu

    def lost(self, cpu: int | None) -> bool:
        now = time.monotonic()
        if now - self.start <= self.seconds:
            if cpu != self.cpu:
                self.cpu, self.moved = cpu, now
            return False
        if cpu is None or self.cpu0 is None:
            return True  # nothing else to go by: the wall clock
        if cpu != self.cpu:
            self.cpu, self.moved = cpu, now
        return cpu - self.cpu0 > self.seconds * 1e9 or now - self.moved > self.seconds


class LoopStuck(RuntimeError):
    """The framework's loop never went quiescent (it spins, or a thread stays busy)."""


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock only the harness moves, and which starts no
    free thread for the user's sync code (:mod:`.handoff`).

    Parameters
    ----------
    start : float
        The virtual time it starts at (a loop made after a crash continues
        the crashed one's clock).
    foreign : set[int] or None
        Thread idents that are not the run's (alive before it started):
        never waited for.
    thread_patience : float
        Real seconds a busy thread is waited for before :class:`LoopStuck`.
    """

    def __init__(
        self,
        start: float = 0.0,
        *,
        foreign: set[int] | None = None,
        thread_patience: float = 20.0,
    ) -> None:
        super().__init__()
        self._now = start
        self._foreign = set(foreign) if foreign is not None else foreign_threads()
        self._foreign.add(threading.get_ident())
        self._patience = thread_patience
        self.ticks = 0
        self.set_exception_handler(self._quiet)
        self.errors: list[str] = []
        setattr(self, handoff.MARK, True)
        handoff.install_anyio()
        self.handoff = handoff.Handoff(self, patience=thread_patience)
        self.set_default_executor(self.handoff)
        #: The agent outside the process, if it runs outside (see the module's docs).
        self.outside: Outside | None = None

    # ------------------------------------------------------------ the clock
    def _timers(self) -> list[asyncio.TimerHandle]:
        return cast(list[asyncio.TimerHandle], cast(Any, self)._scheduled)

    def _queue(self) -> Any:
        return cast(Any, self)._ready

    def time(self) -> float:
        """The virtual time (seconds)."""
        return self._now

    def next_timer(self) -> float | None:
        """When the earliest live timer is due, or None."""
        live = [h.when() for h in self._timers() if not h.cancelled()]
        return min(live) if live else None

    # ----------------------------------------------------------- quiescence
    def _tick(self) -> None:
        self.call_soon(self.stop)
        self.run_forever()
        self.ticks += 1

    def _due(self) -> bool:
        while self._timers() and self._timers()[0].cancelled():
            heapq.heappop(self._timers())
        return bool(self._timers()) and self._timers()[0].when() <= self._now

    def _snapshot(self) -> dict[int, tuple[object, int]] | None:
        """Where each of the run's threads stands, or None if one is busy.

        A thread is idle when its stack, threading's and queue's own frames
        aside, is one frame deep: a worker's loop blocked on its next job
        (an executor's ``_worker``, aiosqlite's connection thread).
        """
        out: dict[int, tuple[object, int]] = {}
        for ident, frame in sys._current_frames().items():
            if ident in self._foreign or ident in handoff.WORKERS:
                continue
            top: Any = frame
            while top is not None and top.f_code.co_filename.endswith(_IDLE_FILES):
                top = top.f_back
            if top is None:
                continue
            below: Any = top.f_back
            while below is not None:
                if not below.f_code.co_filename.endswith(_IDLE_FILES):
                    return None  # two frames of its own: it runs a job
                below = below.f_back
            out[ident] = (top.f_code, top.f_lasti)
        return out

    def _threads_idle(self) -> bool:
        first = self._snapshot()
        if first is None:
            return False
        if not first:
            return True
        time.sleep(0.0001)  # a worker between its job and posting the result moves on
        return self._snapshot() == first

    def _idle(self) -> bool:
        """No thread of the run is busy, or (an agent outside) the outside is quiet."""
        if self.outside is not None:
            return not self.outside.busy() and not self._queue() and not self._due()
        return self._threads_idle()

    def settle(self) -> None:
        """Run until quiescent (see the module's docs).

        Raises
        ------
        LoopStuck
            If the loop keeps having work after :data:`MAX_TICKS`
            iterations, or a thread stays busy ``thread_patience`` seconds.
        """
        waited_since: float | None = None
        patience: _Patience | None = None
        ticks = 0
        while ticks < MAX_TICKS:
            ticks += 1
            self._tick()
            if self.handoff.stuck is not None:
                raise LoopStuck(self.handoff.stuck)
            if self._queue() or self._due():
                waited_since = patience = None
                continue
            if self._idle():
                if not self._queue():
                    return
                continue
            now = time.monotonic()
            waited_since = waited_since if waited_since is not None else now
            outside = self.outside
            cpu = getattr(outside, "cpu", None) if outside is not None else None
            if cpu is not None:
                ticks -= 1  # not the loop spinning: the agent outside works (its patience)
                spent = cpu()
                patience = patience if patience is not None else _Patience(self._patience, spent)
                if patience.lost(spent):
                    raise LoopStuck(
                        f"the agent process worked over {self._patience:.0f} s without waiting "
                        f"on the harness (and spent {self._patience:.0f} s of CPU time, or did "
                        f"not run for {self._patience:.0f} s); the harness waits for it before "
                        "every step"
                    )
            elif now - waited_since > self._patience:
                raise LoopStuck(
                    f"the agent process worked over {self._patience:.0f} s without waiting "
                    "on the harness; the harness waits for it before every step"
                    if outside is not None
                    else f"a thread of the run stayed busy over {self._patience:.0f} s; "
                    "the harness waits for thread-backed work before every step"
                )
            time.sleep(0.0002 if self.outside is None else 0.001)
        raise LoopStuck(
            f"the loop still had work after {MAX_TICKS} iterations at virtual time "
            f"{self._now:g} s: the framework spins (a busy loop never waits on the harness)"
        )

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` on, firing every timer due meanwhile at its own time.

        Each timer fires with the clock at its due time, in order, and the
        loop settles after each; then the clock stops at the target.
        """
        target = self._now + max(0.0, seconds)
        while True:
            due = self.next_timer()
            if due is None or due > target:
                break
            self._now = max(self._now, due)
            self.settle()
        self._now = target
        self.settle()

    def run_task(self, factory: Callable[[], Any]) -> asyncio.Task[Any]:
        """Start ``factory()`` (a coroutine) as a task of this loop, without running it."""
        return self.create_task(factory())

    # ----------------------------------------------------------- crash, end
    def _quiet(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Exceptions nobody retrieved are kept for the narrative, not logged."""
        message = str(context.get("message", ""))
        if "was destroyed but it is pending" in message:
            return  # a task dropped by a crash
        exc = context.get("exception")
        self.errors.append(f"{message}: {exc!r}" if exc is not None else message)

    def discard(self) -> None:
        """Drop the loop without running anything more (a crash, or the run's end).

        Its tasks are never resumed; its handoff workers still waiting on the
        harness are ended (:meth:`.handoff.Handoff.shutdown`) and joined.
        """
        executor = getattr(self, "_default_executor", None)
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
        if not self.is_closed():
            self.close()
