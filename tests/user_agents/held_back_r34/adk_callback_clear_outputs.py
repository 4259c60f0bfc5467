"""Held back, round 34 (written last; prunecheck not changed for it): a Google
ADK agent whose ``before_model_callback`` clears old tool outputs to a
placeholder.

Before each model call the callback replaces the ``response`` of every
``function_response`` older than the last two with
``{"result": "[tool output cleared to save context]"}``, keeping each part's
id and name, so every ``function_call`` keeps its ``function_response`` and the
model is told the output was cleared (the same idea as LangChain's
``ClearToolUsesEdit``, which prunecheck's reports call safe).  It sets the
``response`` field in place; ADK copies the request's contents shallowly, so
the session's events share that object and the clearing sticks there too:
the next requests show the same placeholder, still a placeholder that says
what happened.

Expected (before running): exit 0, the trimming class **safe** and exercised
(the callback changed the request in some schedules): an honest placeholder,
no ``synthesized_result``, no broken pair.
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse

KEEP_RECENT_OUTPUTS = 2
CLEARED = {"result": "[tool output cleared to save context]"}


def clear_old_outputs(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """Clear every tool output but the last KEEP_RECENT_OUTPUTS."""
    responses = [
        part.function_response
        for content in llm_request.contents
        for part in content.parts or []
        if part.function_response is not None
    ]
    for response in responses[:-KEEP_RECENT_OUTPUTS]:
        response.response = dict(CLEARED)
    return None


def get_weather(city: str) -> dict:
    """Get the current weather of a city."""
    raise NotImplementedError("calls the weather API")


def get_forecast(city: str, days: int) -> dict:
    """Get the forecast of a city for the next days."""
    raise NotImplementedError("calls the weather API")


root_agent = Agent(
    name="weather",
    model="gemini-2.5-flash",
    instruction="You answer questions about the weather with the tools.",
    tools=[get_weather, get_forecast],
    before_model_callback=clear_old_outputs,
)
