"""AutoGen: a chat completion context that prunes only at commit boundaries.

Runs offline with ``autogen-core`` alone: the loop below is what an AutoGen
agent does with its model context — add each message, ``get_messages()``
before every model call.  The trimmer (keep the newest messages that fit)
is blind to tool structure; ``GuardedChatCompletionContext`` defers while a
call is in flight and otherwise drops whole units only::

    pip install 'prunecheck[autogen]'
    python examples/autogen_context.py
"""

from __future__ import annotations

import asyncio
import json

from autogen_core import FunctionCall
from autogen_core.models import (
    AssistantMessage,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    SystemMessage,
    UserMessage,
)

from prunecheck.guard.autogen import GuardedChatCompletionContext


def words(message: LLMMessage) -> int:
    content = message.content
    if isinstance(content, list):
        return sum(
            len(str(getattr(c, "content", getattr(c, "arguments", ""))).split()) + 1
            for c in content
        )
    return len(str(content).split())


def keep_newest(messages: list[LLMMessage], max_tokens: int) -> list[LLMMessage]:
    """Keep the system message and the newest messages that fit."""
    kept: list[LLMMessage] = []
    used = sum(words(m) for m in messages if isinstance(m, SystemMessage))
    for m in reversed(messages):
        if isinstance(m, SystemMessage):
            continue
        if used + words(m) > max_tokens:
            break
        kept.insert(0, m)
        used += words(m)
    return [m for m in messages if isinstance(m, SystemMessage)] + kept


def show(step: str, messages: list[LLMMessage]) -> None:
    print(f"{step}: " + ", ".join(f"{type(m).__name__}({words(m)})" for m in messages))


async def main() -> list[list[LLMMessage]]:
    context = GuardedChatCompletionContext(
        keep_newest, budget=100, hard_ceiling=400, store=":memory:", token_counter=words
    )
    seen = []
    await context.add_message(SystemMessage(content="You are a coding agent."))
    await context.add_message(UserMessage(content="context " * 90, source="user"))
    await context.add_message(UserMessage(content="read a.txt and b.txt", source="user"))
    calls = [
        FunctionCall(id="call_1", name="read_file", arguments=json.dumps({"path": "a.txt"})),
        FunctionCall(id="call_2", name="read_file", arguments=json.dumps({"path": "b.txt"})),
    ]
    await context.add_message(AssistantMessage(content=calls, source="agent"))
    seen.append(await context.get_messages())
    show("calls in flight (defer)", seen[-1])
    results = [
        FunctionExecutionResult(call_id=c.id, name=c.name, is_error=False, content="data " * 40)
        for c in calls
    ]
    await context.add_message(FunctionExecutionResultMessage(content=results))
    seen.append(await context.get_messages())
    show("results in (prune whole units)", seen[-1])
    await context.add_message(AssistantMessage(content="a.txt and b.txt agree.", source="agent"))
    await context.add_message(UserMessage(content="now fix it " * 10, source="user"))
    seen.append(await context.get_messages())
    show("next turn", seen[-1])
    return seen


if __name__ == "__main__":
    asyncio.run(main())
