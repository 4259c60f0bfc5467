"""Policies that are wrong in small ways the cage and the checks must name
(issue 19): a name that raises, negative sizes, a policy that changes the
current folder or forks a child that would outlive its worker."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable

from prunecheck.model.actions import Action, Clear, Summarize
from prunecheck.model.policies import ContextView, builtin_policy

_UNSAFE = builtin_policy("lowest_salience")


class BadName:
    """Its name property raises when read."""

    @property
    def name(self) -> str:
        raise RuntimeError("no name today")

    def select(self, view: ContextView, need: int) -> list[str]:
        return []


def negative_summary(view: ContextView, need: int) -> Iterable[str | Action]:
    ids = tuple(m.id for m in view.messages if m.role != "system")[:1]
    return [Summarize(ids, -5, "a summary of minus five tokens")] if ids else []


def negative_clear(view: ContextView, need: int) -> Iterable[str | Action]:
    return [Clear(m.id, -1) for m in view.messages if m.role == "tool"][:1]


def changes_directory(view: ContextView, need: int) -> Iterable[str | Action]:
    """Prunes as lowest_salience does, after moving to /."""
    os.chdir("/")
    assert _UNSAFE is not None
    return _UNSAFE.select(view, need)


def forks(view: ContextView, need: int) -> Iterable[str | Action]:
    """Starts a child that would sleep for ten minutes ($FORK_MARK gets its
    pid), then exits its own process."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.environ["FORK_MARK"], "w", encoding="utf-8") as f:
        f.write(str(child.pid))
    os._exit(0)
