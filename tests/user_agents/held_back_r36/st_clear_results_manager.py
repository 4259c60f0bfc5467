"""Held back, round 36 (written last; prunecheck not changed for it): a Strands
agent on a conversation manager of the app's own that clears old tool results
to a placeholder that says so, before every model call.

Strands' docs: a custom ``ConversationManager`` implements
``apply_management`` and ``reduce_context``, and, being a ``HookProvider``,
may register its own callbacks (calling the base ``register_hooks``); the
built-in sliding window does so to manage "per turn".  The app's
``ClearOldToolResults`` registers a plain ``def`` callback (sync) on
``BeforeModelCallEvent`` that applies its management before every model
call: every ``toolResult`` block but the newest ``KEEP_RECENT_RESULTS = 3``
gets the content ``[tool output cleared to save context]``, its
``toolUseId`` and ``status`` kept (the pattern of LangChain's
``ClearToolUsesEdit``).  Every ``toolUse`` keeps its ``toolResult``, and the
model is told the output was cleared; nothing is presented as a tool's
output that no tool produced.  On a context overflow it clears every result
but the newest.  The model is Strands' ``OpenAIModel``, its client built
the way Strands' docs show, from ``os.environ["OPENAI_API_KEY"]`` (a
``KeyError`` at import without a key).

Expected (before running): exit 0, the trimming class **safe** and exercised
(results cleared in some schedules, past 3 results in one run); the
placeholder is not ``synthesized_result``; no hang from the sync callback.
"""

from __future__ import annotations

import os
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import ConversationManager
from strands.hooks import BeforeModelCallEvent, HookRegistry
from strands.models.openai import OpenAIModel
from strands.types.exceptions import ContextWindowOverflowException

KEEP_RECENT_RESULTS = 3
PLACEHOLDER = "[tool output cleared to save context]"


def _tool_results(agent: Agent) -> list[dict[str, Any]]:
    return [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def _clear(results: list[dict[str, Any]]) -> bool:
    changed = False
    for result in results:
        if result.get("content") != [{"text": PLACEHOLDER}]:
            result["content"] = [{"text": PLACEHOLDER}]
            changed = True
    return changed


class ClearOldToolResults(ConversationManager):
    """Keep every message; clear all but the newest tool results."""

    def __init__(self, keep_recent: int = KEEP_RECENT_RESULTS) -> None:
        super().__init__()
        self.keep_recent = keep_recent

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._before_model_call)

    def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        self.apply_management(event.agent)

    def apply_management(self, agent: Agent, **kwargs: Any) -> None:
        _clear(_tool_results(agent)[: -self.keep_recent])

    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        if not _clear(_tool_results(agent)[:-1]):
            raise ContextWindowOverflowException("nothing left to clear") from e


@tool
def get_pull_request(repo: str, number: int) -> str:
    """Read a pull request with its diff and review comments."""
    raise NotImplementedError("calls the code host API")


@tool
def get_ci_log(repo: str, run_id: str) -> str:
    """Read the log of a CI run."""
    raise NotImplementedError("calls the CI API")


agent = Agent(
    model=OpenAIModel(
        client_args={"api_key": os.environ["OPENAI_API_KEY"]},
        model_id="gpt-4.1",
        params={"max_tokens": 2000},
    ),
    system_prompt="You review pull requests. Read the diff and the CI log before you comment.",
    tools=[get_pull_request, get_ci_log],
    conversation_manager=ClearOldToolResults(),
    callback_handler=None,
)
