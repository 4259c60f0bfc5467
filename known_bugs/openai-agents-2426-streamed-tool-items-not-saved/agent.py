"""A support assistant served over a streaming endpoint with a session per
user (openai-agents-python issue 2426): ``Runner.run_streamed(agent, text,
session=SQLiteSession(user_id, "chats.db"))`` on every message."""

from agents import Agent, function_tool


@function_tool
def lookup_order(order_id: str) -> str:
    """The status of an order."""
    return f"Order {order_id} shipped yesterday."


@function_tool
def refund_order(order_id: str) -> str:
    """Refund an order (money leaves the account)."""
    return f"Order {order_id} refunded."


agent = Agent(
    name="support",
    instructions="Help customers with their orders. Use the tools.",
    model="gpt-4.1",
    tools=[lookup_order, refund_order],
)
