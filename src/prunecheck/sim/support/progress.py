"""Progress: what runs, how far it got, how long is left.

Long commands (``check``, ``search``, ``explore``, ``replay``, ``import``,
``sweep``, ``report``) report through a :class:`Progress`.  The base class
is silent; :func:`progress_for` returns

- a :class:`TerminalProgress` (a tqdm bar on stderr) when stderr is a
  terminal;
- a :class:`LogProgress` when it is not (a CI log, a file): one line on
  stderr every ``$PRUNECHECK_PROGRESS_INTERVAL`` seconds (default 10) of
  wall clock, so a log never sits silent for minutes.  A command that ends
  sooner prints none, so short runs' logs stay byte-identical;
- silence with ``quiet`` (``--quiet``) or ``PRUNECHECK_PROGRESS_INTERVAL=0``.

Progress never writes to stdout.

>>> import io
>>> now = [0.0]
>>> log = io.StringIO()
>>> bar = LogProgress(log, "check", interval=10, clock=lambda: now[0], ticker=False)
>>> bar.start(4)
>>> bar.step("checks after_append: load 0.2, seed 1")
>>> now[0] = 12.0
>>> bar.step("checks after_append: load 0.5, seed 1")
>>> print(log.getvalue(), end="")
prunecheck check: still running after 12 s: task 2 of 4 (checks after_append: load 0.5, seed 1)
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from prunecheck.sim.support.environment import progress_interval

__all__ = ["LogProgress", "Progress", "TerminalProgress", "progress_for"]


class Progress:
    """Silent progress: the interface every command reports through."""

    def start(self, total: int, what: str = "tasks") -> None:
        """``total`` tasks (or, with another ``what`` such as ``"runs"`` or
        ``"events"``, that many counted items of one task) are about to run."""

    def step(self, label: str) -> None:
        """The next task, named ``label``, starts (the one before is done)."""

    def finished(self, label: str = "") -> None:
        """One more task is done (``label``: which), for work that finishes
        out of order (a pool's runs)."""

    def runs(self, total: int) -> Callable[[int], None] | None:
        """A callback for a task's runs (called with the runs so far), or None.

        When :meth:`start` counted something else than tasks (``"runs"``,
        ``"events"``), the callback advances that count."""
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
        self.close()  # started again: a new bar
        self.started = False
        self.counts_runs = what != "tasks"
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

    def finished(self, label: str = "") -> None:
        if self.bar is not None:
            self.bar.update(1)
            if label:
                self.bar.set_postfix_str(label, refresh=False)

    def runs(self, total: int) -> Callable[[int], None] | None:
        def tell(done: int) -> None:
            if self.bar is None:
                return
            if self.counts_runs:  # the bar itself counts them (tqdm throttles drawing)
                self.bar.update(min(done, self.bar.total) - self.bar.n)
                if done == total:
                    self.bar.set_postfix_str(self._left().lstrip(", "))
            elif done % 5 == 0 or done == total:
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


#: Held while a progress line is written, and across ``fork``: a child never
#: inherits the stream half-written by a ticker thread.
_WRITING = threading.Lock()
if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(
        before=_WRITING.acquire,
        after_in_parent=_WRITING.release,
        after_in_child=_WRITING.release,
    )


class LogProgress(Progress):
    """One line on ``stream`` every ``interval`` seconds of ``clock``, for a
    stream that is not a terminal (a CI log).

    A line says the command, the time since :meth:`start`, which task of how
    many runs, its runs so far and the time left to ``deadline``::

        prunecheck check: still running after 20 s: task 7 of 42 (checks after_append:
        adversarial search), run 60/200, time limit in 40 s

    (one line).
    Lines are written when an update finds the interval over and, with
    ``ticker`` (the default), by a daemon thread that wakes when it is over,
    so that a long task with no updates still shows it is alive.  Tests pass
    a fake ``clock`` and ``ticker=False``.
    """

    def __init__(
        self,
        stream: IO[str],
        command: str,
        interval: float,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        ticker: bool = True,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval ({interval}) must be greater than 0")
        self.stream, self.command, self.interval = stream, command, interval
        self.deadline, self.clock, self.ticker = deadline, clock, ticker
        self.what = "tasks"
        self.total = 0
        self.count = 0
        self.label = ""
        self.run: tuple[int, int] | None = None
        self.began = self.last = clock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, total: int, what: str = "tasks") -> None:
        self.total, self.what, self.count = total, what, 0
        self.began = self.last = self.clock()
        if self.ticker and self._thread is None:
            self._thread = threading.Thread(
                target=self._tick, name="prunecheck-progress", daemon=True
            )
            self._thread.start()

    def step(self, label: str) -> None:
        self.count += 1
        self.label, self.run = label, None
        self.beat()

    def finished(self, label: str = "") -> None:
        self.count += 1
        self.label = label or self.label
        self.beat()

    def runs(self, total: int) -> Callable[[int], None] | None:
        def tell(done: int) -> None:
            if self.what != "tasks":
                self.count = done
            else:
                self.run = (done, total)
            if self.clock() - self.last >= self.interval:
                self.beat()

        return tell

    def beat(self) -> None:
        """Write a line if the interval since the last one is over."""
        if self.clock() - self.last < self.interval:
            return
        with _WRITING:
            now = self.clock()
            if now - self.last < self.interval or self._stop.is_set():
                return
            self.last = now
            try:
                self.stream.write(self.line(now) + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a closed or broken stderr: no more lines
                self._stop.set()

    def line(self, now: float) -> str:
        """The progress line at ``now`` (a ``clock`` reading)."""
        parts = []
        if self.total:
            if self.what == "tasks":
                parts.append(f"task {max(1, min(self.count, self.total))} of {self.total}")
            else:
                parts.append(f"{self.count} of {self.total} {self.what}")
        if self.label:
            parts.append(f"({self.label})" if parts else self.label)
        text = " ".join(parts)
        if self.run is not None:
            done, total = self.run
            text += f", run {done}/{total}" if done <= total else f", run {done}"
        if self.deadline is not None:
            text += f", time limit in {max(0.0, self.deadline - now):.0f} s"
        return f"prunecheck {self.command}: still running after {now - self.began:.0f} s: {text}"

    def _tick(self) -> None:
        while True:
            wait = self.interval - (self.clock() - self.last)
            if self._stop.wait(max(wait, 0.05)):
                return
            self.beat()

    def close(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)


def progress_for(
    time_limit: float | None = None,
    stream: IO[str] | None = None,
    *,
    command: str = "",
    quiet: bool = False,
) -> Progress:
    """How ``prunecheck COMMAND`` shows progress on ``stream`` (stderr): a
    bar on a terminal, a line every ``$PRUNECHECK_PROGRESS_INTERVAL`` seconds
    elsewhere, nothing with ``quiet`` or an interval of 0."""
    if quiet:
        return Progress()
    out = stream if stream is not None else sys.stderr
    deadline = None if time_limit is None else time.monotonic() + time_limit
    try:
        terminal = out.isatty()
    except (OSError, ValueError):  # a closed stderr
        return Progress()
    if terminal:
        return TerminalProgress(out, deadline)
    interval = progress_interval()
    if interval is None:
        return Progress()
    return LogProgress(out, command or "run", interval, deadline, lambda: _clock(), _TICKER)


#: The clock and ticker of the :class:`LogProgress` :func:`progress_for`
#: makes (a test sets a fake clock and no ticker, to count lines exactly).
_clock: Callable[[], float] = time.monotonic
_TICKER = True
