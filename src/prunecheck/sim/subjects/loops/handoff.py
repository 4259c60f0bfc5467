"""The user's sync code on threads that run one at a time, in the schedule's order.

Frameworks run a user's sync function (a sync history processor, a sync
graph node, a sync middleware hook, a session's blocking I/O) on a worker
thread: ``loop.run_in_executor(None, ...)`` and ``asyncio.to_thread`` use the
event loop's default executor, and code built on AnyIO (pydantic-ai's sync
callbacks) uses ``anyio.to_thread.run_sync``, whose worker threads AnyIO
starts itself.  A free worker thread finishes when the operating system lets
it: a harness that owns every await point cannot order it, so the same seed
could give another schedule (Hypothesis's ``FlakyStrategyDefinition``), and
AnyIO's workers are not daemon threads and stop only when their root task
ends, so a run the harness crashed kept them, and the process, alive.

On a :class:`~prunecheck.sim.subjects.loops.clock.VirtualLoop` both go to a
:class:`Handoff` executor instead.  Its threads and the loop's thread pass
one baton: ``submit`` gives the job to a worker and the loop's thread waits
until the worker gives the baton back — when the job returns (its result is
then one more ready callback of the loop) or when the job waits on the
harness through :func:`run_on_loop` (a sync ``model.invoke`` of a LangChain
node: the model's request goes to the harness, and the worker gets the
baton back, the loop's thread waiting again, when the reply is given).  So
exactly one thread runs at any moment, in an order only the schedule
decides: the same seed gives the same bytes.  Sync work submitted while a
job waits on the harness gets a worker of its own (a job never queues behind
another).

Limits, said plainly: a sync function that waits on anything else than the
harness (a lock another thread holds, ``anyio.from_thread.run``) holds the
baton; after ``patience`` real seconds the run fails loudly
(:attr:`Handoff.stuck`, read by the loop's settle), it never hangs.  When a
run ends, its workers still waiting on the harness are woken with
:class:`RunDropped` (the user's ``finally`` clauses run then, on a closed
loop) and joined.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["MARK", "Handoff", "RunDropped", "install_anyio", "is_worker", "run_on_loop"]

T = TypeVar("T")

#: The attribute an event loop sets to True to send AnyIO's thread work to its executor.
MARK = "prunecheck_handoff"

#: Idents of every handoff worker alive: the loop's thread watch never waits for them.
WORKERS: set[int] = set()

_local = threading.local()
_anyio: list[bool] = []


class RunDropped(BaseException):
    """Raised in a worker still waiting on the harness when its run ends (a
    BaseException, as ``asyncio.CancelledError``: the user's ``except
    Exception`` does not swallow it)."""


class _Worker(threading.Thread):
    def __init__(self, executor: Handoff) -> None:
        super().__init__(name="prunecheck handoff worker", daemon=True)
        self.executor = executor
        self.job: tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...],
                        dict[str, Any]] | None = None  # fmt: skip

    def run(self) -> None:
        WORKERS.add(threading.get_ident())
        _local.worker = self
        ex = self.executor
        try:
            while True:
                with ex._cond:
                    ex._cond.wait_for(lambda: ex._holder is self or ex._closed)
                    if ex._holder is not self:
                        return
                job, self.job = self.job, None
                if job is not None:
                    future, fn, args, kwargs = job
                    del job
                    if future.set_running_or_notify_cancel():
                        try:
                            result = fn(*args, **kwargs)
                        except BaseException as exc:  # delivered to the awaiting task
                            future.set_exception(exc)
                            del exc
                        else:
                            future.set_result(result)
                            del result
                    del future, fn, args, kwargs
                with ex._cond:
                    if not ex._closed:
                        ex._idle.append(self)
                    ex._holder = None
                    ex._cond.notify_all()
        finally:
            WORKERS.discard(threading.get_ident())


class Handoff(concurrent.futures.ThreadPoolExecutor):
    """An executor whose workers and the loop's thread run one at a time (see the module).

    Parameters
    ----------
    loop : asyncio.AbstractEventLoop
        The loop whose thread submits, and on which :func:`run_on_loop` runs coroutines.
    patience : float
        Real seconds a job may hold the baton before the run is stuck.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, *, patience: float = 20.0) -> None:
        # asyncio's default executor must be a ThreadPoolExecutor; none of its own threads run
        super().__init__(max_workers=1)
        self._loop = loop
        self._patience = patience
        self._cond = threading.Condition()
        self._holder: _Worker | None = None
        self._idle: list[_Worker] = []
        self._workers: list[_Worker] = []
        self._closed = False
        self.stuck: str | None = None
        self.started = 0

    def submit(
        self, fn: Callable[..., T], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[T]:
        """Run ``fn`` on a worker now; return once it returned or waits on the harness."""
        if self._closed:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        if self._idle:
            worker = self._idle.pop()
        else:
            worker = _Worker(self)
            self._workers.append(worker)
            self.started += 1
            worker.start()
        worker.job = (future, fn, args, kwargs)
        self._pass(worker, _name(fn, args))
        return future

    def _pass(self, worker: _Worker, what: str) -> None:
        """Give ``worker`` the baton and wait until it gives it back."""
        with self._cond:
            if self._closed:
                return
            self._holder = worker
            self._cond.notify_all()
            if not self._cond.wait_for(lambda: self._holder is None, timeout=self._patience):
                self.stuck = (
                    f"a sync function of the agent ({what}) ran on its thread over "
                    f"{self._patience:g} s without returning or waiting on the harness "
                    "(it blocks on something else: a lock, another thread, the network)"
                )

    def _wait_for_baton(self, worker: _Worker) -> None:
        """On ``worker``'s thread: give the baton back and wait for it again."""
        with self._cond:
            self._holder = None
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._holder is worker or self._closed)
            if self._holder is not worker:
                raise RunDropped("the run ended while this sync call waited on the harness")

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """End the run's workers: idle ones return, waiting ones get :class:`RunDropped`."""
        with self._cond:
            self._closed = True
            self._holder = None
            self._idle.clear()
            self._cond.notify_all()
        for worker in self._workers:
            if worker is not threading.current_thread():
                worker.join(timeout=self._patience if wait else 1.0)
        self._workers = [w for w in self._workers if w.is_alive()]


