"""The user's agent under a cage: what its code may not do to prunecheck.

A loop runs in prunecheck's own process (the harness owns every await
point of the framework's event loop), so the cage is drawn around the
user's code where it runs — the import of its module, its factory, and each
schedule — rather than around a worker process as for a policy
(:mod:`prunecheck.sim.subjects.cage`):

* **exits and interrupts** — ``sys.exit``, ``os._exit`` (replaced while the
  user's code runs, in this process only: a child it forks exits for real)
  and a ``KeyboardInterrupt`` the code raises itself become one paragraph
  naming what it did, and exit status 2 (:class:`Abort` carries it past the
  search, which stops at once).  A real Ctrl-C (SIGINT) still stops
  prunecheck: the interrupt handler notes the signal, and an interrupt that
  follows one is left alone;
* **hangs** — each schedule has :data:`SCHEDULE_TIMEOUT` seconds of real
  time; code that blocks past it is
  interrupted (``SIGALRM``, the main thread) and named, and the process
  still ends.  A thread of the run that stays busy, or a loop that spins, is
  the scheduler's :class:`~.scheduler.LoopError` already;
* **helper processes** it starts (``subprocess``, ``multiprocessing``, a
  double fork: on Linux prunecheck is the orphans' subreaper meanwhile) are
  ended when the command's cage closes (:func:`confined`);
* **threads** it starts that are not daemons and still run when the cage
  closes are listed in :data:`LINGERING`: the command line then ends the
  process after its output (:func:`leave_now`) instead of waiting for them.

:func:`confined` is entered by each entry point (``check`` and ``search`` of
a loop, :func:`prunecheck.check_loop` …; re-entrant); :func:`user_code`
around each stretch of the user's code.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, NoReturn

from prunecheck.model.errors import PolicyError

__all__ = [
    "LINGERING",
    "SCHEDULE_TIMEOUT",
    "Abort",
    "Cage",
    "confined",
    "end_helpers",
    "leave_now",
    "user_code",
]

#: Real seconds one schedule (every step of one run of the agent) may take.
SCHEDULE_TIMEOUT = 60.0

#: The non-daemon threads the user's code left running when the last cage
#: closed (the command line does not wait for them at exit).
LINGERING: list[threading.Thread] = []


class Abort(BaseException):
    """The user's code ended the run in a way no schedule explains (it exited,
    raised ``KeyboardInterrupt``, hung).  A ``BaseException``: the search
    (and Hypothesis under it) stops at once instead of shrinking it; the cage
    turns it into :attr:`error` (exit status 2, one paragraph)."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.paragraph())
        self.error = error


class _OsExit(SystemExit):
    """Raised in place of ``os._exit`` while the user's code runs."""


class _TimeUp(KeyboardInterrupt):
    """Raised by the schedule's alarm.  A ``KeyboardInterrupt``: asyncio and
    Hypothesis let it through to the harness, as they do a Ctrl-C."""


@dataclass(slots=True)
class Cage:
    """The state of the outermost :func:`confined` block."""

    pid: int
    threads: set[int]
    children: set[int]
    interrupted: bool = False  # a real SIGINT arrived
    saved: dict[str, Any] = field(default_factory=dict)


_CAGES: list[Cage] = []


def _real_exit() -> Any:
    return _CAGES[0].saved.get("_exit", os._exit) if _CAGES else os._exit


def _fake_exit(status: int) -> NoReturn:
    if not _CAGES or os.getpid() != _CAGES[0].pid:  # a forked child: exit for real
        _real_exit()(status)
    raise _OsExit(status)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    if _CAGES:
        _CAGES[0].interrupted = True
    raise KeyboardInterrupt


# ------------------------------------------------------------- processes
def _descendants(root: int) -> list[int]:
    """Every live process below ``root`` (from /proc; [] where there is none)."""
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[0] not in (b"Z", b"X"):
            parents[int(entry)] = int(fields[1])
    out: list[int] = []
    frontier = [root]
    while frontier:
        here = frontier.pop()
        kids = [pid for pid, parent in parents.items() if parent == here]
        out += kids
        frontier += kids
    return out


