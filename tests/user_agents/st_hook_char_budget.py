"""A Strands agent whose own hook keeps each model request under a character budget.

Written the way Strands' hooks docs show it: a ``HookProvider`` registering a
callback on ``BeforeModelCallEvent`` (which "allows hook providers to inspect
or modify the messages").  ``TrimToBudget.before_model`` is a plain ``def``:
while the messages' JSON is over ``MAX_CONTEXT_CHARS = 30_000`` it pops the
oldest message of ``agent.messages``, blind to ``toolUse``/``toolResult``
pairs.  The agent also has Strands' default ``SlidingWindowConversationManager``
(40 messages), which this agent never comes near.  Model: an Anthropic model
on Bedrock by its id (no credentials needed to build it).

Expected: the hook is the trim hook (the plain agent runs without it), its
budget 30,000 characters read from the module constant; a tool output of
40,000 characters makes it drop the first user message and the ``toolUse``
that asked for it: a ``toolResult`` first, which Bedrock refuses.
"""

from __future__ import annotations

import json
from typing import Any

from strands import Agent, tool
from strands.hooks import BeforeModelCallEvent, HookProvider, HookRegistry

MAX_CONTEXT_CHARS = 30_000


class TrimToBudget(HookProvider):
    """Drop the oldest messages while the conversation is over MAX_CONTEXT_CHARS."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeModelCallEvent, self.before_model)

    def before_model(self, event: BeforeModelCallEvent) -> None:
        messages = event.agent.messages
        while len(messages) > 1 and len(json.dumps(messages, default=str)) > MAX_CONTEXT_CHARS:
            messages.pop(0)


@tool
def read_log(service: str) -> str:
    """Read the last hour of a service's log."""
    raise NotImplementedError("calls the logging API")


agent = Agent(
    model="us.anthropic.claude-sonnet-4-20250514-v1:0",
    system_prompt="You are an on-call engineer. Read the logs before you answer.",
    tools=[read_log],
    hooks=[TrimToBudget()],
    callback_handler=None,
)
