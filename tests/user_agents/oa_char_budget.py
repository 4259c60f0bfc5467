"""An OpenAI Agents SDK agent whose input filter keeps 20,000 characters: UNSAFE.

The ``call_model_input_filter`` walks the input from the newest item back
and keeps items while their total length stays under 20,000 characters: a
character budget, blind to ``function_call`` / ``function_call_output``
pairs.  When a long tool output pushes the input over budget, the oldest
kept item can be a ``function_call_output`` whose ``function_call`` was cut,
and the Responses API answers 400 ("No tool call found for function call
output").  A user expects prunecheck to produce outputs long enough to reach
20,000 characters and catch it.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

import json

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

MAX_CHARS = 20_000


def keep_recent_chars(data: CallModelData[None]) -> ModelInputData:
    """Keep the newest input items whose total size is under MAX_CHARS."""
    kept = []
    total = 0
    for item in reversed(data.model_data.input):
        total += len(json.dumps(item, default=str))
        if total > MAX_CHARS:
            break
        kept.append(item)
    kept.reverse()
    return ModelInputData(input=kept, instructions=data.model_data.instructions)


@function_tool
def fetch_page(url: str) -> str:
    """Fetch a web page as text."""
    raise NotImplementedError("fetches the page")


@function_tool
def search_web(query: str) -> str:
    """Search the web."""
    raise NotImplementedError("calls the search API")


agent = Agent(
    name="researcher",
    instructions="You research questions on the web and cite your sources.",
    model="gpt-4.1",
    tools=[fetch_page, search_web],
)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the app passes to ``Runner.run``."""
    return agent, RunConfig(call_model_input_filter=keep_recent_chars)
