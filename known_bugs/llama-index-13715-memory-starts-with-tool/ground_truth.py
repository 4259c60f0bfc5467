"""Ground truth for run-llama/llama_index#13715, with LlamaIndex alone.

The scenario of the report: the agent answers each question with parallel
tool calls (``multiply`` and ``add`` at once) and the conversation grows past
the memory's 1,500 tokens.  Each time, ``ChatMemoryBuffer.get()`` drops the
oldest messages until the rest fit; on the buggy release, when the cut falls on
the first of two tool results it steps over one of them only and returns a
history that starts with a ``tool`` message whose assistant ``tool_calls``
message it dropped (OpenAI: 400 "messages with role 'tool' must be a
response to a preceeding message with 'tool_calls'").

LlamaIndex's test model (``MockLLM``) makes no tool calls and ``OpenAIAgent``
needs an ``OpenAI`` model, so the turns are
played into the user's agent's own memory as ``OpenAIAgent`` records them
(``additional_kwargs["tool_calls"]`` on the assistant message,
``tool_call_id`` and ``name`` on each tool message), running the user's tool
functions, and every request is what ``memory.get()`` returns, as the agent
sends it.

Exit 1: the bug happened (a request would start with a tool result whose call
is gone); 0: it did not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TURNS = 12


def orphaned(request: list[Any]) -> list[str]:
    """Ids of tool messages in ``request`` that no earlier assistant message called."""
    called: set[str] = set()
    found = []
    for m in request:
        for call in m.additional_kwargs.get("tool_calls") or []:
            called.add(call["id"])
        if m.role.value == "tool" and m.additional_kwargs["tool_call_id"] not in called:
            found.append(m.additional_kwargs["tool_call_id"])
    return found


def main() -> int:
    from llama_index.core.llms import ChatMessage, MessageRole

    user = runpy.run_path(str(HERE / "agent.py"))
    memory = user["agent"]().memory  # no model call is made: only its memory is used
    tools = {"multiply": user["multiply"], "add": user["add"]}
    for turn in range(1, TURNS + 1):
        memory.put(
            ChatMessage(
                role=MessageRole.USER,
                content=f"Question {turn}: what are {turn} x 7 and {turn} + 7? " + "Explain. " * 40,
            )
        )
        request = memory.get()
        if missing := orphaned(request):
            print(f"reproduced: request #{turn} starts with the result of {', '.join(missing)}")
            return 1
        calls = [
            {"id": f"call_{turn}_{name}", "name": name, "arguments": f'{{"a": {turn}, "b": 7}}'}
            for name in tools
        ]
        memory.put(
            ChatMessage(
                role=MessageRole.ASSISTANT,
                content=None,
                additional_kwargs={
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]},
                        }
                        for c in calls
                    ]
                },
            )
        )
        for c in calls:
            memory.put(
                ChatMessage(
                    role=MessageRole.TOOL,
                    content=str(tools[c["name"]](a=turn, b=7)),
                    additional_kwargs={"tool_call_id": c["id"], "name": c["name"]},
                )
            )
        request = memory.get()
        if missing := orphaned(request):
            print(f"reproduced: request #{turn} starts with the result of {', '.join(missing)}")
            return 1
        memory.put(
            ChatMessage(
                role=MessageRole.ASSISTANT,
                content=f"{turn} x 7 = {turn * 7} and {turn} + 7 = {turn + 7}. " + "Indeed. " * 40,
            )
        )
    print(f"not reproduced: {2 * TURNS} requests, none starts with an orphaned tool result")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)
