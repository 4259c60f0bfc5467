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

SQLAlchemy's ORM keeps, on each mapper, a cache of compiled statements keyed
by the *dialect* of the engine that ran them (up to 150 entries a mapper).
Every process a schedule starts on a durable ADK session service opens a new
engine, so a long search filled the caches of ADK's five session-table mappers
with dialects of engines long closed and what their statements compiled to
(about 240 kB a run: ADK's 2,000-run search peaked at 857 MB):
:func:`forget` empties those caches too (a cache: the next statement compiles
again).
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
    return removed + _forget_compiled_statements()


def _forget_compiled_statements() -> int:
    """Empty the compiled-statement cache of every SQLAlchemy ORM mapper that
    has one (see the module's docs); the entries removed."""
    mapperlib: Any = sys.modules.get("sqlalchemy.orm.mapper")
    registries = getattr(mapperlib, "_mapper_registries", None)
    removed = 0
    for registry in list(registries or ()):
        for mapper in list(getattr(registry, "mappers", ())):
            cache = vars(mapper).get("_compiled_cache")  # memoized: absent until first used
            if cache:
                removed += len(cache)
                cache.clear()
    return removed


def _loop_of(task: object) -> object:
    get_loop = getattr(task, "get_loop", None)
    try:
        return get_loop() if get_loop is not None else None
    except Exception:  # not a task of asyncio's shape
        return None
