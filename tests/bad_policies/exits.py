"""Policies that try to end prunecheck's process instead of returning a proposal."""

import os
import sys


def sys_exit(view, need):
    sys.exit(0)


def os_exit(view, need):
    os._exit(0)


def keyboard(view, need):
    raise KeyboardInterrupt


def generator_exit(view, need):
    raise GeneratorExit


def base_exception(view, need):
    raise BaseException("not an Exception")


def sys_exit_3(view, need):
    sys.exit(3)


def kill_self(view, need):
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def lazy_exit(view, need):
    yield view.messages[-1].id
    sys.exit(0)
