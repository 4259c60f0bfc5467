"""Ground truth of pydantic-ai issue 7977, with pydantic-ai alone.

The model (a ``FunctionModel``) calls ``run_tests``; while that first and only
tool runs, the application cancels the run (``AgentRun.cancel()``) and keeps
``RunCancelled.all_messages()``.  The user then sends a new message with that
history.  Exit 1 if the new message is refused (``UserError``: unprocessed
tool calls) or the model is sent the call without an answer (the bug), 0 if
the conversation goes on with the call answered, 2 if it could not run.
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
    from pydantic_ai.exceptions import RunCancelled, UserError
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    agent = _load_agent().agent
    started = asyncio.Event()
    sent: list[list[Any]] = []

    def model(messages: list[Any], info: Any) -> ModelResponse:
        sent.append(list(messages))
        if len(sent) == 1:
            return ModelResponse(
                parts=[ToolCallPart("run_tests", {"target": "tests/"}, tool_call_id="call_1")]
            )
        return ModelResponse(parts=[TextPart("ok")])

    async def slow_tests(target: str) -> str:
        started.set()
        await asyncio.sleep(3600)
        return "passed"

    history: list[Any] = []
    with agent.override(model=FunctionModel(model)):
        tool = agent._function_toolset.tools["run_tests"]
        original = tool.function
        tool.function = slow_tests
        tool.function_schema.function = slow_tests
        try:
            async with agent.iter("Run the tests") as run:

                async def cancel_when_started() -> None:
                    await started.wait()
                    run.cancel()

                canceller = asyncio.create_task(cancel_when_started())
                try:
                    async for _node in run:
                        pass
                except RunCancelled as exc:
                    history = list(exc.all_messages())
                canceller.cancel()
        except RunCancelled as exc:
            history = list(exc.all_messages())
        finally:
            tool.function = original
            tool.function_schema.function = original
        if not history:
            print("cannot run: the run was not cancelled during the tool")
            return 2
        try:
            await agent.run("Never mind, read README.md instead", message_history=history)
        except UserError as exc:
            print(f"BUG: the cancelled run's history refuses a new prompt: {exc}")
            return 1
    last = sent[-1]
    answered = {p.tool_call_id for m in last for p in m.parts if isinstance(p, ToolReturnPart)}
    if "call_1" not in answered:
        print("BUG: the model was sent run_tests's call without an answer")
        return 1
    print("ok: the cancelled call is answered and the conversation goes on")
    return 0


def main() -> int:
    try:
        import pydantic_ai  # noqa: F401
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
