"""AutoGen: ``GuardedChatCompletionContext``, a ``ChatCompletionContext``
whose ``get_messages`` trims behind the commit gate.

Needs ``pip install 'prunecheck[autogen]'`` (``autogen-core``).  The
trimmer is a list function over AutoGen ``LLMMessage`` objects or a native
policy.  Structure is inferred from the list: an ``AssistantMessage`` of
``FunctionCall``\\ s whose ``FunctionExecutionResultMessage`` is not there
yet is pending and the check defers.  What the guard removes leaves the
context (spilled units go to the store and come back when a later call
names the same resource).
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import Any

from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import LLMMessage
from pydantic import TypeAdapter

from .listmode import ListGuard
from .store import SpillStore

__all__ = ["GuardedChatCompletionContext", "decode_message", "encode_message"]

_ADAPTER: TypeAdapter[LLMMessage] = TypeAdapter(LLMMessage)


def encode_message(message: object) -> str:
    """An AutoGen message as JSON text (for the spill store)."""
    return _ADAPTER.dump_json(message).decode()  # type: ignore[arg-type]


def decode_message(text: str) -> object:
    return _ADAPTER.validate_json(text)


class GuardedChatCompletionContext(ChatCompletionContext):
    """A chat completion context that prunes only at commit boundaries.

    Parameters are those of :class:`~prunecheck.guard.langchain.CommitGuardMiddleware`
    (one context is one conversation: give each agent its own context);
    past the hard ceiling ``get_messages`` raises
    :class:`~prunecheck.guard.HardCeilingExceeded` (its ``messages`` is the
    safe list).
    """

    def __init__(
        self,
        trimmer: object,
        *,
        budget: int,
        hard_ceiling: int | None = None,
        store: SpillStore | str | PathLike[str] | None = None,
        token_counter: Callable[[Any], float] | None = None,
        initial_messages: list[LLMMessage] | None = None,
        conversation: str | None = None,
        provider: str | list[str] | None = None,
    ) -> None:
        super().__init__(initial_messages)
        if isinstance(store, str | PathLike):
            store = SpillStore(store, encode=encode_message, decode=decode_message)
        self.guard = ListGuard(
            trimmer,
            format="autogen",
            budget=budget,
            hard_ceiling=hard_ceiling,
            store=store,
            token_counter=token_counter,
            conversation=conversation,
            provider=provider,
        )

    async def get_messages(self) -> list[LLMMessage]:
        kept: list[LLMMessage] = self.guard(self._messages)
        self._messages = kept
        return list(kept)
