"""Ground truth of strands issue 2085, with Strands alone.

A scripted ``Model`` (Strands' model interface) calls ``roll_dice`` and then
answers; the agent's own sliding window manages the conversation after the
turn.  A second message follows.  Exit 1 if the model is handed a conversation
whose first message is not the user's (the ValidationException of the issue),
0 if every request starts with the user, 2 if it could not run.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _load_agent() -> Any:
    os.environ.setdefault(
        "AWS_DEFAULT_REGION", "us-east-1"
    )  # the Bedrock client is built, never called
    spec = importlib.util.spec_from_file_location("bug_agent", HERE / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scenario() -> int:
    from strands.models.model import Model

    first_roles: list[str] = []
    turns = iter(["tool", "text", "text", "text"])

    class Scripted(Model):
        def update_config(self, **model_config: Any) -> None:
            pass

        def get_config(self) -> Any:
            return {}

        def structured_output(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

        async def stream(self, messages: Any, *a: Any, **k: Any) -> AsyncIterator[Any]:
            first_roles.append(messages[0]["role"])
            yield {"messageStart": {"role": "assistant"}}
            if next(turns) == "tool":
                start = {"toolUse": {"toolUseId": "call_1", "name": "roll_dice"}}
                yield {"contentBlockStart": {"start": start}}
                yield {"contentBlockDelta": {"delta": {"toolUse": {"input": '{"sides": 6}'}}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
            else:
                yield {"contentBlockDelta": {"delta": {"text": "Done."}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}

    agent = _load_agent().agent
    agent.model = Scripted()
    agent("Roll a die for me")
    agent("Thanks, what did I get?")
    if any(role != "user" for role in first_roles):
        print(f"BUG: the model was sent a conversation starting with {first_roles}")
        return 1
    print("ok: every request started with the user's message")
    return 0


def main() -> int:
    try:
        import strands  # noqa: F401
    except ImportError as exc:
        print(f"cannot run: {exc}")
        return 2
    try:
        return scenario()
    except Exception as exc:  # the scenario itself broke: no verdict on the bug
        print(f"cannot run: could not play the scenario: {type(exc).__name__}: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