def _subreaper(on: bool) -> bool:
    """Make this process the subreaper of its descendants' orphans, or not
    (Linux; elsewhere nothing); whether it was one before."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        was = ctypes.c_int(0)
        libc.prctl(37, ctypes.byref(was), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
        libc.prctl(36, int(on), 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        return bool(was.value)
    except (OSError, AttributeError, ValueError):
        return False


def end_helpers(before: set[int]) -> list[int]:
    """End every process below this one that was not in ``before``; their pids.

    SIGTERM, a moment, then SIGKILL for what is left; this process's own
    children are reaped.
    """
    me = os.getpid()
    ended: list[int] = []
    for attempt in range(3):
        found = [pid for pid in _descendants(me) if pid not in before]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM if attempt == 0 else signal.SIGKILL)
        ended += [p for p in found if p not in ended]
        time.sleep(0.05)
    for pid in ended:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)
    return ended


def _lingering(before: set[int]) -> list[threading.Thread]:
    return [
        t
        for t in threading.enumerate()
        if t.is_alive() and not t.daemon and t.ident not in before
        and t is not threading.main_thread()
    ]  # fmt: skip


# ------------------------------------------------------------------ cages
@contextlib.contextmanager
def confined() -> Iterator[Cage]:
    """The command's cage (see the module's docs); re-entrant.

    The outermost block replaces ``os._exit``, notes a real SIGINT (main
    thread), makes this process the subreaper of orphans; when it closes it
    puts them back, ends the helper processes started inside it, lists the
    non-daemon threads left running (:data:`LINGERING`), and turns an
    :class:`Abort` into its error.
    """
    if _CAGES:
        yield _CAGES[0]
        return
    cage = Cage(os.getpid(), {t.ident or 0 for t in threading.enumerate()},
                set(_descendants(os.getpid())))  # fmt: skip
    cage.saved["_exit"] = os._exit
    main = threading.current_thread() is threading.main_thread()
    if main:
        cage.saved["sigint"] = signal.signal(signal.SIGINT, _on_sigint)
    os._exit = _fake_exit
    reaper = _subreaper(True)
    _CAGES.append(cage)
    try:
        yield cage
    except Abort as abort:
        error = abort.error
        _forget(abort)
        raise error from None
    finally:
        _CAGES.clear()
        os._exit = cage.saved["_exit"]
        if main:
            signal.signal(signal.SIGINT, cage.saved["sigint"])
        end_helpers(cage.children)
        _subreaper(reaper)
        LINGERING[:] = _lingering(cage.threads)


def _forget(exc: BaseException) -> None:
    """Drop what an abort still holds of the run it ended (its tracebacks' frames:
    the framework's suspended generators), quietly: finalized later, at exit,
    their ``finally`` clauses would print tracebacks about a run that is gone."""
    import gc

    hook = sys.unraisablehook
    sys.unraisablehook = lambda _: None
    try:
        seen: set[int] = set()
        chain: BaseException | None = exc
        while chain is not None and id(chain) not in seen:
            seen.add(id(chain))
            tb = chain.__traceback__
            while tb is not None:
                with contextlib.suppress(RuntimeError):  # a frame still running
                    tb.tb_frame.clear()
                tb = tb.tb_next
            chain.__traceback__ = None
            chain = chain.__context__ or chain.__cause__
        gc.collect()
    finally:
        sys.unraisablehook = hook


def _describe(exc: BaseException) -> str:
    from prunecheck.sim.subjects.cage_wire import where_raised

    if isinstance(exc, _OsExit):
        return f"called os._exit({exc.code}){where_raised(exc)}"
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r}){where_raised(exc)}"
    return f"raised KeyboardInterrupt{where_raised(exc)} (no Ctrl-C was pressed)"


def _alarm(seconds: float) -> contextlib.AbstractContextManager[None]:
    """Raise :class:`_TimeUp` in the main thread after ``seconds`` (elsewhere: nothing)."""
    from prunecheck.sim.support.alarm import interrupt_after

    return interrupt_after(seconds, _TimeUp)


@contextlib.contextmanager
def user_code(subject: str, doing: str, *, deadline: float | None = None) -> Iterator[None]:
    """Run a stretch of the user's code (importing it, building the agent, a
    step of a schedule) so that an exit, an interrupt it raises itself, or a
    hang past ``deadline`` (a :func:`time.monotonic` instant) raises
    :class:`Abort` naming ``subject`` and ``doing``.

    A real Ctrl-C (SIGINT noted by :func:`confined`) goes through as the
    ``KeyboardInterrupt`` it is.
    """
    limited: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if deadline is not None:
        limited = _alarm(max(0.01, deadline - time.monotonic()))
    try:
        with limited:
            yield
    except _TimeUp:
        if _CAGES and _CAGES[0].interrupted:
            raise KeyboardInterrupt from None
        why = f"did not return within {SCHEDULE_TIMEOUT:g} s of real time"
        raise Abort(
            PolicyError(
                subject,
                f"{why} while {doing}: it blocks (a sync call waiting for what never "
                "comes, or a busy loop).",
                "make it return, or check it without that code.",
            )
        ) from None
    except (SystemExit, KeyboardInterrupt) as exc:
        if isinstance(exc, KeyboardInterrupt) and (not _CAGES or _CAGES[0].interrupted):
            raise  # the user's Ctrl-C: prunecheck stops
        raise Abort(
            PolicyError(
                subject,
                f"{_describe(exc)} while {doing}.",
                "an agent's code must not end the process: raise an exception instead, "
                "or check it without that code.",
            )
        ) from None


def leave_now(status: int) -> None:
    """End the process with ``status`` now if the user's code left non-daemon
    threads running (:data:`LINGERING`), after the output is flushed and the
    exit handlers ran; otherwise return.  For the command line only."""
    if not any(t.is_alive() for t in LINGERING):
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    os._exit(status)
