"""An OpenAI Agents SDK agent whose tool output guardrail cuts a long output
to its first characters, with nothing saying so.

The guardrail answers ``reject_content`` with the output's first
``OUTPUT_CHAR_BUDGET`` characters: the model is sent a prefix of the tool's
output as its whole output, a truncated payload, the configuration's
(tests/test_loops_tool_output_hooks.py).
"""

from __future__ import annotations

from agents import (
    Agent,
    ToolGuardrailFunctionOutput,
    ToolOutputGuardrailData,
    function_tool,
    tool_output_guardrail,
)

OUTPUT_CHAR_BUDGET = 5_000


@tool_output_guardrail
async def cut_long_output(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    text = str(data.output)
    if len(text) > OUTPUT_CHAR_BUDGET:
        return ToolGuardrailFunctionOutput.reject_content(text[:OUTPUT_CHAR_BUDGET])
    return ToolGuardrailFunctionOutput.allow()


@function_tool(tool_output_guardrails=[cut_long_output])
async def query_metrics(service: str) -> str:
    """Query a service's metrics for the last hour."""
    raise NotImplementedError("calls the metrics store")


agent = Agent(
    name="sre",
    instructions="Investigate the service's metrics.",
    model="gpt-4.1",
    tools=[query_metrics],
)
