"""Held back (written last; prunecheck not changed for it): a pydantic-ai
agent on an Anthropic model named by a provider string.

``Agent("anthropic:claude-sonnet-4-0", ...)`` builds the Anthropic provider
at import and raises ``UserError`` without ``ANTHROPIC_API_KEY``.  Tools are
registered with ``@agent.tool`` (taking the ``RunContext``) and typed deps,
as pydantic-ai's docs write a bank-support agent.

Expected: it **loads** with no key and no network, and the user's
configuration (no trimming) is **safe**.
"""

from dataclasses import dataclass

from pydantic_ai import Agent, RunContext


@dataclass
class SupportDependencies:
    customer_id: int


support_agent = Agent(
    "anthropic:claude-sonnet-4-0",
    deps_type=SupportDependencies,
    instructions="You are a support agent in our bank. Give the customer support.",
)


@support_agent.tool
async def customer_balance(ctx: RunContext[SupportDependencies], include_pending: bool) -> float:
    """Returns the customer's current account balance."""
    raise NotImplementedError("queries the core banking system")


@support_agent.tool
async def block_card(ctx: RunContext[SupportDependencies], reason: str) -> str:
    """Block the customer's card."""
    raise NotImplementedError("calls the cards API")
