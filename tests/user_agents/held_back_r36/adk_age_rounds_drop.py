"""Held back, round 36 (written last; prunecheck not changed for it): a Google
ADK agent whose ``before_model_callback`` drops tool rounds by age, each call
turn together with the response turn that answers it.

ADK's callbacks docs: a ``before_model_callback`` may edit ``llm_request``
before the model is called (the session's events are untouched).  The app's
callback, a plain ``def`` (sync), counts the tool rounds in
``llm_request.contents``: a ``model`` content of ``function_call`` parts
immediately followed by a ``user`` content of ``function_response`` parts,
one response for each call (ADK merges the responses of a parallel batch
into one content).  Every round but the newest ``KEEP_TOOL_ROUNDS = 4`` is
too old to send verbatim and is removed **whole**: the call turn and its
response turn go together, never one without the other, never a content
that is not part of a round (the user's messages and the model's answers
stay).  What is left still alternates and pairs every function response
with the call turn right before it: a request Gemini (the model is named by
its string) accepts.  The tools are read-only lookups.

Expected (before running): exit 0, the trimming class **safe** and exercised
(rounds removed in some schedules: past 4 tool rounds in one run); no
``invalid_prune``, no ``orphaned_result``, no ``provider_rejection``.
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types

KEEP_TOOL_ROUNDS = 4


def _calls(content: types.Content) -> int:
    parts = content.parts or []
    if content.role != "model" or not parts:
        return 0
    return sum(1 for p in parts if p.function_call is not None)


def _answers(content: types.Content, calls: int) -> bool:
    parts = content.parts or []
    if content.role != "user" or not parts:
        return False
    return all(p.function_response is not None for p in parts) and len(parts) == calls


def drop_old_tool_rounds(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    contents = list(llm_request.contents)
    rounds = [
        i
        for i in range(len(contents) - 1)
        if _calls(contents[i]) and _answers(contents[i + 1], _calls(contents[i]))
    ]
    old = rounds[:-KEEP_TOOL_ROUNDS]
    if old:
        dropped = {i for r in old for i in (r, r + 1)}
        llm_request.contents = [c for i, c in enumerate(contents) if i not in dropped]
    return None


def get_forecast(city: str, days: int) -> dict[str, str]:
    """Get the weather forecast for a city."""
    raise NotImplementedError("calls the weather API")


def get_road_conditions(route: str) -> dict[str, str]:
    """Get the road conditions and closures on a route."""
    raise NotImplementedError("calls the traffic API")


root_agent = Agent(
    name="trip_planner",
    model="gemini-2.5-flash",
    instruction="You plan road trips. Check the weather and the roads before you advise.",
    tools=[get_forecast, get_road_conditions],
    before_model_callback=drop_old_tool_rounds,
)
