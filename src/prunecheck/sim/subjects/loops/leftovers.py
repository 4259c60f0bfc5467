"""What a dropped event loop leaves in libraries' process-wide registries, forgotten.

A run ends with tasks that never finish: a crash drops the turn's task
mid-await, a search stops a run at its first violation.  The harness never
resumes them (their ``finally`` clauses would act on a process that is
gone) and lets the garbage collector take them.  Some libraries keep
per-task or per-loop state in module-level ``WeakKeyDictionary`` registries
whose *values* refer back to their key: AnyIO's ``_task_states`` (a task's
cancel scope holds its host task) and ``_run_vars`` (a loop's run variables,
e.g. its worker threads, hold the loop).  A weak key kept alive by its own
value is never collected: every dropped run kept its tasks, their
coroutines' frames and everything those held — the agent's whole history —
for the life of the process, about 100 kB and 500 objects a run, until a
long search ran out of memory.  :func:`forget` removes what a discarded loop
left there, so the collection that follows takes it.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

__all__ = ["forget"]


def forget(loop: asyncio.AbstractEventLoop) -> int:
    """Remove ``loop``'s tasks and run variables from AnyIO's registries.

    Only modules already imported are looked at (nothing is imported here).

    Returns
    -------
    int
        Entries removed.
    """
    removed = 0
    backend: Any = sys.modules.get("anyio._backends._asyncio")
    states = getattr(backend, "_task_states", None)
    if states is not None:
        for task in list(states.keys()):
            if _loop_of(task) is loop:
                states.pop(task, None)
                removed += 1
    lowlevel: Any = sys.modules.get("anyio.lowlevel")
    run_vars = getattr(lowlevel, "_run_vars", None)
    if run_vars is not None and run_vars.pop(loop, None) is not None:
        removed += 1
    return removed


def _loop_of(task: object) -> object:
    get_loop = getattr(task, "get_loop", None)
    try:
        return get_loop() if get_loop is not None else None
    except Exception:  # not a task of asyncio's shape
        return None
