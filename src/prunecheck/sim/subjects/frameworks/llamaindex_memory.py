"""llama-index-core chat memory: ``ChatMemoryBuffer`` and the newer
``Memory`` — checked as llama-index agents use them.

An agent ``put``s every message into its memory and sends what ``get()``
returns (plus its system prompt, held apart).  ``ChatMemoryBuffer`` keeps
the most recent messages that fit ``token_limit`` and then drops leading
assistant and tool messages so the history starts on a user message;
``Memory`` keeps ``token_limit × chat_history_token_ratio`` tokens of chat
and flushes older messages, ``token_flush_size`` tokens at a time, to its
memory blocks (none here: flushed messages are gone for the model).

Messages carry tool calls as llama-index's OpenAI integration stores them
(``additional_kwargs["tool_calls"]`` on the assistant message,
``additional_kwargs["tool_call_id"]`` on the tool message).  Both classes
count with llama-index's own tokenizer (tiktoken ``cl100k_base``, bundled,
offline) unless ``tokenizer=approx`` (4 characters per token).

Specs::

    llamaindex:memory=buffer,token_limit=budget
    llamaindex:memory=memory,token_limit=budget,chat_history_token_ratio=0.7

Needs ``pip install 'prunecheck[llamaindex]'``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prunecheck.sim.subjects.sized_content import CHARS_PER_TOKEN

from .common import Msgs, need, resolve_limit, run_sync, split_system
from .spec import BUDGET, Limit

__all__ = ["LlamaIndexSettings", "llamaindex_trimmer", "to_llamaindex"]


@dataclass(frozen=True, slots=True)
class LlamaIndexSettings:
    """Which memory, with which sizes."""

    memory: str = field(
        default="buffer",
        metadata={"choices": ("buffer", "memory"), "help": "ChatMemoryBuffer or Memory"},
    )
    token_limit: Limit = field(
        default=BUDGET, metadata={"limit": True, "help": "the memory's token_limit"}
    )
    chat_history_token_ratio: float = field(
        default=0.7, metadata={"help": "memory: share of token_limit for chat history"}
    )
    token_flush_size: int = field(
        default=3000, metadata={"min": 1, "help": "memory: tokens flushed at a time"}
    )
    tokenizer: str = field(
        default="tiktoken",
        metadata={"choices": ("tiktoken", "approx"), "help": "how the memory counts"},
    )


def to_llamaindex(history: Msgs, llms: Any) -> list[Any]:
    """llama-index ``ChatMessage`` objects for OpenAI dicts, one each."""
    out = []
    for d in history:
        extra: dict[str, Any] = {}
        if d.get("tool_calls"):
            extra["tool_calls"] = d["tool_calls"]
        if d.get("role") == "tool":
            extra["tool_call_id"] = d["tool_call_id"]
        out.append(
            llms.ChatMessage(
                role=d["role"], content=d.get("content") or "", additional_kwargs=extra
            )
        )
    return out


def _key(message: Any) -> tuple[str, str, str]:
    extra = message.additional_kwargs or {}
    calls = ",".join(c["id"] for c in extra.get("tool_calls", []))
    return (
        str(message.role.value),
        str(message.content or ""),
        calls or str(extra.get("tool_call_id", "")),
    )


def llamaindex_trimmer(settings: LlamaIndexSettings) -> Any:
    """The list function running ``settings.memory``."""
    subject = f"llamaindex:memory={settings.memory}"
    memory = need("llama_index.core.memory", "llamaindex", subject)
    llms = need("llama_index.core.llms", "llamaindex", subject)

    def approx(text: str) -> list[int]:
        return [0] * ((len(text) + CHARS_PER_TOKEN // 2) // CHARS_PER_TOKEN)

    tokenizer = approx if settings.tokenizer == "approx" else None

    def view(history: list[Any], limit: int) -> list[Any]:
        if settings.memory == "buffer":
            buffer = memory.ChatMemoryBuffer.from_defaults(
                chat_history=history, token_limit=limit, tokenizer_fn=tokenizer
            )
            return list(buffer.get())
        mem = memory.Memory.from_defaults(
            session_id="prunecheck",
            token_limit=limit,
            tokenizer_fn=tokenizer,
            chat_history_token_ratio=settings.chat_history_token_ratio,
            token_flush_size=settings.token_flush_size,
        )

        async def run() -> list[Any]:
            await mem.aput_messages(history)
            return list(await mem.aget())

        return run_sync(run())

    def trim(messages: Msgs, max_tokens: int) -> Msgs:
        system, history = split_system(messages)
        converted = to_llamaindex(history, llms)
        by_id = {id(m): d for m, d in zip(converted, history, strict=True)}
        by_key: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for m, d in zip(converted, history, strict=True):
            by_key.setdefault(_key(m), []).append(d)
        out = list(system)
        for m in view(converted, resolve_limit(settings.token_limit, max_tokens)):
            same = by_key.get(_key(m))
            found = by_id.get(id(m)) or (same[-1] if same else None)
            if found is None:
                if m.role.value == "system":
                    continue  # the memory-block system message (empty blocks)
                found = {"role": "user", "content": str(m.content or "")}
            out.append(found)
        return out

    trim.__name__ = trim.__qualname__ = f"llamaindex_{settings.memory}"
    return trim
