"""Ground truth of openai-agents issue 2426, with the SDK alone.

A streamed run on a session: the model calls ``refund_order``, then answers.
A second streamed message on the same session.  Exit 1 if the second turn's
model input lacks the first turn's function_call or function_call_output (the
refund happened, and the model no longer sees it: the bug), 0 if it has both,
2 if the scenario could not run.
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
        Response,
        ResponseCompletedEvent,
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
                call_id="call_1",
                name="refund_order",
                arguments='{"order_id": "42"}',
                id="fc_1",
            )
        ],
        [text("Order 42 is refunded.")],
        [text("You are welcome.")],
    ]

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            seen.append(list(input) if isinstance(input, list) else [input])
            return ModelResponse(output=script.pop(0), usage=Usage(), response_id=None)

        async def stream_response(
            self, system_instructions: Any, input: Any, *a: Any, **k: Any
        ) -> Any:
            seen.append(list(input) if isinstance(input, list) else [input])
            output = script.pop(0)
            response = Response(
                id="resp",
                created_at=0,
                model="scripted",
                object="response",
                output=output,
                parallel_tool_calls=True,
                tool_choice="auto",
                tools=[],
            )
            yield ResponseCompletedEvent(
                type="response.completed", response=response, sequence_number=0
            )

    agent = _load_agent().agent.clone(model=Scripted())
    with tempfile.TemporaryDirectory() as tmp:
        session = SQLiteSession("user-1", str(Path(tmp) / "chats.db"))
        for message in ("Please refund order 42", "Thanks!"):
            result = Runner.run_streamed(agent, message, session=session)
            async for _event in result.stream_events():
                pass
        session.close()
    last = [i for i in seen[-1] if isinstance(i, dict)]
    kinds = {(i.get("type"), i.get("call_id")) for i in last}
    missing = [t for t in ("function_call", "function_call_output") if (t, "call_1") not in kinds]
    if missing:
        print(f"BUG: the second turn's input lacks the refund's {' and '.join(missing)}")
        return 1
    print("ok: the second turn sees the refund's call and output")
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
