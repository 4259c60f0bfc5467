"""The agent of run-llama/llama_index#13715, as its user configured it.

An ``OpenAIAgent`` with two calculator tools and a ``ChatMemoryBuffer`` of
1,500 tokens: the agent puts every message (the user's, its tool calls, the
tool results, its answers) into the memory and sends what ``memory.get()``
returns, which keeps the most recent messages that fit the limit.  The model
may call several tools at once (parallel tool calling).

``agent`` builds it with the app's model (``OpenAI(model="gpt-4o")``).
"""

from __future__ import annotations

import os
from typing import Any

from llama_index.agent.openai import OpenAIAgent
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI


def multiply(a: int, b: int) -> int:
    """Multiply two integers and return the result."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers and return the result."""
    return a + b


def agent(llm: Any = None) -> OpenAIAgent:
    """The calculator assistant, its memory held to 1,500 tokens."""
    llm = llm or OpenAI(model="gpt-4o", api_key=os.environ.get("OPENAI_API_KEY", "sk-..."))
    return OpenAIAgent.from_tools(
        [FunctionTool.from_defaults(fn=multiply), FunctionTool.from_defaults(fn=add)],
        llm=llm,
        memory=ChatMemoryBuffer.from_defaults(token_limit=1500),
    )
