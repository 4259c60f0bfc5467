"""An OpenAI Agents SDK agent whose tool output guardrail withholds a long
output, saying so.

``tool_output_guardrails`` on the function tool: over ``MAX_OUTPUT_CHARS``
characters the guardrail answers ``reject_content`` with ``[output
withheld: N characters, over the 8,000-character limit; ask for a smaller
output instead]``, which the SDK sends the model as the call's output.
An honest placeholder: safe, and exercised once an output grows past the
budget (tests/test_loops_tool_output_hooks.py).
"""

from __future__ import annotations

from agents import (
    Agent,
    ToolGuardrailFunctionOutput,
    ToolOutputGuardrailData,
    function_tool,
    tool_output_guardrail,
)

MAX_OUTPUT_CHARS = 8_000


@tool_output_guardrail
def keep_outputs_small(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    size = len(str(data.output))
    if size > MAX_OUTPUT_CHARS:
        return ToolGuardrailFunctionOutput.reject_content(
            f"[output withheld: {size:,} characters, over the {MAX_OUTPUT_CHARS:,}-character "
            "limit; ask for a smaller output instead]"
        )
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_output_guardrails=[keep_outputs_small])
def read_ticket(ticket_id: str) -> str:
    """Read a support ticket with its whole thread."""
    raise NotImplementedError("calls the ticket system")


agent = Agent(
    name="triage",
    instructions="Triage the tickets the user names.",
    model="gpt-4.1",
    tools=[read_ticket],
)
