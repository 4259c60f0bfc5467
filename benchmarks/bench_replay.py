"""Replaying a large trace: a valid 50 MB trace of 700,001 events, replayed by
``prunecheck replay`` as a user runs it (a subprocess, its narrative sent to
/dev/null), with the peak memory of that process.

The trace is generated here (:func:`write_big_trace`): a system prompt, then
turns of a user message, an invocation, a parallel batch of two reads with
their results, and the assistant's answer, under ``recency`` with a budget
the turns overflow, so the policy prunes all along.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TITLE = "Replaying a 700,001-event trace"

__all__ = ["TITLE", "run", "write_big_trace"]


def _header(policy: str) -> dict[str, object]:
    return {
        "format": "prunecheck-trace",
        "version": 1,
        "seed": 0,
        "policy": policy,
        "config": {"budget": 4000, "hard_ceiling": 8000},
    }


def _turn(k: int) -> list[dict[str, object]]:
    first, second = 2 * k + 1, 2 * k + 2
    return [
        {
            "kind": "user",
            "tokens": 120,
            "text": f"turn {k}: why does test_{k % 97} fail on CI since the last merge?",
        },
        {"kind": "invoke"},
        {
            "kind": "batch",
            "tokens": 40,
            "calls": [
                {"tool": "read_file", "path": f"src/m{k % 31}.py"},
                {"tool": "grep", "path": "src"},
            ],
        },
        {"kind": "result", "call": f"c{first}", "tokens": 300},
        {"kind": "result", "call": f"c{second}", "tokens": 200},
        {"kind": "invoke"},
        {"kind": "assistant", "tokens": 150, "text": f"the failure in m{k % 31} is a typo"},
    ]


def write_big_trace(path: Path, events: int = 700_001, policy: str = "recency") -> int:
    """Write a valid trace of ``events`` events (in the layout prunecheck
    writes: one event a line) to ``path``; return its size in bytes."""
    with path.open("w", encoding="utf-8") as out:
        head = json.dumps(_header(policy), indent=2)[:-2]
        out.write(head + ',\n  "events": [\n')
        out.write('    {"kind": "system", "tokens": 500, "text": "You are a coding agent."}')
        written, k = 1, 0
        while written < events:
            for event in _turn(k):
                if written == events:
                    break
                out.write(",\n    " + json.dumps(event))
                written += 1
            k += 1
        out.write("\n  ]\n}\n")
    return path.stat().st_size


#: Runs ``prunecheck replay`` and prints its own peak resident set (KiB) last on stderr.
_PROBE = (
    "import resource, runpy, sys\n"
    "sys.argv = ['prunecheck', 'replay', sys.argv[1]]\n"
    "try:\n"
    "    runpy.run_module('prunecheck', run_name='__main__')\n"
    "finally:\n"
    "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def _replay(path: Path) -> tuple[float, float, int, int]:
    """Seconds (wall clock, CPU), exit status and peak memory (MiB) of one
    replay, in its own process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    peak = int(done.stderr.strip().splitlines()[-1]) // 1024
    return seconds, cpu, done.returncode, peak


def run(quick: bool) -> str:
    sizes = (20_001,) if quick else (70_001, 700_001)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for policy in ("recency", "unit_safe"):
            for n in sizes:
                path = Path(tmp) / f"trace_{policy}_{n}.json"
                size = write_big_trace(path, n, policy)
                seconds, cpu, status, peak = _replay(path)
                rows.append(
                    f"| {policy} | {n:,} | {size / 2**20:.1f} MB | {seconds:.1f} s | "
                    f"{cpu:.1f} s | {n / cpu:,.0f} | {peak} MiB | {status} |"
                )
    return "\n".join(
        [
            f"## {TITLE}\n",
            "`prunecheck replay TRACE` as a user runs it (narrative to /dev/null), one run "
            "each. `recency` breaks a unit every turn (an invalid prune, an orphan and a "
            "provider rejection, each rendered and narrated); `unit_safe` never does. CPU is "
            "the replay process's user + system time (the wall clock on a shared machine "
            "mostly measures the others); peak memory is the replay process's maximum "
            "resident set.\n",
            "| policy | events | file | wall | CPU | events/CPU s | peak memory | exit |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )


if __name__ == "__main__":
    print(run("--quick" in sys.argv))
