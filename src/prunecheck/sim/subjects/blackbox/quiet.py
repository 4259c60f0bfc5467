"""Whether an agent process is quiet: none of its threads runs or has run lately.

The harness applies a schedule's next step only when the agent is
quiescent (:mod:`prunecheck.sim.subjects.loops.clock`).  In process, that is
read from the event loop and the threads' frames; an agent in another
process is read from Linux's ``/proc``: the process and its descendants
(an MCP server it spawned, a ``node`` under ``npx``), every thread of each.
A tree is quiet when no thread is running or in an uninterruptible wait
(state ``R`` or ``D``) and the nanoseconds each spent on a CPU
(``/proc/PID/task/TID/schedstat``) did not move across :data:`WINDOW`
seconds, checked twice.

A quiet tree may still have news on its way, in the kernel, between it
and the harness: what :func:`in_transit` reads, none of it a matter of
timing -- bytes or a connection on a loopback socket of the harness's
servers not yet read or accepted, a reply the agent has not read yet, a
connection the agent closed that the server has not seen close
(``/proc/net/tcp``), and a signal sent to the agent not yet delivered
(``SigPnd``/``ShdPnd`` of ``/proc/PID/task/TID/status``).  The line of input
on its standard input not yet read is the caller's to ask
(:func:`unread_bytes`).

What this cannot see (and the docs say): a thread that sleeps on its own
timer (a retry's back-off) is quiet; the harness therefore also asks that
the agent waits on the harness (a request, a tool call, the next message)
before it calls the agent quiescent (:mod:`.process`).  Elsewhere than Linux
there is no ``/proc``: :func:`tree_quiet` then says quiet after
:data:`WINDOW` seconds without news from the agent, which is a guess.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import termios
import time
from collections.abc import Collection
from pathlib import Path

__all__ = [
    "WINDOW",
    "descendants",
    "in_transit",
    "loopback_backlog",
    "signals_pending",
    "snapshot",
    "tree_quiet",
    "unread_bytes",
]

#: Real seconds the CPU time of a quiet tree must stay still.
WINDOW = 0.002

_PROC = Path("/proc")


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (children of any thread), breadth first."""
    out, queue = [], [pid]
    while queue:
        p = queue.pop(0)
        out.append(p)
        try:
            tasks = os.listdir(_PROC / str(p) / "task")
        except OSError:
            continue
        for tid in tasks:
            try:
                kids = (_PROC / str(p) / "task" / tid / "children").read_text().split()
            except OSError:
                continue
            queue += [int(k) for k in kids if int(k) not in out]
    return out


def snapshot(pids: list[int]) -> tuple[bool, int] | None:
    """``(running, cpu_ns)`` of every thread of ``pids``: whether one runs,
    and the CPU nanoseconds they spent in all; None without ``/proc``."""
    if not _PROC.is_dir():
        return None
    running, cpu = False, 0
    for pid in pids:
        base = _PROC / str(pid) / "task"
        try:
            tids = os.listdir(base)
        except OSError:
            continue  # gone meanwhile
        for tid in tids:
            try:
                stat = (base / tid / "stat").read_text()
                sched = (base / tid / "schedstat").read_text().split()
            except OSError:
                continue
            state = stat[stat.rindex(")") + 2 :].split(" ", 1)[0]
            running = running or state in ("R", "D")
            cpu += int(sched[0]) if sched else 0
    return running, cpu


def tree_quiet(pid: int) -> bool:
    """Whether the process ``pid`` and its descendants are quiet (see the module)."""
    pids = descendants(pid)
    first = snapshot(pids)
    if first is None:
        time.sleep(WINDOW * 10)
        return True
    if first[0]:
        return False
    for _ in range(2):
        time.sleep(WINDOW)
        again = snapshot(descendants(pid))
        if again is None or again[0] or again[1] != first[1]:
            return False
    return True


_LOOPBACK = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
_ESTABLISHED, _CLOSE_WAIT, _LISTEN = "01", "08", "0A"


def loopback_backlog(ports: Collection[int], table: str | None = None) -> list[str]:
    """What waits in the kernel between clients and the servers listening on
    127.0.0.1 at ``ports``: one line per socket, empty if nothing does.

    A listening socket with connections not yet accepted, a server's socket
    with request bytes not yet read or whose client closed it (``CLOSE_WAIT``:
    the server has not seen the hang-up yet), a client's socket with reply
    bytes not yet read.  ``table`` is the text of ``/proc/net/tcp`` (read when
    None; no ``/proc``: nothing).

    >>> row = "0: 0100007F:1F90 0100007F:C350 01 00000000:00000005 00:0 0 0 0 1 0"
    >>> loopback_backlog({8080}, "header\\n" + row)
    ['unread by the server 127.0.0.1:8080 (5 bytes)']
    """
    if table is None:
        try:
            table = Path("/proc/net/tcp").read_text(encoding="ascii")
        except OSError:
            return []
    wanted = {f"{p:04X}" for p in ports}
    out = []
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 5:
            continue
        (here, here_port), (there, there_port) = fields[1].split(":"), fields[2].split(":")
        state, unread = fields[3], int(fields[4].split(":")[1], 16)
        if here == _LOOPBACK and here_port in wanted:
            port = int(here_port, 16)
            if state == _LISTEN and unread:
                out.append(f"not accepted by the server 127.0.0.1:{port} ({unread})")
            elif state == _CLOSE_WAIT:  # (its end of stream counts as one unread byte)
                out.append(f"closed by the client of 127.0.0.1:{port}, not yet seen")
            elif state == _ESTABLISHED and unread:
                out.append(f"unread by the server 127.0.0.1:{port} ({unread} bytes)")
        elif there == _LOOPBACK and there_port in wanted and state == _ESTABLISHED and unread:
            out.append(f"unread by a client of 127.0.0.1:{int(there_port, 16)} ({unread} bytes)")
    return out


def _mask(status: str, key: str) -> int:
    for line in status.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1], 16)
    return 0


def signals_pending(pids: list[int]) -> bool:
    """Whether a signal sent to one of ``pids`` waits to be delivered (one that
    some thread of it neither ignores nor blocks); False without ``/proc``."""
    for pid in pids:
        shared, blocked_by_all, ignored, own = 0, ~0, 0, 0
        try:
            tids = os.listdir(_PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tids:
            try:
                status = (_PROC / str(pid) / "task" / tid / "status").read_text()
            except OSError:
                continue
            shared |= _mask(status, "ShdPnd")
            ignored |= _mask(status, "SigIgn")
            blocked = _mask(status, "SigBlk")
            blocked_by_all &= blocked
            own |= _mask(status, "SigPnd") & ~blocked
        if (shared & ~blocked_by_all & ~ignored) or (own & ~ignored):
            return True
    return False


def unread_bytes(fd: int) -> int:
    """Bytes written into the pipe (or socket) ``fd`` and not yet read by the
    other end (``FIONREAD``); 0 if it cannot be asked."""
    with contextlib.suppress(OSError, ValueError):
        got = fcntl.ioctl(fd, termios.FIONREAD, struct.pack("i", 0))
        return int(struct.unpack("i", got)[0])
    return 0


def in_transit(pid: int, ports: Collection[int]) -> list[str]:
    """What is on its way between the agent ``pid`` (its tree) and the harness's
    servers at ``ports``, in the kernel (see the module): empty if nothing."""
    out = loopback_backlog(ports)
    if signals_pending(descendants(pid)):
        out.append("a signal not yet delivered")
    return out
