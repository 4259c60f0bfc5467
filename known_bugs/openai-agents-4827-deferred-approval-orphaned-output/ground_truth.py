"""Ground truth of openai-agents issue 4827, with the SDK alone.

On a session, a scripted ``Model`` calls ``delete_file`` (needs approval); the
run stops for it, the human approves, the run resumes from its state, the tool
runs and the model answers.  A new message follows on the same session.  Exit
1 if that request carries a function_call_output whose function_call the
session never kept (the 400 of the issue), 0 if every output has its call, 2
if the scenario could not run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load_agent() -> Any:
    spec = importlib.util.spec_from_file_location("bug_agent", HERE / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def scenario() -> int:
    from agents import Runner, SQLiteSession, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)
    seen: list[list[Any]] = []

    def text(t: str) -> Any:
        return ResponseOutputMessage(
            id="msg",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=t, annotations=[])],
        )

    script = [
        [
            ResponseFunctionToolCall(
                type="function_call",
                call_id="call_DEL",
                name="delete_file",
                arguments='{"path": "old.txt"}',
                id="fc_DEL",
            )
        ],
        [text("Deleted old.txt.")],
        [text("You're welcome.")],
    ]

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            seen.append(list(input) if isinstance(input, list) else [input])
            return ModelResponse(output=script.pop(0), usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    agent = _load_agent().agent.clone(model=Scripted())
    with tempfile.TemporaryDirectory() as tmp:
        session = SQLiteSession("user-1", str(Path(tmp) / "files.db"))
        first = await Runner.run(agent, "Delete old.txt", session=session)
        if not first.interruptions:
            print("cannot run: the run did not stop for delete_file's approval")
            return 2
        state = first.to_state()
        for interruption in first.interruptions:
            state.approve(interruption)
        await Runner.run(agent, state, session=session)
        await Runner.run(agent, "Thanks", session=session)
        session.close()
    last = [i for i in seen[-1] if isinstance(i, dict)]
    calls = {i.get("call_id") for i in last if i.get("type") == "function_call"}
    orphans = [
        i.get("call_id")
        for i in last
        if i.get("type") == "function_call_output" and i.get("call_id") not in calls
    ]
    if orphans:
        print(f"BUG: the next request carries function_call_output {orphans} without its call")
        return 1
    print("ok: every function_call_output of the next request has its call")
    return 0


def main() -> int:
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        print(f"cannot run: {exc}")
        return 2
    try:
        return asyncio.run(scenario())
    except Exception as exc:  # the scenario itself broke: no verdict on the bug
        print(f"cannot run: could not play the scenario: {type(exc).__name__}: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
