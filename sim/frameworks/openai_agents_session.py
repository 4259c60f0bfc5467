"""OpenAI Agents SDK sessions: ``SessionSettings(limit=N)`` — the SDK's
only client-side history trimming — checked as ``Runner.run`` applies it.

What the SDK offers (openai-agents 0.24): a session (``SQLiteSession`` and
others) stores the conversation as Responses API input items; before each
run the runner reads ``session.get_items(limit)`` — the latest ``limit``
items, a plain count with no notion of tool calls — optionally passes them
through a user ``session_input_callback``, then drops function calls that
have no output and outputs whose call was cut off by that pruning
(``drop_orphan_function_calls``) and sends the rest.  Server-side
compaction (``OpenAIResponsesCompactionSession``, ``OpenAIConversationsSession``)
runs on OpenAI's servers and cannot be checked offline.

``runtime=sdk`` (default) runs the runner's own preparation
(``prepare_input_with_session``: limit, then the orphan cleanup);
``runtime=session`` only ``get_items(limit)``.  Items are stored as the SDK
stores them: ``function_call`` / ``function_call_output`` items carry the
calls, an assistant's text is an ``output_text`` message item.

Specs::

    openai-agents:limit=10
    openai-agents:limit=10,runtime=session

Needs ``pip install 'prunecheck[openai-agents]'``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .common import Msgs, need, run_sync, split_system

__all__ = ["OpenAIAgentsSettings", "openai_agents_trimmer", "to_items"]


@dataclass(frozen=True, slots=True)
class OpenAIAgentsSettings:
    """How many items a session hands the runner, and through what."""

    limit: int = field(default=10, metadata={"min": 1, "help": "SessionSettings(limit=...)"})
    runtime: str = field(default="sdk", metadata={
        "choices": ("sdk", "session"), "help": "the runner's preparation, or get_items alone"})


def to_items(history: Msgs) -> list[tuple[dict[str, Any], int]]:
    """Responses input items for OpenAI dicts, each with its dict's index."""
    items: list[tuple[dict[str, Any], int]] = []
    for i, d in enumerate(history):
        role, text = d.get("role"), d.get("content") or ""
        if role == "tool":
            items.append(({"type": "function_call_output", "call_id": d["tool_call_id"],
                           "output": text}, i))
        elif role == "assistant":
            if text:
                items.append(({"id": f"msg_{i:04d}", "type": "message", "role": "assistant",
                               "status": "completed", "content": [
                                   {"type": "output_text", "text": text, "annotations": []}]},
                              i))
            for c in d.get("tool_calls") or []:
                items.append(({"id": f"fc_{c['id']}", "type": "function_call",
                               "call_id": c["id"], "name": c["function"]["name"],
                               "arguments": c["function"]["arguments"],
                               "status": "completed"}, i))
        else:
            items.append(({"role": role, "content": text}, i))
    return items


def _key(item: object) -> str:
    return json.dumps(item, sort_keys=True)


def openai_agents_trimmer(settings: OpenAIAgentsSettings) -> Any:
    """The list function running a session with ``settings.limit``."""
    subject = f"openai-agents:limit={settings.limit}"
    memory = need("agents.memory", "openai-agents", subject)
    persistence = need("agents.run_internal.session_persistence", "openai-agents", subject)

    async def fetch(items: list[dict[str, Any]]) -> list[Any]:
        session = memory.SQLiteSession("prunecheck", db_path=":memory:")
        try:
            await session.add_items(items)
            if settings.runtime == "session":
                return list(await session.get_items(limit=settings.limit))
            prepared, _ = await persistence.prepare_input_with_session(
                [], session, None, memory.SessionSettings(limit=settings.limit))
            return list(prepared)
        finally:
            session.close()

    def trim(messages: Msgs) -> Msgs:
        system, history = split_system(messages)
        items = to_items(history)
        owners: dict[str, list[int]] = {}
        for item, i in items:
            owners.setdefault(_key(item), []).append(i)
        need_all: dict[int, int] = {}
        counted: set[str] = set()  # an assistant with calls is its function_call items
        for item, i in items:
            if history[i].get("role") != "assistant" or item.get("type") == "function_call" \
                    or not history[i].get("tool_calls"):
                need_all[i] = need_all.get(i, 0) + 1
                counted.add(_key(item))
        got: dict[int, int] = {}
        for item in run_sync(fetch([item for item, _ in items])):
            key = _key(item)
            found = owners.get(key)
            if found and key in counted:
                got[found[-1]] = got.get(found[-1], 0) + 1
        out = list(system)
        out.extend(history[i] for i in range(len(history)) if got.get(i, 0) >= need_all.get(i, 1))
        return out

    trim.__name__ = trim.__qualname__ = f"session_limit_{settings.limit}"
    return trim
