"""Ground truth of openai-agents issue 3004, with the SDK alone.

A scripted ``Model`` answers the first request (response ``resp_1``) with two
parallel calls: ``run_cleanup`` (needs approval) and ``run_diagnostic`` (runs at
once).  The run stops for the approval; the human rejects the cleanup and the
run resumes from its state on ``resp_1``.  Exit 1 if the resumed request lacks
the diagnostic's function_call_output (the server holds the call, so the
Responses API answers 400: the bug), 0 if it carries it, 2 if it could not run.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
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
    from agents import Runner, set_tracing_disabled
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

    def call(call_id: str, name: str, args: str) -> Any:
        return ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=name, arguments=args, id=f"fc_{call_id}"
        )

    text = ResponseOutputMessage(
        id="msg",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text="Done.", annotations=[])],
    )
    script = [
        [
            call("call_CLEAN", "run_cleanup", '{"target": "temp_files"}'),
            call("call_DIAG", "run_diagnostic", '{"check_name": "thermal"}'),
        ],
        [text],
        [text],
    ]

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            seen.append(list(input) if isinstance(input, list) else [input])
            n = len(seen)
            return ModelResponse(output=script.pop(0), usage=Usage(), response_id=f"resp_{n}")

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    agent = _load_agent().agent.clone(model=Scripted())
    first = await Runner.run(
        agent, "Clean temp files and run the thermal check.", auto_previous_response_id=True
    )
    if not first.interruptions:
        print("cannot run: the run did not stop for the cleanup's approval")
        return 2
    state = first.to_state()
    for interruption in first.interruptions:
        state.reject(interruption)
    await Runner.run(agent, state)
    resumed = [i for i in seen[-1] if isinstance(i, dict)]
    outputs = {i.get("call_id") for i in resumed if i.get("type") == "function_call_output"}
    if "call_DIAG" not in outputs:
        print(f"BUG: the resumed request lacks run_diagnostic's output (it sent {sorted(outputs)})")
        return 1
    print("ok: the resumed request carries run_diagnostic's output")
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
