"""A pydantic-ai history processor that clears old tool outputs: SAFE.

Tool outputs older than the last two model responses have their content
replaced by an honest placeholder, ``[tool output cleared to save
context]``; every ``ToolCallPart`` keeps its ``ToolReturnPart`` (same
``tool_call_id``), so every call/result pair stays whole and the model is
told the content was cleared (LangChain's ``ClearToolUsesEdit`` does the
same).  A user expects prunecheck to call this safe: a placeholder that says
it was cleared is not an invented tool result.

Expected: **safe** (honest placeholder, no ``synthesized_result``).
"""

from dataclasses import replace

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart

PLACEHOLDER = "[tool output cleared to save context]"


async def clear_old_tool_outputs(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Clear tool outputs that come before the last two model responses."""
    responses = [i for i, m in enumerate(messages) if isinstance(m, ModelResponse)]
    if len(responses) < 2:
        return messages
    cutoff = responses[-2]
    cleared: list[ModelMessage] = []
    for i, message in enumerate(messages):
        if i < cutoff and isinstance(message, ModelRequest):
            parts = [
                replace(part, content=PLACEHOLDER) if isinstance(part, ToolReturnPart) else part
                for part in message.parts
            ]
            message = replace(message, parts=parts)
        cleared.append(message)
    return cleared


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a coding assistant. Read files before changing them.",
    capabilities=[ProcessHistory(clear_old_tool_outputs)],
    defer_model_check=True,
)


@agent.tool_plain
async def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


@agent.tool_plain
async def list_dir(path: str) -> str:
    """List a directory of the repository."""
    raise NotImplementedError("lists the directory")
