"""An AutoGen assistant whose context is held to 8,000 tokens: UNSAFE.

``TokenLimitedChatCompletionContext(model_client, token_limit=8000)`` is
autogen-core's own token budget: once over it, it drops messages from the
middle of the history, one at a time, whatever they are: the assistant
message that issued a batch of calls can go while its results stay, and the
provider answers 400.  The limit is far above what a few 45-character tool
outputs reach; a user expects prunecheck to grow the history past it.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import TokenLimitedChatCompletionContext


async def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    raise NotImplementedError("calls the orders API")


async def refund(order_id: str, amount: float) -> str:
    """Refund part or all of an order."""
    raise NotImplementedError("calls the payments API")


def agent(model_client: Any) -> AssistantAgent:
    """The shop assistant on the app's model client."""
    return AssistantAgent(
        name="shop_assistant",
        model_client=model_client,
        tools=[lookup_order, refund],
        system_message="You help customers with their orders.",
        model_context=TokenLimitedChatCompletionContext(model_client, token_limit=8000),
    )
