"""Ground truth for langchain-ai/langchain#34282, with LangChain's own fake chat model.

The scenario of the report ("Read these files"): the model answers with one
assistant message that reads 12 files in parallel.  Their contents take the
history past the 4,000-token threshold, so before the next model call
``SummarizationMiddleware`` summarizes all but the last 6 messages.  The cut
falls among the 12 ``ToolMessage``s; on the buggy release the middleware looks
for the assistant message that issued them only within 5 messages of the cut,
does not find it, and keeps 6 tool results whose call was summarized away
(OpenAI: 400 "No tool call found for function call output with call_id ...").

Exit 1: the bug happened (a request sent a tool result without its call); 0:
it did not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import asyncio
import runpy
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FILES = 12


def orphaned(request: list[Any]) -> list[str]:
    """The ids of ToolMessages in ``request`` that no earlier AIMessage called."""
    from langchain_core.messages import AIMessage, ToolMessage

    called: set[str] = set()
    found = []
    for m in request:
        if isinstance(m, AIMessage):
            called |= {call["id"] for call in m.tool_calls}
        elif isinstance(m, ToolMessage) and m.tool_call_id not in called:
            found.append(m.tool_call_id)
    return found


async def main(folder: Path) -> int:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    paths = []
    for i in range(1, FILES + 1):
        path = folder / f"module_{i}.py"
        path.write_text(f"# module {i}\n" + "x = 1\n" * 350)  # about 2,100 characters
        paths.append(str(path))
    read_all = AIMessage(
        "I'll read all the files.",
        tool_calls=[
            {"name": "read_file", "args": {"path": p}, "id": f"call_{i}"}
            for i, p in enumerate(paths, 1)
        ],
    )
    agent_replies = iter([read_all, AIMessage("The modules all set x = 1.")])
    requests: list[list[Any]] = []

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _reply(self, messages: list[Any]) -> AIMessage:
            if len(messages) == 1 and "summar" in str(messages[0].content).lower():
                return AIMessage("Summary: the user asked to read the modules.")
            requests.append(list(messages))
            return next(agent_replies)

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.messages = iter([self._reply(messages)])
            return super()._generate(messages, *args, **kwargs)

        async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            return self._generate(messages, *args, **kwargs)

    factory = runpy.run_path(str(HERE / "agent.py"))["agent"]
    graph = factory(model=Model(messages=iter([])), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "user-1"}}
    await graph.ainvoke(
        {"messages": [HumanMessage("Read these files and summarize them.")]}, config
    )
    for n, request in enumerate(requests, 1):
        if missing := orphaned(request):
            print(
                f"reproduced: request #{n} sends results of {', '.join(missing)} without their call"
            )
            return 1
    if len(requests) < 2:
        print(f"could not run: the agent sent {len(requests)} request(s), expected 2")
        return 2
    print(f"not reproduced: {len(requests)} requests, every result has its call")
    return 0


if __name__ == "__main__":
    try:
        with tempfile.TemporaryDirectory() as folder:
            sys.exit(asyncio.run(main(Path(folder))))
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)
