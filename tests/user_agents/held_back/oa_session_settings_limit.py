"""Held back (issue 31, written last; prunecheck not changed for it): an
OpenAI Agents SDK agent on the SDK's own ``SQLiteSession`` with a
``SessionSettings(limit=10)``.

The session hands the runner only the 10 most recent items of the
conversation (the SDK's documented way to cap history).  It counts items,
so the cut can fall between a ``function_call`` and its
``function_call_output``.

Expected: the trimming class **unsafe** (``orphaned_result`` /
``provider_rejection``), unless the SDK repairs the cut input before sending.
"""

from agents import Agent, RunConfig, SQLiteSession, function_tool
from agents.memory import SessionSettings


@function_tool
def search_flights(origin: str, destination: str, date: str) -> str:
    """Search flights."""
    raise NotImplementedError("calls the flights API")


@function_tool
def hold_seat(flight_id: str) -> str:
    """Hold a seat on a flight."""
    raise NotImplementedError("calls the booking API")


agent = Agent(
    name="travel",
    instructions="You book trips.",
    model="gpt-4.1",
    tools=[search_flights, hold_seat],
)


def app() -> tuple[Agent[None], RunConfig, SQLiteSession]:
    """The agent, its run config and the conversation's session."""
    session = SQLiteSession("traveller-3", session_settings=SessionSettings(limit=10))
    return agent, RunConfig(), session
