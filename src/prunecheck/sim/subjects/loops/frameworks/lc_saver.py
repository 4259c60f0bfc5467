"""LangGraph's SQLite checkpointer with its async methods run inline (why: the
module docstring of :mod:`.lc_doubles`).  Needs ``langgraph-checkpoint-sqlite``;
the LangGraph adapter imports it only for an agent whose checkpointer is durable.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

__all__ = ["InlineSqliteSaver"]


class InlineSqliteSaver(SqliteSaver):
    """LangGraph's ``SqliteSaver`` with its async methods run inline on the
    event loop's thread (see the module docstring for why).

    Versions are deterministic (``SqliteSaver`` appends ``random.random()``
    to each channel version; here the suffix is 0), so the same schedule
    writes the same rows.
    """

    @classmethod
    def at(cls, path: Path) -> InlineSqliteSaver:
        """A saver on the SQLite file ``path`` (created if absent)."""
        conn = sqlite3.connect(str(path), check_same_thread=False)
        saver = cls(conn)
        saver.setup()
        return saver

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:032}.{0:016}"

    async def aget_tuple(self, config: Any) -> Any:
        return self.get_tuple(config)

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[Any]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return self.get_delta_channel_history(*args, **kwargs)

    def abandon(self) -> None:
        """Close the connection without committing (a crash): committed writes stay."""
        self.conn.close()
