"""Held back, round 34 (written last; prunecheck not changed for it): a
pydantic-ai agent whose ``before_model_request`` hook leaves old tool outputs
out of the request once it passes a token budget.

pydantic-ai's ``Hooks`` capability (``@hooks.on.before_model_request``, as its
docs show) edits ``request_context.messages`` before each model request.  Once
the request passes ``TOKEN_BUDGET = 12_000`` estimated tokens (characters / 4,
far above a default tool output), this hook removes the ``ToolReturnPart`` s of
every request but the last, oldest first, until it fits, and drops a request
left empty.  It keeps the ``ToolCallPart`` s: the calls stay, their results go.
pydantic-ai repairs such a history before it sends it: each call left without
a return gets "The tool call was interrupted before a result was produced.",
which is false of a tool that ran and returned (an invented result by
prunecheck's stated rule); without the repair the request holds calls no
result answers.  The model is named by its string (no key needed to build it).

Expected (before running): exit 1, the trimming class **unsafe**, with
``synthesized_result`` (pydantic-ai's "interrupted" text for tools that ran)
or ``unanswered_call`` / ``silent_loss``.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import Hooks
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models import ModelRequestContext

TOKEN_BUDGET = 12_000


def _tokens(messages: list[ModelMessage]) -> int:
    chars = 0
    for message in messages:
        for part in message.parts:
            chars += len(str(getattr(part, "content", None) or getattr(part, "args", "")))
    return chars // 4


hooks = Hooks()


@hooks.on.before_model_request
async def drop_old_tool_outputs(
    ctx: RunContext[None], request_context: ModelRequestContext
) -> ModelRequestContext:
    """Leave old tool outputs out of the request while it is over TOKEN_BUDGET."""
    messages = list(request_context.messages)
    for i, message in enumerate(messages[:-1]):
        if _tokens(messages) <= TOKEN_BUDGET:
            break
        if isinstance(message, ModelRequest):
            parts = [p for p in message.parts if not isinstance(p, ToolReturnPart)]
            messages[i] = replace(message, parts=parts)
    request_context.messages = [m for m in messages if m.parts]
    return request_context


agent = Agent(
    "anthropic:claude-sonnet-4-5",
    instructions="You are a research assistant. Search, read, then answer with sources.",
    capabilities=[hooks],
)


@agent.tool_plain
async def search_papers(query: str) -> str:
    """Search the paper index."""
    raise NotImplementedError("calls the paper index")


@agent.tool_plain
async def read_paper(paper_id: str) -> str:
    """Read the full text of a paper."""
    raise NotImplementedError("fetches the paper")
