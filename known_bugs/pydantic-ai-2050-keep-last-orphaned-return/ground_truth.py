"""Ground truth of pydantic-ai issue 2050, with pydantic-ai alone.

The model (a ``FunctionModel``, handed what a provider would receive: after
the history processors and pydantic-ai's own repair) calls ``get_weather`` and
then answers.  Exit 1 if any request holds a tool return whose call is not in
that request (the 400 of the issue), 0 if none does, 2 if it could not run.
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
    from pydantic_ai.messages import (
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import FunctionModel

    agent = _load_agent().agent
    orphans: list[str] = []
    requests: list[int] = []

    def model(messages: list[Any], info: Any) -> ModelResponse:
        calls = {p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
        for m in messages:
            for p in m.parts:
                answers = isinstance(p, ToolReturnPart) or (
                    isinstance(p, RetryPromptPart) and p.tool_name is not None
                )
                if answers and p.tool_call_id not in calls:
                    orphans.append(p.tool_call_id)
        requests.append(1)
        if len(requests) == 1:
            return ModelResponse(
                parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_1")]
            )
        return ModelResponse(parts=[TextPart("It is sunny in Paris.")])

    with agent.override(model=FunctionModel(model)):
        await agent.run("What is the weather in Paris?")
    if orphans:
        print(f"BUG: the model was sent tool return(s) {orphans} without their call")
        return 1
    print("ok: no request held a tool return without its call")
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
