"""A Microsoft Agent Framework assistant that asks before it sends an email.

``send_email`` is a tool of ``approval_mode="always_require"``: the run stops
with a ``function_approval_request`` and the app answers it with the user's
decision (``to_function_approval_response``) on the same session; the other
calls of the batch wait with it.  ``SlidingWindowStrategy(keep_last_groups=6)``
trims in the run, before each model call.  Check it::

    prunecheck check loop:examples/loops/maf_approval.py:agent
"""

from __future__ import annotations

from agent_framework import Agent, SlidingWindowStrategy, tool
from agent_framework.openai import OpenAIChatCompletionClient


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


@tool(approval_mode="always_require")
def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


agent = Agent(
    client=OpenAIChatCompletionClient(model="gpt-4.1"),
    instructions="You are a support agent.",
    tools=[search, send_email],
    compaction_strategy=SlidingWindowStrategy(keep_last_groups=6),
)
