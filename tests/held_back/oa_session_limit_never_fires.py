"""Held-back agent (issue 31): OpenAI Agents SDK, a session item limit never reached.

What the user wrote: the docs' ``SQLiteSession`` with
``SessionSettings(limit=400)`` ("only load the last 400 items") so a very long
conversation cannot overflow the context.

Expected verdict (written before running): **vacuous**.  Why: the limit only cuts when
the session holds more than 400 items; a run with batches of up to 16 calls and a few
dozen steps holds far fewer, so the session never changes what the model is sent.  The
verdict should say the trimmer never fired, with the largest history (items) against
the limit of 400.  (Were it reached, an item-count cut can separate a
``function_call`` from its output, so the verdict would then be unsafe,
``invalid_prune``; "safe" is wrong either way.)
"""

from __future__ import annotations

from agents import Agent, RunConfig, SessionSettings, SQLiteSession, function_tool


@function_tool
def get_forecast(city: str, days: int = 3) -> str:
    """Weather forecast for a city."""
    return f"{city}: sunny for {days} days"


@function_tool
def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount between currencies."""
    return f"{amount} {source} = {amount * 1.1:.2f} {target}"


agent = Agent(
    name="trip-planner",
    instructions="Plan trips. Check the weather and prices first.",
    model="gpt-4.1-mini",
    tools=[get_forecast, convert_currency],
)


def app() -> tuple[Agent[None], RunConfig, SQLiteSession]:
    """What the application passes to ``Runner.run``."""
    session = SQLiteSession("trip", session_settings=SessionSettings(limit=400))
    return agent, RunConfig(), session
