"""Held back, round 35 (written last; prunecheck not changed for it): a Google
ADK app whose plugin keeps every model request under a character budget.

ADK's plugins docs: a ``BasePlugin`` subclass registered on the ``App``
(``App(name=..., root_agent=..., plugins=[...])``) runs its
``before_model_callback`` for every model call of every agent of the app, and
may edit ``llm_request`` in place.  The app's ``RequestBudgetPlugin`` keeps the
first content (the user's task) and drops the next-oldest contents while the
request's contents total more than ``MAX_REQUEST_CHARS = 40_000`` characters
(their JSON), far above a small tool output.  It counts contents, not
function-call turns: it can drop the model turn holding a ``function_call``
and keep the user turn holding its ``function_response``, or keep a model
turn of calls right after the task, and Gemini (the model is named by its
string) answers 400 INVALID_ARGUMENT ("Please ensure that function response
turn comes immediately after a function call turn").

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), once
prunecheck grows the request past 40,000 characters.  The spec is the ``app``
(the plugin lives on it, not on ``root_agent``).
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.apps import App
from google.adk.models import LlmRequest, LlmResponse
from google.adk.plugins import BasePlugin
from google.genai import types

MAX_REQUEST_CHARS = 40_000


def _chars(contents: list[types.Content]) -> int:
    return sum(len(content.model_dump_json(exclude_none=True)) for content in contents)


class RequestBudgetPlugin(BasePlugin):
    """Keep the task and the newest turns within ``max_chars`` characters."""

    def __init__(self, max_chars: int = MAX_REQUEST_CHARS) -> None:
        super().__init__(name="request_budget")
        self.max_chars = max_chars

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        contents = llm_request.contents
        while len(contents) > 2 and _chars(contents) > self.max_chars:
            del contents[1]
        return None


def get_itinerary(booking_ref: str) -> dict[str, str]:
    """Get a traveller's itinerary with every segment and fare rule."""
    raise NotImplementedError("calls the booking system")


def search_hotels(city: str, check_in: str, nights: int) -> dict[str, str]:
    """Search hotels in a city for the given dates."""
    raise NotImplementedError("calls the hotel API")


root_agent = Agent(
    name="travel_desk",
    model="gemini-2.5-flash",
    instruction="You are a travel desk agent. Look up the itinerary before changing anything.",
    tools=[get_itinerary, search_hotels],
)

app = App(name="travel_desk", root_agent=root_agent, plugins=[RequestBudgetPlugin()])
