"""LangChain v1: ``CommitGuardMiddleware``, an ``AgentMiddleware`` whose
``before_model`` hook trims the agent's messages behind the commit gate.

Needs ``pip install 'prunecheck[langchain]'`` (``langchain>=1.0``).  The
trimmer is a list function over LangChain messages — ``trim_messages`` as
it is, or any ``fn(messages) -> messages`` — or a native policy.  Structure
is inferred from the list (:class:`~.listmode.ListGuard`): an ``AIMessage``
tool call without its ``ToolMessage`` is pending and the check defers.

>>> from langchain_core.messages import trim_messages
>>> middleware = CommitGuardMiddleware(trim_messages, budget=8_000, store="spill.db")
... # create_agent(model, tools, middleware=[middleware])  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable
from os import PathLike
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    RemoveMessage,
    messages_from_dict,
    messages_to_dict,
)
from langgraph.config import get_config
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from .errors import HardCeilingExceeded
from .listmode import ListGuard
from .store import SpillStore

__all__ = ["CommitGuardMiddleware", "decode_message", "encode_message"]


def encode_message(message: object) -> str:
    """A LangChain message as JSON text (for the spill store)."""
    assert isinstance(message, BaseMessage)
    return json.dumps(messages_to_dict([message])[0])


def decode_message(text: str) -> object:
    return messages_from_dict([json.loads(text)])[0]


class CommitGuardMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Trim the agent's messages before each model call, only at commit
    boundaries; spill to SQLite past the hard ceiling.

    Parameters
    ----------
    trimmer: a list function over LangChain messages, or a native policy.
    budget, hard_ceiling: tokens (``token_counter`` counts them; default:
        4 characters per token of the text).
    store: an SQLite path or ``":memory:"`` (stored with LangChain's own
        serializers), or a :class:`~.store.SpillStore` built with
        ``encode=encode_message, decode=decode_message``.
    conversation: the store's conversation id (default: a fresh one).  Each
        LangGraph thread (``configurable.thread_id``) gets its own guard and
        conversation, ``"<conversation>:<thread_id>"``, so threads of one
        agent never see each other's spilled units.
    raise_on_ceiling: past the hard ceiling, raise
        :class:`~.errors.HardCeilingExceeded` (default) — else keep the safe
        list and let the call go over budget.
    provider: the provider(s) the agent's model sends to (``"anthropic"``,
        ``"bedrock,gemini"``, a list): a prune or spill that would leave a
        history one of them rejects is refused, naming the rule
        (:class:`~.listmode.ListGuard`'s ``provider=``).
    """

    def __init__(
        self,
        trimmer: object,
        *,
        budget: int,
        hard_ceiling: int | None = None,
        store: SpillStore | str | PathLike[str] | None = None,
        token_counter: Callable[[Any], float] | None = None,
        raise_on_ceiling: bool = True,
        conversation: str | None = None,
        provider: str | list[str] | None = None,
    ) -> None:
        super().__init__()
        if isinstance(store, str | PathLike):
            store = SpillStore(store, encode=encode_message, decode=decode_message)
        self._given = trimmer

        def guard(conversation: str | None) -> ListGuard:
            return ListGuard(
                self._given,
                format="langchain",
                budget=budget,
                hard_ceiling=hard_ceiling,
                store=store,
                token_counter=token_counter,
                conversation=conversation,
                provider=provider,
            )

        self._new_guard = guard
        #: The guard of runs without a LangGraph thread id.
        self.guard = guard(conversation)
        self._threads: dict[str, ListGuard] = {}
        self.raise_on_ceiling = raise_on_ceiling

    @property
    def trimmer(self) -> object:
        """The trimmer as you gave it.  Assign a new one at any time: every
        thread's guard asks it from its next call on."""
        return self._given

    @trimmer.setter
    def trimmer(self, trimmer: object) -> None:
        self.guard.trimmer = trimmer  # refused here, before any guard changed, if no trimmer
        for guard in self._threads.values():
            guard.trimmer = trimmer
        self._given = trimmer

    def guard_for(self, thread_id: object) -> ListGuard:
        """The guard of one LangGraph thread (None: :attr:`guard`)."""
        if thread_id is None:
            return self.guard
        key = str(thread_id)
        found = self._threads.get(key)
        if found is None:
            found = self._threads[key] = self._new_guard(f"{self.guard.conversation}:{key}")
        return found

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages: list[AnyMessage] = list(state["messages"])
        try:
            thread = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # called outside a graph run
            thread = None
        try:
            kept = self.guard_for(thread)(messages)
        except HardCeilingExceeded as exc:
            if self.raise_on_ceiling:
                raise
            kept = list(exc.messages or messages)
        if len(kept) == len(messages) and all(a is b for a, b in zip(kept, messages, strict=True)):
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
