"""Running independent tasks in forked worker processes, cores allowing.

``check`` checks each budget-check placement independently; on a machine
with two cores or more, :func:`fork_map` runs them side by side.  The task
is a closure (it may hold a loaded policy, a caged one included: each
process starts its own policy worker), so it is handed to the workers by
``fork`` — they inherit it — and only the results travel back, pickled.
Where ``fork`` is not the way processes start (macOS, Windows), or one
core is all there is, the tasks run one after the other in this process.

Workers die with their parent (``PR_SET_PDEATHSIG`` on Linux).

>>> fork_map(lambda x: x * x, [1, 2, 3], jobs=1)
[1, 4, 9]
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from prunecheck.sim.support.environment import jobs_limit

__all__ = ["ENV", "available_jobs", "fork_map"]

#: Environment variable capping the processes (``1``: run in this process).
ENV = "PRUNECHECK_JOBS"

T = TypeVar("T")
R = TypeVar("R")

_TASK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def available_jobs() -> int:
    """Cores this process may use, capped by ``$PRUNECHECK_JOBS``; 1 where
    worker processes do not start by ``fork``.  ConfigError if the variable
    is not a whole number, 1 or more."""
    if multiprocessing.get_start_method(allow_none=True) not in (None, "fork"):
        return 1
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    limit = jobs_limit()
    if limit is not None:
        cores = min(cores, limit)
    return max(1, cores)


def _die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a no-op elsewhere)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _call(index: int) -> Any:
    _die_with_parent()
    assert _TASK is not None
    func, items = _TASK
    return func(items[index])


def fork_map(
    func: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    done: Callable[[int], None] | None = None,
) -> list[R]:
    """``[func(x) for x in items]``, in up to ``jobs`` forked processes
    (default: one per item when the machine has two cores or more, else
    this process).  Results must pickle; an exception in a task is raised
    here.  ``done`` is told the index of each item as its task finishes
    (in the order they finish)."""
    global _TASK
    if jobs is None:
        jobs = len(items) if available_jobs() >= 2 else 1
    jobs = min(jobs, len(items))
    if jobs <= 1:
        out = []
        for i, x in enumerate(items):
            out.append(func(x))
            if done is not None:
                done(i)
        return out
    _TASK = (func, items)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(_call, i): i for i in range(len(items))}
            for future in as_completed(futures):
                future.result()  # a task's exception, raised here
                if done is not None:
                    done(futures[future])
            return [f.result() for f in futures]
    finally:
        _TASK = None
