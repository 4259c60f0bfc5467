"""The plain wrapper: a message-list trimmer behind the commit gate.

``keep_last`` (the system prompt and the last 4 messages) cuts tool units
in two.  ``ListGuard`` wraps it: it reads the structure from the list (a
call without its result is pending), asks ``keep_last`` what to drop, and
lets only whole, closed units go.  The same works for Anthropic lists
(``format="anthropic"``).

    python examples/openai_list_guard.py
    prunecheck check examples/openai_list_guard.py:trim@openai

A list cannot show a result that is still streaming: ``prunecheck check``
finds exactly that (a partial result looks complete and is pruned
mid-stream).  Feed ``CommitGuard`` your runtime's events to close that gap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prunecheck.guard import HardCeilingExceeded, ListGuard

Msg = dict[str, Any]


def keep_last(messages: list[Msg]) -> list[Msg]:
    system = [m for m in messages if m["role"] == "system"]
    return system + [m for m in messages if m["role"] != "system"][-4:]


GUARD = ListGuard(keep_last, format="openai", budget=32_000)


def trim(messages: list[Msg], max_tokens: int, token_counter: Callable[[Any], int]) -> list[Msg]:
    """``keep_last`` behind the commit gate, at the runtime's budget."""
    GUARD.budget, GUARD.count = max_tokens, token_counter
    try:
        return GUARD(messages)
    except HardCeilingExceeded as exc:  # over the ceiling: the safe list, over budget
        return list(exc.messages or messages)


def main() -> None:
    def call(cid: str, path: str) -> Msg:
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "read_file", "arguments": f'{{"path": "{path}"}}'},
        }

    history = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "fix the bug " * 50},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "a.txt"), call("c2", "b.txt")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a " * 300},
        {"role": "tool", "tool_call_id": "c2", "content": "b " * 300},
        {"role": "assistant", "content": "Both read; now the test."},
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": None, "tool_calls": [call("c3", "tests")]},
    ]
    guard = ListGuard(keep_last, format="openai", budget=400, hard_ceiling=1000)
    print(
        "keep_last alone keeps:", [m.get("tool_call_id") or m["role"] for m in keep_last(history)]
    )
    kept = guard(history)
    print(
        "behind the guard     :",
        [m.get("tool_call_id") or m["role"] for m in kept],
        "— deferred:",
        guard.last_plan.deferred if guard.last_plan else None,
    )
    history.append({"role": "tool", "tool_call_id": "c3", "content": "ok"})
    kept = guard(history)
    print("c3 answered          :", [m.get("tool_call_id") or m["role"] for m in kept])
    history = [
        *kept,
        {"role": "user", "content": "and again " * 600},
        {"role": "assistant", "content": None, "tool_calls": [call("c4", "x")]},
    ]
    try:
        guard(history)
    except HardCeilingExceeded as exc:  # deferral cannot meet the ceiling: fail loudly
        print("over the ceiling     :", exc.used, ">", exc.ceiling, "pending", exc.pending)


if __name__ == "__main__":
    main()
