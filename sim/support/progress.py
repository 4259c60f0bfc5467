"""Progress on a terminal: what runs, how far it got, how long is left.

Long commands (``check``, ``search``, ``explore``) report through a
:class:`Progress`.  The base class is silent; :func:`progress_for` returns
a :class:`TerminalProgress` (a tqdm bar on stderr) only when stderr is a
terminal, so piped output and logs stay byte-identical run to run.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from typing import IO, Any

__all__ = ["Progress", "TerminalProgress", "progress_for"]


class Progress:
    """Silent progress: the interface every command reports through."""

    def start(self, total: int, what: str = "tasks") -> None:
        """``total`` tasks (or, with ``what="runs"``, runs of one task) are
        about to run."""

    def step(self, label: str) -> None:
        """The next task, named ``label``, starts (the one before is done)."""

    def runs(self, total: int) -> Callable[[int], None] | None:
        """A callback for a task's runs (called with the runs so far), or None."""
        return None

    def close(self) -> None:
        """Everything is done (or stopped)."""


class TerminalProgress(Progress):
    """A tqdm bar on ``stream``, showing the task, its runs, the time left
    to ``deadline`` (a :func:`time.monotonic` instant) if there is one."""

    def __init__(self, stream: IO[str], deadline: float | None = None) -> None:
        self.stream = stream
        self.deadline = deadline
        self.bar: Any = None
        self.started = False
        self.counts_runs = False

    def start(self, total: int, what: str = "tasks") -> None:
        from tqdm import tqdm

        # A terminal that reports no size (a bare pty) gets 100 × 20.
        self.counts_runs = what == "runs"
        size = shutil.get_terminal_size((100, 20))
        self.bar = tqdm(
            total=total,
            file=self.stream,
            unit=" " + what,
            leave=False,
            ncols=size.columns or 100,
            nrows=size.lines or 20,
        )

    def step(self, label: str) -> None:
        if self.bar is None:
            return
        if self.started:
            self.bar.update(1)
        self.started = True
        self.bar.set_description_str(label)
        self._limit()

    def runs(self, total: int) -> Callable[[int], None] | None:
        def tell(done: int) -> None:
            if self.bar is not None and (done % 5 == 0 or done == total):
                if self.counts_runs:  # the bar itself counts runs
                    self.bar.n = min(done, self.bar.total)
                runs = f"run {done}/{total}" if done <= total else f"run {done}"
                self.bar.set_postfix_str(runs + self._left())

        return tell

    def _left(self) -> str:
        if self.deadline is None:
            return ""
        return f", time limit in {max(0.0, self.deadline - time.monotonic()):.0f} s"

    def _limit(self) -> None:
        if self.deadline is not None and self.bar is not None:
            self.bar.set_postfix_str(self._left().lstrip(", "))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def progress_for(time_limit: float | None = None, stream: IO[str] | None = None) -> Progress:
    """A terminal bar on ``stream`` (stderr) if it is a terminal, else silence."""
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        return Progress()
    deadline = None if time_limit is None else time.monotonic() + time_limit
    return TerminalProgress(out, deadline)
