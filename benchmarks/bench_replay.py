"""Replaying large traces: ``prunecheck replay TRACE POLICY`` as a user runs
it (a subprocess, its narrative sent to /dev/null), against applying the
same events alone, with each replay's CPU time and peak memory.

The traces are generated here from a seed (:mod:`gen_trace`: parallel
batches, streamed results and text, budget checks, failures, sessions): a
700,000-event trace in the layout prunecheck writes (one event a line), and
a one-line trace of about 50 MB, as another tool would write it.  Applying
alone is the model's own work on the same events, already parsed and held in
memory: ``System.apply`` of each with no notes (a driver's hot loop), timed
in its own process.  Figures are CPU seconds (user + system) of the
measured process: the machine is shared, so the wall clock mostly measures
the others.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_trace import write_trace

TITLE = "Replaying a 700,000-event trace and a 50 MB one"

__all__ = ["TITLE", "run"]

#: Runs ``prunecheck replay`` and prints its own CPU seconds and peak resident set (KiB).
_REPLAY = (
    "import os, resource, runpy, sys\n"
    "os.environ['PRUNECHECK_PROGRESS_INTERVAL'] = '0'\n"
    "sys.argv = ['prunecheck', 'replay', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('prunecheck', run_name='__main__')\n"
    "finally:\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    print(r.ru_utime + r.ru_stime, r.ru_maxrss, file=sys.stderr)\n"
)

#: Applies the events of a trace, parsed and held first, and prints the CPU seconds of that.
_APPLY = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from prunecheck.model.system import replay\n"
    "from prunecheck.sim.subjects.loader import load_system\n"
    "from prunecheck.sim.evidence.trace_file import read_trace\n"
    "trace = read_trace(Path(sys.argv[1]))\n"
    "trace = trace.with_events(list(trace.events))\n"
    "system = load_system(sys.argv[2], None)\n"
    "start = time.process_time()\n"
    "for _ in replay(trace, system, record=False):\n"
    "    pass\n"
    "print(time.process_time() - start, file=sys.stderr)\n"
)


def _child(code: str, *args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    return done.returncode, done.stderr.strip().splitlines()[-1].split()


def _replay(path: Path, policy: str) -> tuple[float, int, int]:
    """CPU seconds, peak memory (MiB) and exit status of one replay."""
    status, (cpu, peak) = _child(_REPLAY, str(path), policy)
    return float(cpu), int(peak) // 1024, status


def _apply(path: Path, policy: str) -> float:
    """CPU seconds of applying the trace's events alone."""
    status, (cpu,) = _child(_APPLY, str(path), policy)
    assert status == 0, status
    return float(cpu)


def run(quick: bool) -> str:
    lines_events, one_line_events = (20_000, 20_000) if quick else (700_000, 850_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "lines.json"
        one_line = Path(tmp) / "one_line.json"
        sizes = {
            lines: write_trace(lines, lines_events, seed=0),
            one_line: write_trace(one_line, one_line_events, seed=1, layout="compact"),
        }
        cases = [
            (lines, lines_events, "one event a line", "recency"),
            (lines, lines_events, "one event a line", "unit_safe"),
            (one_line, one_line_events, "one line", "recency"),
        ]
        met = []
        for path, n, layout, policy in cases:
            cpu, peak, status = _replay(path, policy)
            alone = _apply(path, policy)
            limit = 30.0 if path == lines else 60.0
            met.append(cpu <= limit and cpu / alone <= 5)
            rows.append(
                f"| {policy} | {n:,} | {layout}, {sizes[path] / 1e6:.0f} MB | {cpu:.1f} s | "
                f"{n / cpu:,.0f} | {alone:.1f} s | {cpu / alone:.1f}× | {peak} MiB | {status} |"
            )
    return "\n".join(
        [
            "`prunecheck replay TRACE POLICY` as a user runs it, narrative to /dev/null, one "
            "run each, against applying the same events alone (parsed and held in memory "
            "first, no notes). Traces from `benchmarks/gen_trace.py` (seed 0 and 1): "
            "parallel batches of 1–4 calls, results in 1–3 chunks interleaved, streamed "
            "assistant text, budget checks, failures and sessions, under a 6,000-token "
            "budget the context keeps crossing. `recency` splits units all along (an invalid "
            "prune, orphans and a provider rejection narrated every few turns); "
            "`unit_safe` never does. CPU is user + system seconds of the measured process "
            "(the machine is shared: the wall clock mostly measures the others); peak "
            "memory is the replay process's maximum resident set. Targets (issue 36): a "
            "700,000-event trace in at most 30 s of CPU, at most 5× applying alone, in "
            "bounded memory; a 50 MB trace well inside a minute.\n",
            "| policy | events | trace | replay CPU | events/CPU s | applying alone | ratio "
            "| peak memory | exit |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Targets met by {sum(met)} of {len(met)} rows (at most 30 s of CPU for the "
            f"{lines_events:,}-event trace, 60 s for the one-line one, and 5× applying alone).",
            "",
        ]
    )


if __name__ == "__main__":
    print(run("--quick" in sys.argv))
