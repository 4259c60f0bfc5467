"""An OpenAI Agents SDK agent as people write one: a SQLite session for the
conversation, and a ``call_model_input_filter`` that keeps the model's input
short by sending only the last 6 items (a plain count: it knows nothing of
function calls and their outputs).  ``delete_file`` needs approval.

``app`` returns what the application hands ``Runner.run``: the agent and its
run config; ``agent`` alone is the SDK's default loop (no run config, no
trimming).  Check them with::

    prunecheck check loop:examples/loops/openai_agents_keep_last.py:agent
    prunecheck check loop:examples/loops/openai_agents_keep_last.py:app
"""

from __future__ import annotations

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

__all__ = ["agent", "app", "keep_last_items", "run_config"]


def keep_last_items(data: CallModelData[None]) -> ModelInputData:
    """Send the model only the last 6 input items."""
    model_data = data.model_data
    return ModelInputData(input=model_data.input[-6:], instructions=model_data.instructions)


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
run_config = RunConfig(call_model_input_filter=keep_last_items)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the application runs it with."""
    return agent, run_config
