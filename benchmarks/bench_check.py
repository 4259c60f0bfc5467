"""``check`` of a caged user policy over every placement: the time a pull
request waits, against the 10 s target (issue 20).

Each policy below is a user's file, so it runs caged (its own worker
process); ``check_policy(spec)`` checks all three budget-check placements
(the fixed suite and the adversarial search at each).  Each is checked
twice, side by side in this one run: one placement after the other in this
process (``jobs=1``, as before), and the default (placements side by side
in forked processes when the machine has two cores or more).  Reported:
wall seconds of each, their medians against the target, and the CPU
seconds the one-by-one check spent (this process and its reaped children,
the cage workers): the work to share out, so that ``CPU / cores`` is the
best wall time the cores allow.  The machine's load average is printed
beside them: on a shared machine wall times are upper bounds.

    python benchmarks/run.py --only check [--quick]
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from pathlib import Path

from prunecheck.sim.adapters.cage import close_all
from prunecheck.sim.support.forked import available_jobs
from prunecheck.sim.verdicts.check import check_policy

__all__ = ["TARGET", "TITLE", "run"]

TITLE = "check: a caged user policy over every placement (target 10 s)"

#: Seconds a pull request may wait for ``prunecheck check POLICY`` (issue 20).
TARGET = 10.0

ROOT = Path(__file__).resolve().parent.parent
#: Caged user policies (spec, format): safe, unsafe and mixed verdicts.
POLICIES: tuple[tuple[str, str | None], ...] = (
    ("examples/openai_keep_last.py:trim", "openai"),
    ("examples/openai_commit_boundary.py:trim", "openai"),
    ("examples/anthropic_trim.py:trim", "anthropic"),
    ("tests/policies/complete_history_trim.py:trim_openai", "openai"),
    ("tests/policies/size_hidden.py:late_turn", None),
    ("tests/policies/regress_correct.py:select", None),
)


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _one(
    spec: str, fmt: str | None, jobs: int | None, max_examples: int
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, verdicts) of one check, its cage started fresh."""
    close_all()
    cpu, start = _cpu(), time.perf_counter()
    result = check_policy(str(ROOT / spec), format=fmt, jobs=jobs, max_examples=max_examples)
    wall = time.perf_counter() - start
    close_all()  # reap the cage worker, so that its CPU counts
    verdicts = "/".join(p.verdict.value for p in result.placements)
    return wall, _cpu() - cpu, verdicts


def run(quick: bool) -> str:
    policies = POLICIES[:2] if quick else POLICIES
    examples = 50 if quick else 200
    cores = available_jobs()
    rows = [
        "| policy | verdicts (append / batch / invoke) | one by one (s) | CPU (s) "
        "| side by side (s) | ratio |",
        "|---|---|---|---|---|---|",
    ]
    serial, parallel, cpus = [], [], []
    load_before = os.getloadavg()[0]
    for spec, fmt in policies:
        one_wall, one_cpu, verdicts = _one(spec, fmt, 1, examples)
        many_wall, _, again = _one(spec, fmt, None, examples)
        assert again == verdicts, f"{spec}: side by side gave {again}, one by one {verdicts}"
        serial.append(one_wall)
        parallel.append(many_wall)
        cpus.append(one_cpu)
        rows.append(
            f"| `{spec}` | {verdicts} | {one_wall:.1f} | {one_cpu:.1f} | {many_wall:.1f} "
            f"| {one_wall / many_wall:.2f}× |"
        )
    load_after = os.getloadavg()[0]
    median_many = statistics.median(parallel)
    median_cpu = statistics.median(cpus)
    verdict = "meets" if median_many <= TARGET else "misses"
    lines = [
        f"Median wall time of `check POLICY` (all placements, {examples} search runs each), "
        f"side by side: **{median_many:.1f} s** — it {verdict} the {TARGET:g} s target "
        f"(one by one: {statistics.median(serial):.1f} s). Median CPU of one check: "
        f"{median_cpu:.1f} s, so {median_cpu / max(1, min(cores, 3)):.1f} s is the best wall "
        f"time {cores} core(s) allow. Cores available: {cores}; load average "
        f"{load_before:.1f} before, {load_after:.1f} after (2 cores: a load above 2 means "
        "other work shared them, and the wall times are upper bounds).",
        "",
        *rows,
    ]
    return "\n".join(lines)
