"""A file assistant with an output guardrail and a final-answer tool, whose
deletions a human approves (openai-agents-python issue 4827): the run stops
when ``final_answer`` is called, every other tool's output goes back to the
model, and the conversation lives in a session."""

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunContextWrapper,
    function_tool,
    output_guardrail,
)


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (a human approves each call)."""
    return f"Deleted {path}."


@function_tool
def final_answer(text: str) -> str:
    """Give the user the final answer."""
    return text


@output_guardrail
async def no_secrets(
    ctx: RunContextWrapper[None], agent: Agent, output: str
) -> GuardrailFunctionOutput:
    """Block answers that leak a secret."""
    return GuardrailFunctionOutput(output_info=None, tripwire_triggered="SECRET" in str(output))


agent = Agent(
    name="files",
    instructions="Manage the user's files. Use the tools; end with final_answer.",
    model="gpt-4.1",
    tools=[delete_file, final_answer],
    tool_use_behavior={"stop_at_tool_names": ["final_answer"]},
    output_guardrails=[no_secrets],
)
