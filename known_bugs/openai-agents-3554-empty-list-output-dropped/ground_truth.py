"""Ground truth of openai-agents PR 3554, with the SDK alone.

A scripted ``Model`` calls ``search_orders``, whose body (the agent's own)
returns an empty list, then answers.  Exit 1 if the second request's
function_call_output carries nothing (an empty list of content parts: the
tool's answer is gone), 0 if it carries the result, 2 if it could not run.
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
    script = [
        [
            ResponseFunctionToolCall(
                type="function_call",
                call_id="call_1",
                name="search_orders",
                arguments='{"customer": "ada"}',
                id="fc_1",
            )
        ],
        [
            ResponseOutputMessage(
                id="msg",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text="None.", annotations=[])],
            )
        ],
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
    await Runner.run(agent, "Does ada have open orders?")
    outputs = [
        i.get("output")
        for i in seen[-1]
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]
    if not outputs:
        print("cannot run: the second request carries no function_call_output")
        return 2
    if any(isinstance(o, list | tuple) and len(o) == 0 for o in outputs):
        print(f"BUG: search_orders's empty result reached the model as {outputs!r}")
        return 1
    print(f"ok: search_orders's result reached the model as {outputs!r}")
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
