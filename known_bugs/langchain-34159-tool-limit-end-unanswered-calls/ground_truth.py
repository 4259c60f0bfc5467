"""Ground truth for langchain-ai/langchain#34159, with LangChain's own fake chat model.

The scenario of the report: the model answers the first message with three
parallel ``search`` calls, one more than the run's limit of 2.  With
``exit_behavior="end"`` the middleware blocks the third call with an error
``ToolMessage`` and jumps to the end of the run; on the buggy release the
other two calls get no ``ToolMessage`` at all, so the next turn sends an
assistant message whose ``tool_calls`` are not all answered (OpenAI: 400 "An
assistant message with 'tool_calls' must be followed by tool messages
responding to each 'tool_call_id'").

Exit 1: the bug happened (a request sent a call without its result); 0: it did
not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import asyncio
import runpy
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def unanswered(request: list[Any]) -> list[str]:
    """The ids of calls in ``request`` that no later ToolMessage answers."""
    from langchain_core.messages import AIMessage, ToolMessage

    answered = {m.tool_call_id for m in request if isinstance(m, ToolMessage)}
    return [
        call["id"]
        for m in request
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["id"] not in answered
    ]


async def main() -> int:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    replies = iter(
        [
            AIMessage(
                "",
                tool_calls=[
                    {"name": "search", "args": {"query": f"topic {i}"}, "id": f"call_{i}"}
                    for i in (1, 2, 3)
                ],
            ),
            AIMessage("Here is what I found."),
            AIMessage("Anything else?"),
        ]
    )
    requests: list[list[Any]] = []

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            requests.append(list(messages))
            self.messages = iter([next(replies)])
            return self._generate(messages, *args, **kwargs)

    factory = runpy.run_path(str(HERE / "agent.py"))["agent"]
    graph = factory(model=Model(messages=iter([])), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "user-1"}}
    await graph.ainvoke({"messages": [HumanMessage("Research topics 1, 2 and 3.")]}, config)
    await graph.ainvoke({"messages": [HumanMessage("Thanks. And topic 4?")]}, config)
    for n, request in enumerate(requests, 1):
        if missing := unanswered(request):
            print(f"reproduced: request #{n} sends {', '.join(missing)} without a result")
            return 1
    print(f"not reproduced: {len(requests)} requests, every call answered")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)
