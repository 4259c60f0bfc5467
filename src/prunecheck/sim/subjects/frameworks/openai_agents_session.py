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

from dataclasses import dataclass, field
from typing import Any

from .common import Msgs, need, run_sync, split_system

__all__ = ["OpenAIAgentsSettings", "openai_agents_trimmer", "to_items"]


@dataclass(frozen=True, slots=True)
class OpenAIAgentsSettings:
    """How many items a session hands the runner, and through what."""

    limit: int = field(default=10, metadata={"min": 1, "help": "SessionSettings(limit=...)"})
    runtime: str = field(
        default="sdk",
        metadata={
            "choices": ("sdk", "session"),
            "help": "the runner's preparation, or get_items alone",
        },
    )


def to_items(history: Msgs) -> list[tuple[dict[str, Any], int]]:
    """Responses input items for OpenAI dicts, each with its dict's index."""
    items: list[tuple[dict[str, Any], int]] = []
    for i, d in enumerate(history):
        role, text = d.get("role"), d.get("content") or ""
        if role == "tool":
            items.append(
                ({"type": "function_call_output", "call_id": d["tool_call_id"], "output": text}, i)
            )
        elif role == "assistant":
            if text:
                items.append(
                    (
                        {
                            "id": f"msg_{i:04d}",
                            "type": "message",
                            "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": text, "annotations": []}],
                        },
                        i,
                    )
                )
            for c in d.get("tool_calls") or []:
                items.append(
                    (
                        {
                            "id": f"fc_{c['id']}",
                            "type": "function_call",
                            "call_id": c["id"],
                            "name": c["function"]["name"],
                            "arguments": c["function"]["arguments"],
                            "status": "completed",
                        },
                        i,
                    )
                )
        else:
            items.append(({"role": role, "content": text}, i))
    return items


def _item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


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
                [], session, None, memory.SessionSettings(limit=settings.limit)
            )
            return list(prepared)
        finally:
            session.close()

    def trim(messages: Msgs) -> Msgs:
        system, history = split_system(messages)
        items = to_items(history)
        got = run_sync(fetch([item for item, _ in items]))
        # The runner normalizes items (drops ids and statuses), so items are matched by
        # what identifies them: a call or an output by its call id, a message by its text.
        calls = {c["id"]: i for i, d in enumerate(history) for c in d.get("tool_calls") or []}
        texts: dict[str, int] = {}
        for i, d in enumerate(history):
            if d.get("role") != "tool" and not d.get("tool_calls"):
                texts[str(d.get("content") or "")] = i
        results = {d["tool_call_id"]: i for i, d in enumerate(history) if d.get("role") == "tool"}
        seen_calls: set[str] = set()
        kept: set[int] = set()
        for item in got:
            kind = item.get("type")
            if kind == "function_call":
                seen_calls.add(str(item.get("call_id")))
            elif kind == "function_call_output" and item.get("call_id") in results:
                kept.add(results[item["call_id"]])
            elif kind in (None, "message"):
                text = _item_text(item)
                if text in texts:
                    kept.add(texts[text])
        for i in sorted(set(calls.values())):
            if all(c in seen_calls for c in (x["id"] for x in history[i]["tool_calls"])):
                kept.add(i)
        out = list(system)
        out.extend(history[i] for i in sorted(kept))
        return out

    trim.__name__ = trim.__qualname__ = f"session_limit_{settings.limit}"
    return trim
