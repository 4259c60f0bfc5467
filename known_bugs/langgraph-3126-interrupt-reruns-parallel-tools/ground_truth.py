"""Ground truth for langchain-ai/langgraph#3126, with LangChain's own fake chat model.

The scenario of the report: the model answers "(1) request assistance from a
human, and (2) search for the weather in Boston" with both tool calls at once.
``human_assistance`` interrupts; ``get_weather`` finishes.  The app resumes
the graph with the human's answer.  On the buggy release the one tool node
that ran both calls runs again from the start on resume, so ``get_weather``
(a side effect: a request to the weather service) runs a second time for the
same call.

Exit 1: the bug happened (a finished tool ran again for the same call); 0: it
did not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import asyncio
import runpy
import sys
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


async def main() -> int:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.types import Command

    replies = iter(
        [
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "human_assistance",
                        "args": {"query": "How do I build an AI agent?"},
                        "id": "call_1",
                    },
                    {"name": "get_weather", "args": {"location": "Boston, MA"}, "id": "call_2"},
                ],
            ),
            AIMessage("A human says: use LangGraph. It's sunny in Boston."),
        ]
    )

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            self.messages = iter([next(replies)])
            return self._generate(messages, *args, **kwargs)

    user = runpy.run_path(str(HERE / "agent.py"))
    _weather_first(user)
    graph = user["agent"](model=Model(messages=iter([])), checkpointer=MemorySaver())
    lookups: list[str] = user["weather_lookups"]
    config = {"configurable": {"thread_id": "1"}}
    question = (
        "Could you please (1) request assistance for building an AI agent from a human, "
        "and (2) search for the weather in Boston, MA? Generate two tool calls at once."
    )
    await graph.ainvoke({"messages": [HumanMessage(question)]}, config)
    state = await graph.aget_state(config)
    if not state.next:
        print("could not run: the graph did not stop at human_assistance's interrupt")
        return 2
    await graph.ainvoke(Command(resume={"data": "Use LangGraph."}), config)
    if len(lookups) > 1:
        print(f"reproduced: get_weather (call_2) ran {len(lookups)} times: {lookups}")
        return 1
    if not lookups:
        print("could not run: get_weather never ran")
        return 2
    print("not reproduced: get_weather (call_2) ran once")
    return 0


def _weather_first(user: dict[str, Any]) -> None:
    """The report's order: ``get_weather`` finishes, then ``human_assistance``
    interrupts.  The two sync tools run in threads of one node, so without
    this the interrupt can end the node before ``get_weather``'s thread has
    started (seen on a loaded machine: the buggy release then runs it once).
    ``human_assistance`` waits (at most 10 s) until ``get_weather`` has run
    once; the tools' own bodies are unchanged."""
    ran = threading.Event()
    weather, human = user["get_weather"], user["human_assistance"]
    weather_body, human_body = weather.func, human.func

    def get_weather(location: str) -> str:
        try:
            return str(weather_body(location))
        finally:
            ran.set()

    def human_assistance(query: str) -> str:
        ran.wait(timeout=10)
        return str(human_body(query))

    weather.func, human.func = get_weather, human_assistance


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)
