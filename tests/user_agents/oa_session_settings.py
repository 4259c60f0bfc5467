"""An OpenAI Agents SDK agent on a ``SQLiteSession`` whose own settings cap
the history: SAFE, exercised.

``SQLiteSession("customer-42", DB_PATH,
session_settings=SessionSettings(limit=6))``: the SDK reads only the 6 most
recent items of the session when it prepares a turn (the documented way to
cap what a session hands the runner, set on the session rather than on the
``RunConfig``).  It counts items, so the cut can fall between a
``function_call`` and its ``function_call_output``; but with a limit and
no ``session_input_callback`` the SDK's own preparation
(``prepare_input_with_session``) drops an output whose call the limit cut
before sending, so every request pairs its calls and results.  A user
expects prunecheck to see the session's limit (not only a ``RunConfig``'s),
grow the conversation past it and say so with figures.

Expected: the trimming class **safe**, exercised (the limit cut the history
in some schedules), held against the limit of 6 items.
"""

import tempfile
from pathlib import Path

from agents import Agent, RunConfig, SQLiteSession, function_tool
from agents.memory import SessionSettings

#: Where the app keeps its conversations.
DB_PATH = Path(tempfile.gettempdir()) / "orders-app-conversations.db"


@function_tool
def find_order(customer_id: str) -> str:
    """Find a customer's latest order."""
    raise NotImplementedError("calls the orders API")


@function_tool
def track_parcel(tracking_number: str) -> str:
    """Track a parcel."""
    raise NotImplementedError("calls the carrier API")


agent = Agent(
    name="orders",
    instructions="You answer questions about orders and deliveries.",
    model="gpt-4.1",
    tools=[find_order, track_parcel],
)


def app() -> tuple[Agent[None], RunConfig, SQLiteSession]:
    """The agent, its run config and the customer's session."""
    session = SQLiteSession("customer-42", DB_PATH, session_settings=SessionSettings(limit=6))
    return agent, RunConfig(), session
