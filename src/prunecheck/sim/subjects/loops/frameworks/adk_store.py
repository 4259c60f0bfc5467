"""ADK's durable session services with aiosqlite's work run inline.

ADK's ``DatabaseSessionService`` (SQLAlchemy's ``sqlite+aiosqlite`` driver)
and ``SqliteSessionService`` talk to SQLite through aiosqlite, which runs
every call on a connection thread of its own and posts the result back to
the event loop.  A long C call (a commit's ``fsync``) on that thread looks
idle to the harness's quiescence check (its innermost Python frame is
aiosqlite's worker loop), so the harness could apply the next step before
the write landed.  :func:`inline_aiosqlite` makes aiosqlite run each call at
once on the event loop's thread, as :class:`~._common.InlineExecutor` does for
the loop's executor: the same SQL on the same file by ADK's own session
service, finished before the ``await`` that asked for it yields.

Process-wide and idempotent (aiosqlite's ``Connection`` is patched once);
a connection's calls all run on the thread that awaits them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["inline_aiosqlite"]

_MARK = "_prunecheck_inline"


def inline_aiosqlite() -> None:
    """Make ``aiosqlite.Connection`` run its calls inline (see the module's docs)."""
    from aiosqlite import core

    connection: Any = core.Connection
    if getattr(connection, _MARK, False):
        return

    async def _execute(self: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)

    async def _connect(self: Any) -> Any:
        if self._connection is None:
            self._connection = self._connector()
        return self

    def __await__(self: Any) -> Any:
        return _connect(self).__await__()

    def stop(self: Any) -> None:
        self._running = False
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    connection._execute = _execute
    connection._connect = _connect
    connection.__await__ = __await__
    connection.stop = stop
    setattr(connection, _MARK, True)
