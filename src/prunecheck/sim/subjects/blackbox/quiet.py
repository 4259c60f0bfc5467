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

What this cannot see (and the docs say): a thread that sleeps on its own
timer (a retry's back-off) is quiet; the harness therefore also asks that
the agent waits on the harness (a request, a tool call, the next message)
before it calls the agent quiescent (:mod:`.process`).  Elsewhere than Linux
there is no ``/proc``: :func:`tree_quiet` then says quiet after
:data:`WINDOW` seconds without news from the agent, which is a guess.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["WINDOW", "descendants", "snapshot", "tree_quiet"]

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
