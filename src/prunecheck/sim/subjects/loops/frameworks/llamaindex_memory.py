"""The memory of a LlamaIndex agent as the adapter runs it: found where the
user's application keeps it, copied empty for each new process, witnessed
before it trims, its ``Memory`` store kept in the harness's store.

LlamaIndex's workflow agents (``FunctionAgent``, ``AgentWorkflow``) hold no
memory of their own: the application passes one to every run
(``agent.run(text, memory=memory)``), and without one the agent builds
``ChatMemoryBuffer.from_defaults(llm=agent.llm)`` (three quarters of the
model's context window).  The memory is where LlamaIndex trims: a
``ChatMemoryBuffer``'s ``get`` keeps the most recent messages within its
``token_limit``; a ``ChatSummaryMemoryBuffer`` summarizes what does not fit;
a ``Memory`` archives the oldest messages of its FIFO queue past
``token_limit * chat_history_token_ratio`` into its memory blocks.

* :func:`memory_of` finds the memory: the one a factory returned beside the
  agent (``(agent, memory)``), else the module-level memory of the module
  that holds the agent (the one named ``memory``, or the only one), else
  None (LlamaIndex's default);
* :func:`fresh_memory` is that memory's configuration, empty: the same class
  (a user's subclass kept) and limits, a summarizer's model replaced by
  :func:`~.llamaindex_doubles.summary_llm`; a ``Memory`` runs on a
  :class:`HarnessChatStore` (LlamaIndex's SQL store runs SQLite in worker
  threads the harness cannot order), on a file of ``harness.store`` when the
  user's memory is on a database file (what a crash keeps);
* :func:`witnessing` has the memory tell the harness what it holds before it
  trims (:meth:`Harness.holds`).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..contract import Harness

__all__ = [
    "MEMORY_FILE",
    "HarnessChatStore",
    "all_messages",
    "fresh_memory",
    "is_durable",
    "memory_of",
    "module_memory",
    "token_limit",
    "witnessing",
]

#: The file of ``harness.store`` a durable ``Memory`` keeps its messages in.
MEMORY_FILE = "llamaindex-memory.json"


def _is_memory(obj: object) -> bool:
    from llama_index.core.memory.types import BaseMemory

    return isinstance(obj, BaseMemory)


def _namespaces(target: object) -> list[dict[str, Any]]:
    """Module namespaces that may hold ``target``: a factory's, its tools'
    functions' (the user's module, even where it is no longer in
    ``sys.modules``), then every imported module's."""
    found: list[dict[str, Any]] = []
    for tool in getattr(target, "tools", None) or []:
        fn = getattr(tool, "fn", None) or getattr(tool, "async_fn", None)
        found.append(getattr(fn, "__globals__", {}))
    found.append(getattr(target, "__globals__", {}))
    found += [
        m.__dict__
        for m in list(sys.modules.values())
        if isinstance(getattr(m, "__dict__", None), dict)
    ]
    return found


def module_memory(target: object) -> tuple[str, Any] | None:
    """The module-level memory of the (user's) module holding ``target``
    (the one named ``memory``, or the only one), with its name."""
    for found in _namespaces(target):
        if not any(v is target for v in found.values()):
            continue
        name = str(found.get("__name__", ""))
        if name == "prunecheck" or name.startswith(("prunecheck.", "llama_index")):
            continue
        if _is_memory(found.get("memory")):
            return "memory", found["memory"]
        memories = [(k, v) for k, v in found.items() if _is_memory(v)]
        if len(memories) == 1:
            return memories[0]
    return None


def memory_of(target: object, parts: Iterable[object]) -> Any:
    """The memory the application runs the agent with, or None (LlamaIndex's default).

    Parameters
    ----------
    target : object
        What the spec names (the agent, or its factory).
    parts : Iterable[object]
        What a factory returned after the agent (``(agent, memory)``).
    """
    for part in parts:
        if _is_memory(part):
            return part
    found = module_memory(target)
    return None if found is None else found[1]


