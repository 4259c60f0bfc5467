"""Importing production logs of 10 MB, 100 MB and 1 GB: ``prunecheck import
LOG`` as a user runs it (a subprocess, its report sent to /dev/null), with
its CPU time, throughput and peak memory, against reading the same file's
JSON alone.

The logs are generated here from a seed (:mod:`gen_log`: OTLP JSON of GenAI
spans, 40 conversations at a time, parallel tool batches, a clean trimmer,
one conversation in twenty cutting a batch and rejected).  Reading the JSON
alone is ``json.loads`` of each line and of the messages its spans hold as
JSON strings, nothing kept: the floor any importer of these logs pays.
Figures are CPU seconds (user + system) and the peak resident set of
the measured process: the machine is shared, so the wall clock mostly
measures the others.  Throughput is megabytes per CPU second.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_log import write_log

TITLE = "Importing a 10 MB, a 100 MB and a 1 GB log"

__all__ = ["TITLE", "run"]

_USAGE = (
    "r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(r.ru_utime + r.ru_stime, r.ru_maxrss, file=sys.stderr)\n"
)

#: Runs ``prunecheck import`` and prints its own CPU seconds and peak resident set (KiB).
_IMPORT = (
    "import os, resource, runpy, sys\n"
    "os.environ['PRUNECHECK_PROGRESS_INTERVAL'] = '0'\n"
    "sys.argv = ['prunecheck', 'import', *sys.argv[1:]]\n"
    "status = 0\n"
    "try:\n"
    "    runpy.run_module('prunecheck', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    status = exc.code\n" + _USAGE + "sys.exit(status)\n"
)

#: Parses every line of the log with json.loads, and the JSON that span
#: attributes hold as strings (the messages), keeping nothing.
_JSON = (
    "import json, resource, sys\n"
    "def strings(node):\n"
    "    if isinstance(node, dict):\n"
    "        for value in node.values():\n"
    "            yield from strings(value)\n"
    "    elif isinstance(node, list):\n"
    "        for value in node:\n"
    "            yield from strings(value)\n"
    "    elif isinstance(node, str) and node[:1] == '[':\n"
    "        yield node\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    for line in f:\n"
    "        for inner in strings(json.loads(line)):\n"
    "            json.loads(inner)\n" + _USAGE
)


def _child(code: str, *args: str) -> tuple[int, float, int]:
    """Exit status, CPU seconds and peak memory (MiB) of one child."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    cpu, peak = done.stderr.strip().splitlines()[-1].split()
    return done.returncode, float(cpu), int(peak) // 1024


def run(quick: bool) -> str:
    sizes = (2, 10) if quick else (10, 100, 1000)
    rows = []
    met = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in sizes:
            path = Path(tmp) / f"log_{megabytes}.otlp.jsonl"
            size = write_log(path, megabytes, seed=0)
            status, cpu, peak = _child(_IMPORT, str(path))
            _, alone, alone_peak = _child(_JSON, str(path))
            mb = size / 1e6
            met.append(peak <= 300 and status in (0, 1))
            rows.append(
                f"| {mb:,.0f} MB | {cpu:.1f} s | {mb / cpu:.1f} MB/s | {peak} MiB | "
                f"{alone:.2f} s ({mb / alone:.0f} MB/s, {alone_peak} MiB) | {cpu / alone:.1f}× "
                f"| {status} |"
            )
            path.unlink()
    return "\n".join(
        [
            "`prunecheck import LOG` as a user runs it, report to /dev/null, one run each, "
            "against `json.loads` of every line of the same file and of the messages its spans "
            "hold as JSON strings, alone (nothing kept). Logs "
            "from `benchmarks/gen_log.py` (seed 0): OTLP JSON lines of GenAI spans, 40 "
            "conversations at a time, each request resending its history (trimmed to "
            "20,000–60,000 characters by whole tool rounds), one conversation in twenty "
            "cutting a batch and rejected with HTTP 400 (exit 1: the incidents found). CPU "
            "is user + system seconds of the measured process and throughput is MB per CPU "
            f"second (the machine is shared: load average {load:.1f} when this section "
            "started, so the wall clock mostly measures the others); peak memory is the "
            "process's maximum resident set. Target (issue 33): a 1 GB log in at most "
            "300 MB of peak memory.\n",
            "| log | import CPU | throughput | peak memory | JSON alone | ratio | exit |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Peak memory at most 300 MB in {sum(met)} of {len(met)} rows.",
            "",
        ]
    )


if __name__ == "__main__":
    print(run("--quick" in sys.argv))
