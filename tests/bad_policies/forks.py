"""A policy and a runtime that start a ``sleep 60`` child and leave it
running (issue 36: nothing a policy forks may outlive the command).  Each
writes its child's pid into a new file in the folder ``$FORK_PIDS``."""

from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Any

_started: list[subprocess.Popen[bytes]] = []


def _fork() -> None:
    if _started:  # one child per process
        return
    child = subprocess.Popen(["sleep", "60"])
    _started.append(child)
    fd, _ = tempfile.mkstemp(dir=os.environ["FORK_PIDS"], suffix=".pid")
    os.write(fd, str(child.pid).encode())
    os.close(fd)


def select(view: object, need: int) -> list[str]:
    _fork()
    return []


class Runtime:
    """Starts the child when built; sends nothing."""

    def __init__(self, budget: int = 0, hard_ceiling: int = 0) -> None:
        _fork()

    def feed(self, stimulus: object) -> None:
        pass

    def request(self) -> list[dict[str, Any]]:
        return []

    def executions(self) -> list[object]:
        return []