def _is_memory_class(memory: Any) -> bool:
    """Whether ``memory`` is a ``Memory`` (LlamaIndex 0.12.35+; 0.11 has none)."""
    try:
        from llama_index.core.memory import Memory
    except ImportError:
        return False
    return isinstance(memory, Memory)


def is_durable(memory: Any) -> bool:
    """Whether the user's memory outlives the process: a ``Memory`` on a
    database file (``async_database_uri`` naming one, not ``:memory:``)."""
    if memory is None or not _is_memory_class(memory):
        return False
    uri = str(getattr(memory.sql_store, "async_database_uri", "") or "")
    return bool(uri) and ":memory:" not in uri


def token_limit(memory: Any) -> tuple[int, str] | None:
    """The memory's budget in tokens and what states it (a ``Memory``'s chat
    history share of its ``token_limit``), or None."""
    limit = getattr(memory, "token_limit", None)
    if not isinstance(limit, int) or isinstance(limit, bool):
        return None
    name = type(memory).__name__
    if _is_memory_class(memory):
        ratio = float(memory.chat_history_token_ratio)
        return int(limit * ratio), f"{name}(token_limit={limit}, chat_history_token_ratio={ratio})"
    return limit, f"{name}(token_limit={limit})"


def _message_json(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = message.model_dump(mode="json")
    return data


class _Entries:
    """The rows of a :class:`HarnessChatStore`: ``[key, status, message json]``,
    written whole to ``path`` (if any) after every change, as a database commits."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.rows: list[list[Any]] = []
        if path is not None and path.exists():
            self.rows = json.loads(path.read_text(encoding="utf-8"))

    def save(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.rows), encoding="utf-8")


def _store_class() -> type:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

    class HarnessChatStore(AsyncDBChatStore):
        """LlamaIndex's ``AsyncDBChatStore`` contract on a list (and a file):
        every operation done when its ``await`` starts, in the harness's order."""

        _entries: Any = PrivateAttr(default=None)

        def of(self, key: str, status: Any = MessageStatus.ACTIVE) -> list[list[Any]]:
            wanted = None if status is None else MessageStatus(status).value
            return [r for r in self._entries.rows if r[0] == key and wanted in (None, r[1])]

        def messages(self, key: str, status: Any = MessageStatus.ACTIVE) -> list[Any]:
            return [ChatMessage.model_validate(r[2]) for r in self.of(key, status)]

        async def get_messages(
            self,
            key: str,
            status: Any = MessageStatus.ACTIVE,
            limit: int | None = None,
            offset: int | None = None,
        ) -> Any:
            found = self.messages(key, status)[offset or 0 :]
            return found if limit is None else found[:limit]

        async def count_messages(self, key: str, status: Any = MessageStatus.ACTIVE) -> int:
            return len(self.of(key, status))

        async def add_message(
            self, key: str, message: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            await self.add_messages(key, [message], status)

        async def add_messages(
            self, key: str, messages: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            value = MessageStatus(status).value
            self._entries.rows += [[key, value, _message_json(m)] for m in messages]
            self._entries.save()

        async def set_messages(
            self, key: str, messages: Any, status: Any = MessageStatus.ACTIVE
        ) -> None:
            self._entries.rows = [r for r in self._entries.rows if r[0] != key]
            await self.add_messages(key, messages, status)

        async def delete_message(self, key: str, idx: int) -> Any:
            rows = self.of(key, None)
            if not 0 <= idx < len(rows):
                return None
            self._entries.rows.remove(rows[idx])
            self._entries.save()
            return ChatMessage.model_validate(rows[idx][2])

        async def delete_messages(self, key: str, status: Any = None) -> None:
            gone = self.of(key, status)
            self._entries.rows = [r for r in self._entries.rows if r not in gone]
            self._entries.save()

        async def delete_oldest_messages(self, key: str, n: int) -> Any:
            oldest = self.of(key)[:n]
            self._entries.rows = [r for r in self._entries.rows if r not in oldest]
            self._entries.save()
            return [ChatMessage.model_validate(r[2]) for r in oldest]

        async def archive_oldest_messages(self, key: str, n: int) -> Any:
            oldest = self.of(key)[:n]
            for row in oldest:
                row[1] = MessageStatus.ARCHIVED.value
            self._entries.save()
            return [ChatMessage.model_validate(r[2]) for r in oldest]

        async def get_keys(self) -> Any:
            return sorted({r[0] for r in self._entries.rows})

    return HarnessChatStore


def HarnessChatStore(path: Path | None) -> Any:
    """A LlamaIndex ``AsyncDBChatStore`` on a list, written whole to ``path`` (if
    any) after each change (the class is made when LlamaIndex is first needed)."""
    store = _store_class()()
    store._entries = _Entries(path)
    return store


def _without_models(blocks: Iterable[Any]) -> list[Any]:
    """Copies of a ``Memory``'s blocks, each block's model (a fact extractor's)
    replaced by the summary double."""
    from .llamaindex_doubles import summary_llm

    out = []
    for block in blocks:
        fresh = copy.copy(block)
        if getattr(fresh, "llm", None) is not None:
            fresh.llm = summary_llm()
        out.append(fresh)
    return out


def fresh_memory(memory: Any, llm: Any, store: Path | None, *, plain: bool = False) -> Any:
    """The memory of a new process: ``memory``'s configuration, empty.

    Parameters
    ----------
    memory : BaseMemory or None
        The user's (None: LlamaIndex's default, ``ChatMemoryBuffer.from_defaults(llm=llm)``).
    llm : LLM
        The user's model (what the default memory is sized by).
    store : Path or None
        The harness's store (a durable ``Memory`` keeps its messages there).
    plain : bool
        The framework's plain loop: a ``ChatMemoryBuffer`` that never trims.
    """
    from llama_index.core.memory import ChatMemoryBuffer, Memory
    from llama_index.core.storage.chat_store import SimpleChatStore

    from .llamaindex_doubles import summary_llm

    if plain:
        return ChatMemoryBuffer.from_defaults(token_limit=10**9)
    if memory is None:
        return ChatMemoryBuffer.from_defaults(llm=llm)
    if isinstance(memory, Memory):
        path = store / MEMORY_FILE if store is not None and is_durable(memory) else None
        fresh = copy.copy(memory)
        fresh.sql_store = HarnessChatStore(path)
        fresh.memory_blocks = _without_models(memory.memory_blocks)
        return fresh
    fresh = copy.copy(memory)
    if hasattr(fresh, "chat_store"):
        fresh.chat_store = SimpleChatStore()
    if getattr(fresh, "llm", None) is not None:
        fresh.llm = summary_llm()
    if hasattr(fresh, "_token_count"):
        fresh._token_count = 0
    return fresh


def all_messages(memory: Any) -> list[Any]:
    """Every message the memory holds now (a ``Memory``'s active queue), without awaiting."""
    store = getattr(memory, "sql_store", None)
    if store is not None and hasattr(store, "messages"):
        return list(store.messages(memory.session_id))
    return list(memory.get_all())


def witnessing(memory: Any, harness: Harness) -> Any:
    """``memory`` telling the harness what it holds before it trims: before
    ``get`` (``ChatMemoryBuffer``, ``ChatSummaryMemoryBuffer``, a user's
    subclass: ``aget`` runs ``get``), and before a ``Memory`` manages its queue."""
    from .llamaindex_doubles import render_messages

    def wrap(name: str) -> None:
        original: Callable[..., Any] | None = getattr(memory, name, None)
        if original is None:
            return
        if name == "_manage_queue":

            async def queue(*args: Any, **kwargs: Any) -> Any:
                harness.holds(render_messages(all_messages(memory)))
                assert original is not None
                return await original(*args, **kwargs)

            object.__setattr__(memory, name, queue)
            return

        def get(*args: Any, **kwargs: Any) -> Any:
            harness.holds(render_messages(all_messages(memory)))
            assert original is not None
            return original(*args, **kwargs)

        object.__setattr__(memory, name, get)

    wrap("_manage_queue" if _is_memory_class(memory) else "get")
    return memory
