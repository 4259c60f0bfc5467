"""Held back (written last; prunecheck not changed for it): an OpenAI Agents
SDK agent on a session written from scratch that caps what it stores.

A ``SessionABC`` implementation keeping the conversation in a Python list
(the SDK's docs show how to write one) that, on ``add_items``, drops the
oldest items once more than 20 are stored: a write-time cap, blind to
``function_call`` / ``function_call_output`` pairs.

``app`` returns the agent, its run config and the session, as the app
passes them to ``Runner.run``.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from agents import Agent, RunConfig, TResponseInputItem, function_tool
from agents.memory import SessionABC


class CappedListSession(SessionABC):
    """An in-memory session that stores at most ``max_items`` items."""

    def __init__(self, session_id: str, max_items: int = 20) -> None:
        self.session_id = session_id
        self.max_items = max_items
        self._items: list[TResponseInputItem] = []

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        return list(self._items if limit is None else self._items[-limit:])

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        self._items.extend(items)
        del self._items[: -self.max_items]

    async def pop_item(self) -> TResponseInputItem | None:
        return self._items.pop() if self._items else None

    async def clear_session(self) -> None:
        self._items.clear()


@function_tool
def get_order(order_id: str) -> str:
    """Get an order."""
    raise NotImplementedError("calls the orders API")


@function_tool
def track_parcel(tracking_number: str) -> str:
    """Track a parcel."""
    raise NotImplementedError("calls the carrier API")


agent = Agent(
    name="orders",
    instructions="You help customers track their orders.",
    model="gpt-4.1",
    tools=[get_order, track_parcel],
)


def app() -> tuple[Agent[None], RunConfig, CappedListSession]:
    """The agent, its run config and the conversation's session."""
    return agent, RunConfig(), CappedListSession("customer-7")
