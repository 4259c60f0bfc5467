"""Held back, round 37 (written last; prunecheck not changed for it): an
OpenAI Agents SDK agent whose tool output guardrail keeps oversized tool
outputs out of the context, saying so.

The SDK's guardrails docs: a function tool takes ``tool_output_guardrails``,
run after the tool returns; a guardrail answering
``ToolGuardrailFunctionOutput.reject_content(message)`` has the SDK send the
model that message as the call's output instead of the tool's result, and
the run goes on.  The app's async ``withhold_oversized_output`` measures the
output (``len(str(output))``) and, over ``MAX_TOOL_OUTPUT_CHARS = 20_000``
characters, replaces it with ``[output of search_logs withheld: 48,212
characters, over the 20,000-character limit; not shown to save context.
Ask for a narrower time range.]`` (the tool's name and size filled in).
Every ``function_call`` keeps its ``function_call_output`` (same
``call_id``); the text says the content was withheld and why, and claims
nothing about what the logs hold: an honest placeholder, decided when the
call completes (never while it is pending).  Below the limit the output
passes unchanged.  The model is named by its string (``gpt-4.1``, the
Responses API); the module loads without ``OPENAI_API_KEY``.

Expected (before running): exit 0, the trimming class **safe** and
exercised (outputs withheld in some schedules, once prunecheck grows tool
outputs past 20,000 characters), the placeholder not ``synthesized_result``
and not ``truncated_payload``, no ``unanswered_call``.
"""

from __future__ import annotations

from agents import (
    Agent,
    ToolGuardrailFunctionOutput,
    ToolOutputGuardrailData,
    function_tool,
    tool_output_guardrail,
)

MAX_TOOL_OUTPUT_CHARS = 20_000


@tool_output_guardrail
async def withhold_oversized_output(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
    """Keep tool outputs over MAX_TOOL_OUTPUT_CHARS out of the context, saying so."""
    size = len(str(data.output))
    if size <= MAX_TOOL_OUTPUT_CHARS:
        return ToolGuardrailFunctionOutput.allow()
    return ToolGuardrailFunctionOutput.reject_content(
        message=(
            f"[output of {data.context.tool_name} withheld: {size:,} characters, over the "
            f"{MAX_TOOL_OUTPUT_CHARS:,}-character limit; not shown to save context. "
            "Ask for a narrower time range.]"
        ),
        output_info={"withheld_chars": size},
    )


@function_tool(tool_output_guardrails=[withhold_oversized_output])
async def search_logs(service: str, query: str, since_minutes: int = 60) -> str:
    """Search a service's logs for a query over the last minutes."""
    raise NotImplementedError("calls the log store")


@function_tool(tool_output_guardrails=[withhold_oversized_output])
async def get_deploy(service: str) -> str:
    """Read a service's current deployment: version, replicas and recent events."""
    raise NotImplementedError("calls the deploy API")


agent = Agent(
    name="oncall_assistant",
    instructions="You help the on-call engineer. Read logs and deploys before you guess.",
    model="gpt-4.1",
    tools=[search_logs, get_deploy],
)
