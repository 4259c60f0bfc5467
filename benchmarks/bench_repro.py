"""The harness's cost against the framework alone, per framework (issue 30).

For one unsafe cell of ``reports/loops.md`` per framework, its minimal
schedule is run two ways, interleaved, in this one process with every
import already done: under the harness (the adapter, the virtual clock, the
ledger and the judge: :func:`prunecheck.sim.drivers.action_search.rerun`
of the loop's :class:`~prunecheck.sim.subjects.loops.system.LoopSystem`) and by the
cell's standalone reproduction (``reports/loops/<cell>.py``: the framework
and its own test model alone, run with :mod:`runpy`, its output discarded).
CPU seconds of this process per run, median of :data:`RUNS`; the ratio is the
harness's cost over the framework replaying the schedule by itself.  Target:
at most 2×.

What the two sides do differs in ways worth saying: the harness stops at
the first violation and lets virtual time pass at once; a script checks the
installed versions first (a scan of the installed distributions), settles
each step by yielding a fixed number of event-loop turns (it cannot see the
framework's awaits as the harness does) and judges what it printed.  So the
"alone" figure is a maintainer's script as written, not the least the
framework could take; a ratio well under 1 says the harness costs no more
than that script, not that it is faster than the framework.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.drivers.action_search import rerun
from prunecheck.sim.reports.loops_scripts import script_parts, slug
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS
from prunecheck.sim.subjects.loops.steps import schedule_from_json
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import load_target

TITLE = "Agent loops: one minimal schedule under the harness and by its reproduction alone"

#: Runs of each side per cell (interleaved); the median is reported.
RUNS = 7

#: The harness may cost at most this many times the framework alone.
TARGET_RATIO = 2.0

ROOT = Path(__file__).resolve().parent.parent
CELLS = (
    ("pydantic-ai", "pydantic_ai_keep_last-agent-crash_resume"),
    ("openai-agents", "openai_agents_keep_last-app-parallel"),
    ("langgraph", "langgraph_trim-agent-parallel"),
    ("autogen", "autogen_token_limited-agent-parallel"),
    ("strands", "strands_sliding-agent-parallel"),
    ("google-adk", "adk_context_filter-app-trim"),
    ("agent-framework", "maf_compaction-keep_last-parallel"),
    ("llama-index", "llamaindex_window-agent-parallel"),
)


def _cpu(work: Callable[[], object]) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _script_run(script: Path, args: tuple[str, ...]) -> Callable[[], object]:
    def run() -> object:
        sink, argv = io.StringIO(), sys.argv
        sys.argv = [str(script), *args]  # the cell's arguments, not the benchmark's
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                runpy.run_path(str(script), run_name="__main__")
            except SystemExit as done:
                return done.code
            finally:
                sys.argv = argv
        return None

    return run


def _script_of(cell: str) -> tuple[Path, tuple[str, ...]]:
    """The script the table links ``cell`` to (cells may share one) and its arguments."""
    table = ROOT / "reports" / "loops.md"
    classes = [s.value for s in SCENARIOS]
    for line in table.read_text(encoding="utf-8").splitlines() if table.is_file() else []:
        if line.startswith("| `loop:"):
            spec = line.split("`")[1]
            for scenario, (path, args, _) in script_parts(line, classes).items():
                if slug(spec, scenario) == cell:
                    return table.parent / path, args
    return table.parent / "loops" / f"{cell}.py", ()


def _row(framework: str, cell: str, runs: int) -> tuple[str, float | None]:
    schedule = ROOT / "reports" / "loops" / f"{cell}.json"
    script, args = _script_of(cell)
    if not schedule.is_file() or not script.is_file():
        return f"| {framework} | `{cell}` | not in this tree | | | | |", None
    data = json.loads(schedule.read_text(encoding="utf-8"))
    try:
        target = load_target(f"loop:{ROOT / str(data['target'])}")
    except PrunecheckError as exc:
        return f"| {framework} | `{cell}` | {exc.rule} | | | | |", None
    steps = schedule_from_json(schedule.read_text(encoding="utf-8"))
    alone = _script_run(script, args)
    status = alone()  # warm-up of both sides: imports and first-call caches
    system = LoopSystem(target)
    rerun(system, steps)
    harness: list[float] = []
    framework_alone: list[float] = []
    for _ in range(runs):
        harness.append(_cpu(lambda: rerun(system, steps)))
        framework_alone.append(_cpu(alone))
    h, a = statistics.median(harness), statistics.median(framework_alone)
    ratio = h / a if a > 0 else float("inf")
    met = "yes" if ratio <= TARGET_RATIO else "**no**"
    return (
        f"| {framework} | `{cell}` | {len(steps)} | {h * 1000:.1f} | {a * 1000:.1f} | "
        f"{ratio:.2f}× | {met} (script exit {status}) |",
        ratio,
    )


def run(quick: bool) -> str:
    runs = 3 if quick else RUNS
    rows = [
        "| framework | cell | steps | harness, ms CPU | framework alone, ms CPU | ratio "
        f"| within {TARGET_RATIO:g}× |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    within: list[str] = []
    measured = 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for framework, cell in CELLS:
        row, ratio = _row(framework, cell, runs)
        rows.append(row)
        if ratio is not None:
            measured += 1
            if ratio <= TARGET_RATIO:
                within.append(f"{framework} ({ratio:.2f}×)")
    verdict = (
        f"Target: the harness at most {TARGET_RATIO:g}× the framework alone; met by "
        f"{len(within)} of {measured} frameworks measured"
        + (f": {', '.join(within)}." if within else ".")
    )
    return (
        f"Median of {runs} interleaved runs each, CPU time of this process, imports done "
        "before timing (a warm-up run of each side first).\n\n" + "\n".join(rows) + "\n\n" + verdict
    )


if __name__ == "__main__":
    print(run("--quick" in sys.argv))
