"""A LangChain v1 agent whose class middleware keeps 20,000 characters: UNSAFE.

A user's ``AgentMiddleware`` subclass, written for an app that runs the
agent with ``agent.invoke(...)``: its sync ``wrap_model_call`` sends the
model only the newest messages whose contents total under 20,000
characters (the graph's state keeps everything).  It counts characters, not
tool calls, so a long tool output can leave a ``ToolMessage`` first in the
request with its ``AIMessage`` cut off: OpenAI answers 400.  A user expects
prunecheck to run the middleware as written (sync) and to produce outputs
long enough to reach the budget.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from collections.abc import Callable
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.tools import tool


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    with open(path) as f:
        return f.read()


@tool
def grep(pattern: str, path: str) -> str:
    """Search files for a pattern."""
    raise NotImplementedError("runs grep")


class CharBudget(AgentMiddleware):
    """Send the model at most ``max_chars`` characters of history, newest first."""

    def __init__(self, max_chars: int = 20_000) -> None:
        super().__init__()
        self.max_chars = max_chars

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        kept = []
        total = 0
        for message in reversed(request.messages):
            total += len(str(message.content))
            if total > self.max_chars:
                break
            kept.append(message)
        kept.reverse()
        return handler(request.override(messages=kept))


def agent(model: Any) -> Any:
    """The coding assistant on the app's chat model."""
    return create_agent(
        model,
        tools=[read_file, grep],
        system_prompt="You are a coding assistant.",
        middleware=[CharBudget(max_chars=20_000)],
    )
