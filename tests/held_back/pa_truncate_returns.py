"""Held-back agent (issue 31): pydantic-ai, provider string, character budget on tool outputs.

What the user wrote: the first line of pydantic-ai's docs (``Agent("openai:gpt-4o", ...)``)
plus an async history processor (the ``ProcessHistory`` capability) that keeps long
tool outputs from blowing up the context: any tool return longer than 3,000
characters is cut to its first 500 characters and a ``[truncated]`` marker.

Expected verdict (written before running): **unsafe, ``truncated_payload``**.
Why: the model is shown a prefix of a tool's output as if it were the output (the
verdict rules' case 2, "a shortened copy").  It is only reached if the harness grows a
tool output past 3,000 characters (its default fake outputs are ~45 characters), so a
"safe" here means the threshold was not reached.  The module must also load with no
``OPENAI_API_KEY`` (pydantic-ai raises ``UserError`` at import without one).
"""

from __future__ import annotations

from dataclasses import replace

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

MAX_TOOL_OUTPUT_CHARS = 3_000
KEEP_CHARS = 500


async def shorten_long_tool_outputs(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Cut every tool output longer than MAX_TOOL_OUTPUT_CHARS to its head."""
    shortened: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts = []
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    text = part.model_response_str()
                    if len(text) > MAX_TOOL_OUTPUT_CHARS:
                        part = replace(part, content=text[:KEEP_CHARS] + "\n... [truncated]")
                parts.append(part)
            message = replace(message, parts=parts)
        shortened.append(message)
    return shortened


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a research assistant. Use the tools to answer.",
    capabilities=[ProcessHistory(shorten_long_tool_outputs)],
)


@agent.tool_plain
async def fetch_page(url: str) -> str:
    """Fetch a web page and return its text."""
    return f"<html><body>Contents of {url}</body></html>"


@agent.tool_plain
async def search_papers(query: str) -> str:
    """Search the paper index."""
    return f"3 papers match {query!r}"
