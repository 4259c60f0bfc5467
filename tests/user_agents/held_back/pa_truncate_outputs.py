"""Held back (issue 31, written last; prunecheck not changed for it): a
pydantic-ai history processor that truncates long tool outputs.

A common way to keep requests small: every tool return longer than
``MAX_TOOL_CHARS`` (a module constant, 2,000 characters) is cut to its first
2,000 characters and a note.  Every call keeps its result, but the result
the model reads is a shortened copy of what the tool returned.

Expected: the trimming class **unsafe** with ``truncated_payload`` (a
truncated copy is its own kind, not an invented result).
"""

from dataclasses import replace

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

MAX_TOOL_CHARS = 2_000


def truncate_tool_outputs(messages: list[ModelMessage]) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = []
            for part in message.parts:
                text = part.content if isinstance(part, ToolReturnPart) else None
                if isinstance(text, str) and len(text) > MAX_TOOL_CHARS:
                    part = replace(part, content=text[:MAX_TOOL_CHARS] + "\n...[truncated]")
                parts.append(part)
            message = replace(message, parts=parts)
        out.append(message)
    return out


agent = Agent(
    "openai:gpt-4o",
    instructions="You investigate production incidents.",
    capabilities=[ProcessHistory(truncate_tool_outputs)],
)


@agent.tool_plain
async def read_logs(service: str, minutes: int) -> str:
    """Read a service's recent logs."""
    raise NotImplementedError("queries the log store")


@agent.tool_plain
async def get_metrics(service: str) -> str:
    """Get a service's dashboards as text."""
    raise NotImplementedError("queries the metrics store")
