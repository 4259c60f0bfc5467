"""semantic-kernel chat history reducers: ``ChatHistoryTruncationReducer``,
``ChatHistorySummarizationReducer`` or a user's own ``ChatHistoryReducer``
— checked as Semantic Kernel agents run them.

A reducer *is* a ``ChatHistory`` (system message included); the agent
calls ``await reducer.reduce()`` before invoking the model once the history
holds more than ``target_count + threshold_count`` messages, and sends
``reducer.messages``.  Both built-in reducers look for a cut that does not
orphan a function call or result (``locate_safe_reduction_index``).  The
summarization reducer asks its chat service for a summary: here a stub
service answering a summary of ``summary_tokens`` tokens, offline.

Tool calls are ``FunctionCallContent`` items of an assistant message (the
assistant's text a ``TextContent`` before them); results are
``FunctionResultContent`` items of a tool message, one per result.

Specs::

    semantic-kernel:reducer=truncation,target_count=6,threshold_count=2
    semantic-kernel:reducer=summarization,target_count=6,threshold_count=2
    semantic-kernel:reducer=my_reducer.py:MyReducer      # built with the counts

Needs ``pip install 'prunecheck[semantic-kernel]'``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.sized_content import sized_text

from .common import Msgs, load_object, need, run_sync

__all__ = ["SemanticKernelSettings", "sk_trimmer", "to_semantic_kernel"]

_EXTRA = "semantic-kernel"


@dataclass(frozen=True, slots=True)
class SemanticKernelSettings:
    """Which reducer, with which counts."""

    reducer: str = field(
        default="truncation",
        metadata={
            "choices": ("truncation", "summarization"),
            "open": True,
            "help": "the reducer, or module:Class of a ChatHistoryReducer",
        },
    )
    target_count: int = field(default=6, metadata={"min": 1, "help": "messages to keep"})
    threshold_count: int = field(default=2, metadata={"help": "extra messages tolerated"})
    include_function_content_in_summary: bool = field(
        default=False, metadata={"help": "summarization: let the summary cover calls and results"}
    )
    summary_tokens: int = field(
        default=200,
        metadata={"min": 1, "help": "summarization: size of the stub service's summary"},
    )


def to_semantic_kernel(messages: Msgs, sk: Any) -> list[Any]:
    """``ChatMessageContent`` objects for OpenAI dicts, one each."""
    contents = sk.contents
    role = contents.AuthorRole
    names: dict[str, str] = {}
    out = []
    for d in messages:
        text = d.get("content") or ""
        if d.get("role") == "tool":
            cid = d["tool_call_id"]
            item = contents.FunctionResultContent(id=cid, name=names.get(cid, "tool"), result=text)
            out.append(contents.ChatMessageContent(role=role.TOOL, items=[item]))
        elif d.get("role") == "assistant" and d.get("tool_calls"):
            items: list[Any] = [contents.TextContent(text=text)] if text else []
            for c in d["tool_calls"]:
                names[c["id"]] = c["function"]["name"]
                items.append(
                    contents.FunctionCallContent(
                        id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"]
                    )
                )
            out.append(contents.ChatMessageContent(role=role.ASSISTANT, items=items))
        else:
            out.append(contents.ChatMessageContent(role=role(d["role"]), content=text))
    return out


def _stub_service(sk: Any, summary: str) -> Any:
    base = sk.connectors.ai.chat_completion_client_base.ChatCompletionClientBase
    contents = sk.contents

    class StubSummaryService(base):  # type: ignore[misc, valid-type]
        """A chat service that answers every request with one summary."""

        async def _inner_get_chat_message_contents(
            self, chat_history: Any, settings: Any
        ) -> list[Any]:
            return [
                contents.ChatMessageContent(role=contents.AuthorRole.ASSISTANT, content=summary)
            ]

    return StubSummaryService(ai_model_id="stub-summarizer")


def sk_trimmer(settings: SemanticKernelSettings) -> Any:
    """The list function running ``settings.reducer``."""
    subject = f"semantic-kernel:reducer={settings.reducer}"
    sk = need("semantic_kernel", _EXTRA, subject)
    need("semantic_kernel.connectors.ai.chat_completion_client_base", _EXTRA, subject)
    reducers = need("semantic_kernel.contents", _EXTRA, subject)
    counts = {"target_count": settings.target_count, "threshold_count": settings.threshold_count}
    summary = sized_text("sk-summary", settings.summary_tokens, "Summary:")

    def build() -> Any:
        if settings.reducer == "truncation":
            return reducers.ChatHistoryTruncationReducer(**counts)
        if settings.reducer == "summarization":
            return reducers.ChatHistorySummarizationReducer(
                service=_stub_service(sk, summary),
                include_function_content_in_summary=(settings.include_function_content_in_summary),
                **counts,
            )
        cls = load_object(settings.reducer, subject)
        if not (isinstance(cls, type) and issubclass(cls, reducers.ChatHistoryReducer)):
            raise PolicyError(
                subject,
                f"{settings.reducer} is not a ChatHistoryReducer subclass.",
                "use truncation, summarization or module:Class.",
            )
        return cls(**counts)

    def trim(messages: Msgs) -> Msgs:
        converted = to_semantic_kernel(messages, sk)
        origin = {id(m): d for m, d in zip(converted, messages, strict=True)}
        reducer = build()
        for m in converted:
            reducer.add_message(m)
        run_sync(reducer.reduce())
        out = []
        for m in reducer.messages:
            if id(m) in origin:
                out.append(origin[id(m)])
            else:
                out.append({"role": "user", "content": m.content or json.dumps(str(m.items))})
        return out

    trim.__name__ = trim.__qualname__ = f"sk_{settings.reducer}"
    return trim
