"""Runtimes under test that misbehave, one way each (issue 19).

``Keeper`` is a correct minimal runtime (it keeps every message and never
prunes); each other class breaks the protocol in one way, on its first
tool call (so that the run reaches a batch before it fails).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from prunecheck.runtime import Execution, Rejected, Stimulus


class Keeper:
    """Keeps every message; executes every call once."""

    def __init__(self, budget: int = 0, hard_ceiling: int = 0) -> None:
        self.messages: list[dict[str, Any]] = []
        self.results: dict[str, dict[str, Any]] = {}
        self.executed: list[Execution] = []

    def feed(self, st: Stimulus | Rejected) -> None:
        if isinstance(st, Rejected):
            return
        if st.kind in ("system", "user"):
            self.messages.append({"role": st.kind, "content": st.text})
        elif st.kind == "assistant":
            self.messages.append({"role": "assistant", "content": st.text})
        elif st.kind == "batch":
            self.on_calls(st)
            self.messages.append(
                {
                    "role": "assistant",
                    "content": st.text,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {
                                "name": c.tool,
                                "arguments": json.dumps(dict(c.arguments)),
                            },
                        }
                        for c in st.calls
                    ],
                }
            )
            for c in st.calls:
                self.executed.append(Execution(c.id, c.tool, c.arguments.get("path", ""), c.effect))
        elif st.kind in ("result", "failure"):
            found = self.results.get(st.id)
            if found is None:
                found = self.results[st.id] = {
                    "role": "tool",
                    "tool_call_id": st.id,
                    "content": st.text,
                }
                self.messages.append(found)
            else:
                found["content"] += " " + st.text
        elif st.kind == "session":
            self.messages, self.results = [], {}

    def on_calls(self, st: Stimulus) -> None:
        """What a misbehaving subclass does on its first tool call."""

    def request(self) -> Sequence[Mapping[str, Any]]:
        return self.messages

    def executions(self) -> Sequence[Execution]:
        return self.executed


class SysExit(Keeper):
    def on_calls(self, st: Stimulus) -> None:
        sys.exit(0)


class OsExit(Keeper):
    def on_calls(self, st: Stimulus) -> None:
        os._exit(0)


class Raises(Keeper):
    def on_calls(self, st: Stimulus) -> None:
        raise ValueError("the runtime broke")


class Keyboard(Keeper):
    def on_calls(self, st: Stimulus) -> None:
        raise KeyboardInterrupt


class Base(Keeper):
    def on_calls(self, st: Stimulus) -> None:
        raise BaseException("a bare BaseException")


class Garbage(Keeper):
    """request() returns a number once a call is issued."""

    def request(self) -> Any:
        return 42 if self.executed else self.messages


class NoRole(Keeper):
    """request() returns dicts without a role once a call is issued."""

    def request(self) -> Any:
        return [{"content": "x"}] if self.executed else self.messages


class BadExecutions(Keeper):
    def executions(self) -> Any:
        return ["ran c1"] if self.executed else []


class Hangs(Keeper):
    """request() never returns once a call is issued."""

    def request(self) -> Any:
        while self.executed:
            time.sleep(0.05)
        return self.messages


class Forks(Keeper):
    """Starts a child that would outlive it, then hangs; the child's pid is
    written to $FORK_MARK."""

    def on_calls(self, st: Stimulus) -> None:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(os.environ["FORK_MARK"], "w", encoding="utf-8") as f:
            f.write(str(child.pid))
        while True:
            time.sleep(0.05)


class ChangesDirectory(Keeper):
    """Changes the current folder on every stimulus."""

    def feed(self, st: Stimulus | Rejected) -> None:
        os.chdir("/")
        super().feed(st)


class InitExits(Keeper):
    def __init__(self, budget: int = 0, hard_ceiling: int = 0) -> None:
        sys.exit(3)
