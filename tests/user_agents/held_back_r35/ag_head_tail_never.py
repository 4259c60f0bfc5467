"""Held back, round 35 (written last; prunecheck not changed for it): an
AutoGen assistant with a head-and-tail context sized so it never cuts.

``HeadAndTailChatCompletionContext(head_size=2, tail_size=400)``
(autogen-core's own): the model sees the first 2 and the last 400 messages,
the middle replaced by "Skipped N messages.", once the context holds more
than 402 messages, a cap "just in case".  AutoGen adds two messages per tool
round (the calls, then all their results), so a conversation gets there
after some two hundred tool rounds; in any schedule prunecheck runs the
context hands the model every message unchanged.

Expected (before running): exit 0, the trimming class **vacuous** (not
"safe"): the context never cut, the note giving its figures (the largest
history against its threshold of 400 tail messages / 402 in all).
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import HeadAndTailChatCompletionContext
from autogen_ext.models.openai import OpenAIChatCompletionClient


async def query_metrics(service: str, metric: str, hours: int) -> str:
    """Query a metric of a service over the last hours."""
    raise NotImplementedError("calls the metrics API")


async def get_deploys(service: str) -> str:
    """List the recent deploys of a service."""
    raise NotImplementedError("calls the deploy API")


agent = AssistantAgent(
    name="sre_assistant",
    model_client=OpenAIChatCompletionClient(model="gpt-4.1"),
    tools=[query_metrics, get_deploys],
    system_message="You investigate incidents. Query the metrics before you conclude.",
    model_context=HeadAndTailChatCompletionContext(head_size=2, tail_size=400),
    reflect_on_tool_use=False,
)
