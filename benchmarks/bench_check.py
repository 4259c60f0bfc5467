"""``prunecheck check`` of a caged user policy, measured as a user runs it,
against the 10 s target (issues 20 and 36).

Each check is the installed ``prunecheck`` console script, run as a
subprocess in a fresh temporary folder into which the policy's file was
copied (as a user's own file sits in their project): no failure database,
no cache of ours, default jobs (placements side by side on two cores or
more), no flag beyond the spec, every ``PRUNECHECK_*`` variable unset.  The
README's example, ``examples/openai_commit_boundary.py:trim@openai``, is
checked ``REPEATS`` times (its median is the figure held against the
target); each other caged example policy once.

Reported per check: its wall seconds, its CPU seconds (user + system of the
command and every process it waited for: the forked placements and the
policy's cage workers, from ``resource.getrusage(RUSAGE_CHILDREN)``), the
exit status and verdicts, and the 1-minute load average when it started.
``CPU / 2`` is the best wall time two idle cores allow; on a shared machine
(load above the core count) the wall times are upper bounds.

    python benchmarks/run.py --only check [--quick]
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["POLICIES", "README_EXAMPLE", "REPEATS", "TARGET", "TITLE", "Run", "run"]

TITLE = "check: a caged user policy, as a user runs it (target 10 s)"

#: Seconds a pull request may wait for ``prunecheck check POLICY`` (issue 20).
TARGET = 10.0

ROOT = Path(__file__).resolve().parent.parent
#: The README's safe example trimmer: (file in the repository, attribute and format).
README_EXAMPLE = ("examples/openai_commit_boundary.py", "trim@openai")
#: Times the README's example is checked (its median meets the target or not).
REPEATS = 3
#: The other caged user policies: safe, unsafe and mixed verdicts.
POLICIES: tuple[tuple[str, str], ...] = (
    ("examples/openai_keep_last.py", "trim@openai"),
    ("examples/anthropic_trim.py", "trim@anthropic"),
    ("tests/policies/complete_history_trim.py", "trim_openai@openai"),
    ("tests/policies/size_hidden.py", "late_turn"),
    ("tests/policies/regress_correct.py", "select"),
)
_VERDICTS = {0: "safe", 1: "unsafe", 2: "error", 3: "out of time", 4: "vacuous"}
_PLACEMENT_ROW = re.compile(
    r"^(after_append|after_batch|before_invoke)\s+\d+\s+\d+\s+\d+\s+(safe|unsafe|UNSAFE|\w+)"
)


@dataclass(frozen=True, slots=True)
class Run:
    """One ``prunecheck check`` as a user runs it."""

    spec: str
    wall: float
    cpu: float
    status: int
    placements: str
    load: float


def _command() -> list[str]:
    """The installed console script (beside this interpreter, else on PATH)."""
    beside = Path(sys.executable).with_name("prunecheck")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("prunecheck")
    if found is None:
        raise SystemExit("bench_check: no prunecheck console script (make .venv/.installed-stamp)")
    return [found]


def _children_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def check_once(source: str, attribute: str) -> Run:
    """``prunecheck check FILE:ATTR`` in a fresh folder holding a copy of the file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRUNECHECK_")}
    with tempfile.TemporaryDirectory(prefix="prunecheck-bench-") as folder:
        name = Path(source).name
        shutil.copyfile(ROOT / source, Path(folder) / name)
        spec = f"{name}:{attribute}"
        load = os.getloadavg()[0]
        cpu, start = _children_cpu(), time.perf_counter()
        done = subprocess.run(
            [*_command(), "check", spec],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        cpu = _children_cpu() - cpu
    if done.returncode not in _VERDICTS or done.returncode == 2:
        raise SystemExit(f"bench_check: {spec} exited {done.returncode}:\n{done.stderr[-2000:]}")
    rows = [m.group(2).lower() for m in map(_PLACEMENT_ROW.match, done.stdout.splitlines()) if m]
    placements = "/".join(rows) if rows else _VERDICTS[done.returncode]
    return Run(spec, wall, cpu, done.returncode, placements, load)


def run(quick: bool) -> str:
    repeats = 1 if quick else REPEATS
    readme = [check_once(*README_EXAMPLE) for _ in range(repeats)]
    others = [check_once(*p) for p in (POLICIES[:1] if quick else POLICIES)]
    cores = os.cpu_count() or 1
    wall = statistics.median(r.wall for r in readme)
    cpu = statistics.median(r.cpu for r in readme)
    loads = [r.load for r in (*readme, *others)]
    verdict = "meets" if wall <= TARGET else "misses"
    rows = [
        "| policy (a copy in a fresh folder) | exit | verdicts (append / batch / invoke) "
        "| wall (s) | CPU (s) | CPU ÷ 2 (s) | load at start |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for r in (*readme, *others):
        rows.append(
            f"| `{r.spec}` | {r.status} | {r.placements} | {r.wall:.1f} | {r.cpu:.1f} "
            f"| {r.cpu / 2:.1f} | {r.load:.1f} |"
        )
    lines = [
        f"`prunecheck check {readme[0].spec}` (the README's example), as a user runs it — "
        "the installed console script in a fresh folder holding a copy of the file, no "
        "failure database, default jobs, no flag — median of "
        f"{len(readme)}: **{wall:.1f} s** wall, {cpu:.1f} s of CPU (the command and every "
        f"process it waited for); it {verdict} the {TARGET:g} s target on this machine. "
        f"CPU ÷ 2 = {cpu / 2:.1f} s is the best wall time two idle cores allow. "
        f"Cores: {cores}; load average at the start of each check "
        f"{min(loads):.1f}–{max(loads):.1f} (a load above {cores} means other work shared "
        "the cores, and the wall times are upper bounds).",
        "",
        *rows,
    ]
    return "\n".join(lines)
