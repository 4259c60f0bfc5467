"""Ground truth for microsoft/autogen#3178 (AutoGen 0.2), with AutoGen alone.

The scenario of the report: the user asks the calculator assistant for
``(44232 + 13312 / (232 - 32)) * 5``; the assistant calls ``calculator`` one
step at a time and the user proxy answers each call.  Before each reply the
assistant's ``MessageHistoryLimiter(max_messages=3)`` keeps the last 3
messages; on the buggy release it keeps a tool response whose assistant
``tool_calls`` message it dropped (OpenAI: 400 "messages with role 'tool'
must be a response to a preceeding message with 'tool_calls'").

AutoGen 0.2 has no scripted model; the conversation is played as AutoGen
records it (``assistant.chat_messages``): the model's tool-call replies as the
assistant's messages, the proxy's executions of the user's ``calculator`` as
tool responses.  Before each reply the history goes through the hook AutoGen
itself runs, ``process_all_messages_before_reply``.

Exit 1: the bug happened (a request would send a tool result without its
call); 0: it did not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STEPS = [(232, 32, "-"), (13312, 200, "/"), (44232, 66, "+"), (44298, 5, "*")]


def orphaned(request: list[dict[str, Any]]) -> list[str]:
    """Ids of tool messages in ``request`` that no earlier assistant message called."""
    called: set[str] = set()
    found = []
    for m in request:
        called |= {c["id"] for c in m.get("tool_calls") or []}
        if m.get("role") == "tool" and m["tool_call_id"] not in called:
            found.append(m["tool_call_id"])
    return found


def main() -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        user = runpy.run_path(str(HERE / "agent.py"))
    assistant, calculator = user["assistant"], user["calculator"]
    history: list[dict[str, Any]] = [
        {"role": "user", "name": "User", "content": "What is (44232 + 13312 / (232 - 32)) * 5?"}
    ]
    for n, (a, b, op) in enumerate(STEPS, 1):
        with contextlib.redirect_stdout(io.StringIO()):
            request = assistant.process_all_messages_before_reply(list(history))
        if missing := orphaned(request):
            print(f"reproduced: request #{n} sends the result of {', '.join(missing)} alone")
            return 1
        call_id = f"call_{n}"
        arguments = {"a": a, "b": b, "operator": op}
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "calculator", "arguments": json.dumps(arguments)},
                    }
                ],
            }
        )
        history.append(
            {"role": "tool", "tool_call_id": call_id, "content": str(calculator(**arguments))}
        )
    print(f"not reproduced: {len(STEPS)} requests, every tool result has its call")
    return 0


if __name__ == "__main__":
    try:
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)  # AutoGen 0.2 writes its disk cache (.cache/) to the working folder
            sys.exit(main())
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)
