"""A coding assistant whose user can stop a run while a tool runs
(pydantic-ai issue 7977): the chat app cancels the run with
``AgentRun.cancel()``, keeps ``RunCancelled.all_messages()`` and sends the
user's next message with that history."""

from pydantic_ai import Agent

agent = Agent(
    "openai:gpt-4.1",
    instructions="You are a coding assistant. Use the tools.",
    defer_model_check=True,
)


@agent.tool_plain
async def run_tests(target: str) -> str:
    """Run the test suite on a target (can take minutes)."""
    raise NotImplementedError("runs pytest in the real app")


@agent.tool_plain
async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()
