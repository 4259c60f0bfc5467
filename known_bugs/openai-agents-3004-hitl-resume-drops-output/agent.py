"""A maintenance assistant whose cleanup needs a human's approval, run with
the Responses API's server-side conversation state (openai-agents-python
issue 3004): ``Runner.run(agent, text, auto_previous_response_id=True)``, and
after an interruption ``Runner.run(agent, state)`` with the approvals."""

from agents import Agent, function_tool


@function_tool(needs_approval=True)
def run_cleanup(target: str) -> str:
    """Delete temporary files of a target (a human approves each call)."""
    return f"Cleaned {target}."


@function_tool
def run_diagnostic(check_name: str) -> str:
    """Run a read-only diagnostic."""
    return f"Diagnostic {check_name} passed."


agent = Agent(
    name="maintenance",
    instructions="Keep the machine healthy. Use the tools.",
    model="gpt-4.1",
    tools=[run_cleanup, run_diagnostic],
)
