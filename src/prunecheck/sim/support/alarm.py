"""Interrupting a stretch of user code after a number of real seconds.

One mechanism for every cage that runs user code in prunecheck's own
process: a policy's time limit (:mod:`prunecheck.sim.subjects.time_limit`)
and a loop's schedule (:mod:`prunecheck.sim.subjects.loops.confine`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["interrupt_after"]


@contextmanager
def interrupt_after(seconds: float, raising: type[BaseException]) -> Iterator[None]:
    """Raise ``raising`` in the block after ``seconds`` of real time (``SIGALRM``;
    main thread only, elsewhere the block runs unguarded); the previous handler
    and timer are put back."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise raising

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