#: Packages whose wrappers stand between a framework's executor call and the user's function.
_WRAPPERS = (
    "pydantic_ai", "anyio", "langchain", "langchain_core", "langgraph", "agents", "autogen_core",
    "autogen_agentchat", "asyncio", "functools", "contextvars",
)  # fmt: skip


def _name(fn: Any, args: tuple[Any, ...]) -> str:
    """The user's function behind ``fn``: ``functools.partial``, ``Context.run`` and a
    framework's wrapper closures (pydantic-ai's sync-callback guard) unwrapped."""
    for _ in range(6):
        if isinstance(fn, functools.partial):
            fn, args = fn.func, (*fn.args, *args)
        elif (
            getattr(fn, "__name__", "") == "run"
            and isinstance(getattr(fn, "__self__", None), contextvars.Context)
            and args
        ):
            fn, args = args[0], args[1:]
        elif str(getattr(fn, "__module__", "")).split(".")[0] in _WRAPPERS:
            inner = [c.cell_contents for c in getattr(fn, "__closure__", None) or ()
                     if callable(getattr(c, "cell_contents", None))]  # fmt: skip
            if not inner:
                break
            fn = inner[0]
        else:
            break
    return str(getattr(fn, "__qualname__", None) or repr(fn))


def is_worker() -> bool:
    """Whether the calling thread is a handoff worker of a live run."""
    worker = getattr(_local, "worker", None)
    return worker is not None and not worker.executor._closed


def run_on_loop(coro: Coroutine[Any, Any, T]) -> T:
    """From sync code on a handoff worker: run ``coro`` on the run's loop and wait for it.

    The worker gives the baton back to the loop's thread while ``coro``
    waits (on the harness: a model reply, a tool's end) and gets it again
    when ``coro`` is done.

    Raises
    ------
    RuntimeError
        If the calling thread is not a handoff worker (``coro`` is closed).
    RunDropped
        If the run ends first.
    """
    worker: _Worker | None = getattr(_local, "worker", None)
    if worker is None or worker.executor._closed:
        coro.close()
        raise RuntimeError(
            "a sync call into the prunecheck harness from the event loop's own thread "
            "cannot wait (call it from sync code the framework runs on a thread, or await "
            "the async API)"
        )
    ex = worker.executor
    future = asyncio.run_coroutine_threadsafe(coro, ex._loop)
    future.add_done_callback(lambda _: ex._pass(worker, "a sync call into the harness"))
    ex._wait_for_baton(worker)
    return future.result()


def install_anyio() -> bool:
    """Send AnyIO's worker-thread calls on marked loops to the loop's executor (idempotent).

    Any other event loop (the user's own, in the same process) keeps AnyIO's
    own threads: AnyIO's method is wrapped, not replaced.

    Returns
    -------
    bool
        True if AnyIO's asyncio backend is wrapped; False if AnyIO is not
        installed or has another shape (its threads then run, and the loop's
        thread watch waits for them).
    """
    if _anyio:
        return _anyio[0]
    try:
        from anyio._backends._asyncio import AsyncIOBackend
    except ImportError:
        _anyio.append(False)
        return False
    original = AsyncIOBackend.__dict__.get("run_sync_in_worker_thread")
    if not isinstance(original, classmethod):
        _anyio.append(False)
        return False
    threaded = original.__func__

    async def run_sync_in_worker_thread(
        cls: Any,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        abandon_on_cancel: bool = False,
        limiter: Any = None,
    ) -> Any:
        loop = asyncio.get_running_loop()
        if not getattr(loop, MARK, False):
            return await threaded(cls, func, args, abandon_on_cancel, limiter)
        context = contextvars.copy_context()
        return await loop.run_in_executor(None, context.run, func, *args)

    run_sync_in_worker_thread.__doc__ = threaded.__doc__
    AsyncIOBackend.run_sync_in_worker_thread = classmethod(run_sync_in_worker_thread)  # type: ignore[method-assign,assignment]
    _anyio.append(True)
    return True
