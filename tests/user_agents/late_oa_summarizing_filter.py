"""Held back (written last; prunecheck not changed for it): an OpenAI Agents
SDK input filter that summarizes old items with a second agent.

When the input holds more than 14 items, the async
``call_model_input_filter`` asks ``summarizer`` (another ``Agent``, run with
``Runner.run``) for a summary of all but the last 6 items and sends the
summary and those 6.  The summarizer's model call is a real provider call:
offline or rate-limited, it raises out of the filter.

Expected: the summarizer's failure is a **fault prunecheck names** in the
verdict; no provider is reached.
"""

import json

from agents import Agent, RunConfig, Runner, function_tool
from agents.run import CallModelData, ModelInputData

summarizer = Agent(
    name="summarizer",
    instructions="Summarize the conversation so far in a few sentences.",
    model="gpt-4.1-mini",
)


async def summarize_old_items(data: CallModelData[None]) -> ModelInputData:
    items = list(data.model_data.input)
    if len(items) <= 14:
        return data.model_data
    old, recent = items[:-6], items[-6:]
    result = await Runner.run(summarizer, json.dumps(old, default=str))
    summary = {
        "role": "user",
        "content": f"Summary of the earlier conversation: {result.final_output}",
    }
    return ModelInputData(input=[summary, *recent], instructions=data.model_data.instructions)


@function_tool
def list_issues(repo: str) -> str:
    """List the open issues of a repository."""
    raise NotImplementedError("calls the forge API")


@function_tool
def get_issue(repo: str, number: int) -> str:
    """Get an issue of a repository."""
    raise NotImplementedError("calls the forge API")


agent = Agent(
    name="triager",
    instructions="You triage the issues of the user's repositories.",
    model="gpt-4.1",
    tools=[list_issues, get_issue],
)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the app passes to ``Runner.run``."""
    return agent, RunConfig(call_model_input_filter=summarize_old_items)
