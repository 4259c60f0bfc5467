"""An order assistant whose search tool returns the matching orders as a list,
an empty list when nothing matches (openai-agents-python PR 3554)."""

from agents import Agent, function_tool


@function_tool
def search_orders(customer: str) -> list[str]:
    """The ids of the customer's open orders."""
    return []


agent = Agent(
    name="orders",
    instructions="Answer questions about orders. Use the tools.",
    model="gpt-4.1",
    tools=[search_orders],
)
