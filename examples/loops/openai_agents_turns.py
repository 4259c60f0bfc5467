"""The agent of ``openai_agents_keep_last.py`` with a unit-safe
``call_model_input_filter``: it keeps the input from the second-to-last user
message on, so a function call is never sent without its output nor an
output without its call.  Check it with::

    prunecheck check loop:examples/loops/openai_agents_turns.py:app
"""

from __future__ import annotations

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

__all__ = ["agent", "app", "keep_recent_turns", "run_config"]


def keep_recent_turns(data: CallModelData[None]) -> ModelInputData:
    """Send the items from the second-to-last user message on."""
    items = data.model_data.input
    starts = [
        i for i, item in enumerate(items) if isinstance(item, dict) and item.get("role") == "user"
    ]
    kept = items[starts[-2] :] if len(starts) > 2 else items
    return ModelInputData(input=kept, instructions=data.model_data.instructions)


@function_tool
async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


@function_tool(timeout=30)
async def run_tests(target: str) -> str:
    """Run the test suite on a target (gives up after 30 s)."""
    raise NotImplementedError("runs pytest in the real app")


@function_tool(needs_approval=True)
async def delete_file(path: str) -> str:
    """Delete a file (a human approves each call)."""
    raise NotImplementedError("deletes in the real app")


agent = Agent(
    name="coder",
    instructions="You are a coding assistant. Use the tools.",
    model="gpt-5.2",
    tools=[read_file, run_tests, delete_file],
)
run_config = RunConfig(call_model_input_filter=keep_recent_turns)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the application runs it with."""
    return agent, run_config
