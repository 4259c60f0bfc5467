"""An OpenAI Agents SDK input filter whose threshold is never reached: VACUOUS.

The ``call_model_input_filter`` keeps the last 200 items once the input
holds more than 400 (a cap "just in case"): a conversation reaches 400
items after well over a hundred tool calls.  Within any schedule prunecheck
runs the filter never changes the input, so nothing about its trimming was
tested.  A user expects to be told that, with figures (how large the input
got against the 400 items that trigger it), not "safe".

Expected: **vacuous** (never "safe"), with figures.
"""

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData


def cap_history(data: CallModelData[None]) -> ModelInputData:
    """Keep the last 200 items when the input has grown past 400."""
    items = data.model_data.input
    if len(items) > 400:
        items = items[-200:]
    return ModelInputData(input=items, instructions=data.model_data.instructions)


@function_tool
def translate(text: str, target_language: str) -> str:
    """Translate a text."""
    raise NotImplementedError("calls the translation API")


@function_tool
def detect_language(text: str) -> str:
    """Detect the language of a text."""
    raise NotImplementedError("calls the translation API")


agent = Agent(
    name="translator",
    instructions="You translate the user's texts.",
    model="gpt-4.1",
    tools=[translate, detect_language],
)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the app passes to ``Runner.run``."""
    return agent, RunConfig(call_model_input_filter=cap_history)
