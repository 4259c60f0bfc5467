"""pydantic-ai agents whose factory or history processor misbehaves, for the
cage's bad-input cases (tests/test_bad_inputs_load.py).  Factories take no
argument; each processor misbehaves at the first model request."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage


def _agent(processor: object) -> Agent[None, str]:
    made: Agent[None, str] = Agent(
        "openai:gpt-4o",
        capabilities=[ProcessHistory(processor)],  # type: ignore[arg-type]
    )

    @made.tool_plain
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"{city}: sunny"

    return made


# ------------------------------------------------------------ factories
def factory_raises() -> Agent[None, str]:
    raise ValueError("no configuration file")


def factory_exits() -> Agent[None, str]:
    sys.exit(5)


def factory_os_exits() -> Agent[None, str]:
    os._exit(6)


def factory_interrupts() -> Agent[None, str]:
    raise KeyboardInterrupt


# ------------------------------------------------- history processors
# async: they run on the event loop's thread (pydantic-ai runs a sync one in a
# worker thread of its own, which would outlive an in-process test)
async def _exits(messages: list[ModelMessage]) -> list[ModelMessage]:
    sys.exit(7)


async def _os_exits(messages: list[ModelMessage]) -> list[ModelMessage]:
    os._exit(8)


async def _interrupts(messages: list[ModelMessage]) -> list[ModelMessage]:
    raise KeyboardInterrupt


async def _hangs(messages: list[ModelMessage]) -> list[ModelMessage]:
    time.sleep(30)  # blocks the event loop; the cage's alarm ends it first
    return messages


async def _threads(messages: list[ModelMessage]) -> list[ModelMessage]:
    seconds = float(os.environ.get("POLLER_SECONDS", "600"))
    threading.Thread(target=time.sleep, args=(seconds,), name="user-poller").start()
    return messages


async def _forks(messages: list[ModelMessage]) -> list[ModelMessage]:
    helper = subprocess.Popen(["sleep", "600"])
    mark = os.environ.get("HELPER_PIDS")
    if mark:
        with Path(mark).open("a") as f:
            f.write(f"{helper.pid}\n")
    return messages


exits_in_run = _agent(_exits)
os_exits_in_run = _agent(_os_exits)
interrupts_in_run = _agent(_interrupts)
hangs_in_run = _agent(_hangs)
leaves_a_thread = _agent(_threads)
forks_a_helper = _agent(_forks)


async def _ctrl_c(messages: list[ModelMessage]) -> list[ModelMessage]:
    os.kill(os.getpid(), signal.SIGINT)  # as if the user pressed Ctrl-C now
    time.sleep(5)
    return messages


ctrl_c_in_run = _agent(_ctrl_c)
