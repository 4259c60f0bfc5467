"""Policies that try to end prunecheck's process instead of returning a proposal."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView


def sys_exit(view: ContextView, need: int) -> NoReturn:
    sys.exit(0)


def os_exit(view: ContextView, need: int) -> NoReturn:
    os._exit(0)


def keyboard(view: ContextView, need: int) -> NoReturn:
    raise KeyboardInterrupt


def generator_exit(view: ContextView, need: int) -> NoReturn:
    raise GeneratorExit


def base_exception(view: ContextView, need: int) -> NoReturn:
    raise BaseException("not an Exception")


def sys_exit_3(view: ContextView, need: int) -> NoReturn:
    sys.exit(3)


def kill_self(view: ContextView, need: int) -> None:
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def lazy_exit(view: ContextView, need: int) -> Iterator[str]:
    yield view.messages[-1].id
    sys.exit(0)
