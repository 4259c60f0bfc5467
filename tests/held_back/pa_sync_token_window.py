"""Held-back agent (issue 31): pydantic-ai, a SYNC history processor with a token budget.

What the user wrote: a plain ``def`` history processor (the ``ProcessHistory``
capability; pydantic-ai runs it on a thread) that estimates tokens at 4 characters
each and, while the history is over 2,500 tokens, deletes the oldest message after
the first one (the first request holds the instructions and the task).  It works
message by message, not turn by turn.
Tools are sync functions too.

Expected verdict (written before running): **unsafe, ``invalid_prune``**.
Why: deleting messages one at a time can delete a ``ModelResponse`` holding tool calls
while the ``ModelRequest`` with their ``ToolReturnPart``\\ s stays (a result without its
call), which providers reject.  Caveat a careful engineer would add: pydantic-ai may
repair orphaned returns before sending; then the honest expectation is that the loss of
the dropped results is judged by the provider's rules (whole units dropped: no loss), so
"safe" would be defensible, but never without figures.  The budget (2,500 tokens ~
10,000 characters) is far above the harness's default outputs; the sync processor
must not hang.
"""

from __future__ import annotations

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage

TOKEN_BUDGET = 2_500


def _estimate_tokens(message: ModelMessage) -> int:
    total = 0
    for part in message.parts:
        content = getattr(part, "content", None)
        if content is None:
            content = getattr(part, "args", "")
        total += len(str(content)) // 4 + 4
    return total


def keep_within_budget(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Drop the oldest messages (never the first) until the history fits the budget."""
    kept = list(messages)
    while len(kept) > 2 and sum(_estimate_tokens(m) for m in kept) > TOKEN_BUDGET:
        del kept[1]
    return kept


agent = Agent(
    "openai:gpt-4o-mini",
    instructions="You help engineers triage incidents. Look things up before answering.",
    capabilities=[ProcessHistory(keep_within_budget)],
)


@agent.tool_plain
def read_log(service: str, lines: int = 200) -> str:
    """Return the last lines of a service's log."""
    return f"{service}: no errors in the last {lines} lines"


@agent.tool_plain
def list_alerts(team: str) -> str:
    """List the open alerts of a team."""
    return f"{team} has 0 open alerts"
