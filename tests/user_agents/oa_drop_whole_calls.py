"""An OpenAI Agents SDK input filter that drops old calls with their outputs: SAFE.

When the model input holds more than 12 items, the ``call_model_input_filter``
drops the oldest ``function_call`` items together with their
``function_call_output`` (same ``call_id``), oldest first, until the input
is short enough; a call whose output has not arrived is never dropped.
Every call left has its output and every output its call: the Responses
API accepts it.  A user expects prunecheck to judge it by that rule.

Expected: **safe** (whole calls dropped; no ``invalid_prune``, no
``orphaned_result``).
"""

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

MAX_ITEMS = 12


def drop_old_calls(data: CallModelData[None]) -> ModelInputData:
    """Drop the oldest answered function calls, each with its output."""
    items = list(data.model_data.input)
    answered = [
        item["call_id"]
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    for call_id in answered:
        if len(items) <= MAX_ITEMS:
            break
        items = [
            item
            for item in items
            if not (isinstance(item, dict) and item.get("call_id") == call_id)
        ]
    return ModelInputData(input=items, instructions=data.model_data.instructions)


@function_tool
def get_forecast(city: str, days: int) -> str:
    """Get the weather forecast of a city."""
    raise NotImplementedError("calls the weather API")


@function_tool
def get_air_quality(city: str) -> str:
    """Get the air quality of a city."""
    raise NotImplementedError("calls the air quality API")


agent = Agent(
    name="weather",
    instructions="You answer questions about the weather.",
    model="gpt-4.1",
    tools=[get_forecast, get_air_quality],
)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the app passes to ``Runner.run``."""
    return agent, RunConfig(call_model_input_filter=drop_old_calls)
