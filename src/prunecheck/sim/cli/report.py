"""``prunecheck report``: run the default sweep and write the failure-rate
report (plots and ``summary.md``) into a folder.

The sweep's rows go to ``OUT/results.jsonl`` as they finish; rerunning the
command reuses every finished run whose code digest matches this code, so an
interrupted report resumes and a finished one only redraws.  The command
says which it does, before and after: how many runs it reuses from
``results.jsonl`` and how many it simulates; delete ``results.jsonl`` (or
run ``make report-fresh``) to simulate every run again.  Extra ``POLICY``
specs run through the same sweep and appear next to the built-ins.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.config import CheckAt, RetryMode, RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.cli.argtypes import count, integer
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.formats import add_format_argument
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, add_run_time_limit, run_time_limit
from prunecheck.sim.cli.policy_argument import add_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.drivers.workload import SESSION_TURNS, load_at
from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.reports.writer import PLOTS, write_report
from prunecheck.sim.subjects.loader import load_policy
from prunecheck.sim.subjects.policy_spec import with_format
from prunecheck.sim.support.ledger import locked_folder
from prunecheck.sim.support.outputs import output_file, output_folder
from prunecheck.sim.sweeps.dask_pool import add_scheduler_option, parse_scheduler
from prunecheck.sim.sweeps.runs import RunSpec
from prunecheck.sim.sweeps.sweep import (
    RESULTS_FILE,
    configs,
    holds_results,
    plan,
    policy_failure,
    read_rows,
    run_sweep,
)

__all__ = ["Parts", "default_parts", "execute", "register"]

EXAMPLE = """\
examples:
  prunecheck report --out reports --seed 1              # what `make report` runs
  prunecheck report --out /tmp/r my_policy.py:select --seeds 2

writes OUT/verdicts.png, survival.png, failure-vs-load.png, failure-vs-tightness.png,
failures-by-gate.png, cost-of-safety.png, runtime-knobs.png, summary.md, index.html
(the plots, the tables and a link to every reproduction bundle under OUT) and
results.jsonl (one JSON line per run).  Runs already in OUT/results.jsonl (same
code, same settings) are reused, not simulated again: delete that file to
re-simulate from nothing.  The unit of the rates is the session (see summary.md).
exit status: 0 written, 2 bad input, 3 out of time (--time-limit reached: the report
is written from the runs that finished and its summary says what was covered; the
same command resumes).
"""

#: The default sweep's axes.
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: At most this many times the seeds at a light load level (see :func:`seeds_at`).
MAX_SEED_FACTOR = 8
TIGHT_LEVEL = 0.5
TIGHTNESS = (0.1, 0.2, 0.4, 0.8)
HORIZON = 600.0
SEEDS = 3
QUICK_LEVELS = (0.0, 1.0)
QUICK_TIGHTNESS = (0.2, 0.8)
QUICK_HORIZON = 90.0

Parts = tuple[list[RunSpec], list[RunSpec], list[RunSpec]]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help=SUMMARIES["report"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--out", default="reports", metavar="DIR", help="folder for the report (default reports)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="let --out replace files a report did not write (a folder without results.jsonl)",
    )
    p.add_argument("--seed", type=integer, default=1, help="first seed (default 1)")
    p.add_argument(
        "--seeds",
        type=count,
        default=SEEDS,
        metavar="N",
        help=f"seeds per configuration (default {SEEDS})",
    )
    add_policy_argument(p, many=True, help="extra policies to run next to the built-ins")
    add_format_argument(
        p,
        "every extra POLICY is a list function trim(messages) over "
        "this provider's message dicts (the report's runtimes keep "
        "Anthropic's rules, as for the built-ins)",
    )
    p.add_argument(
        "--jobs",
        type=count,
        default=None,
        metavar="N",
        help="worker processes (default: all cores)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a tiny sweep (two load levels, short runs) to try the pipeline",
    )
    add_scheduler_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress (bar or lines)")
    add_policy_timeout(p)
    add_run_time_limit(p)
    p.set_defaults(func=execute)


def _sessions_per_run(level: float, horizon: float) -> float:
    """About how many sessions one run at ``level`` holds: each agent's
    user messages over the horizon, ``SESSION_TURNS`` per session, plus the
    censored last one."""
    load = load_at(level)
    return load.agents * (horizon / (load.user_interval * SESSION_TURNS) + 1.0)


def seeds_at(level: float, seeds: Sequence[int], horizon: float = HORIZON) -> list[int]:
    """The main sweep's seeds at ``level``: ``seeds`` at full load, and as many
    times more at a lighter level as it has fewer sessions per run (at most
    ``MAX_SEED_FACTOR`` times), so that every point of the plots rests on a
    similar number of sessions.  Light runs are cheap: one agent, few events.

    >>> len(seeds_at(1.0, [1, 2, 3])), len(seeds_at(0.5, [1, 2, 3])), len(seeds_at(0.0, [1]))
    (3, 12, 8)
    """
    factor = _sessions_per_run(1.0, horizon) / _sessions_per_run(level, horizon)
    times = max(1, min(MAX_SEED_FACTOR, round(factor)))
    return list(range(seeds[0], seeds[0] + len(seeds) * times))


def default_parts(seeds: list[int], extra: list[str], *, quick: bool = False) -> Parts:
    """The report's sweep: (main, tightness, knobs) run specs.

    * main: every policy × every gate × load levels (checks after every
      append, retry re-runs the batch: the domain document's runtime), with
      more seeds at lighter levels (:func:`seeds_at`);
    * tightness: every policy × none/commit/spill × budget tightness, with
      the main sweep's seeds at its level;
    * knobs: every policy but unit_safe × other check times and retry modes,
      under gate none (and commit for reference) × load levels.
    """
    levels = QUICK_LEVELS if quick else LEVELS
    tightness = QUICK_TIGHTNESS if quick else TIGHTNESS
    horizon = QUICK_HORIZON if quick else HORIZON
    policies = [*BUILTINS, *(p for p in extra if p not in BUILTINS)]
    base = RuntimeConfig()
    main = [
        spec
        for level in levels
        for spec in plan(
            policies, configs(base), [level], seeds_at(level, seeds, horizon), horizon=horizon
        )
    ]
    tight = plan(
        policies,
        configs(base, gates=(Gate.NONE, Gate.COMMIT, Gate.SPILL)),
        [TIGHT_LEVEL],
        seeds_at(TIGHT_LEVEL, seeds, horizon),
        tightness=tightness,
        horizon=horizon,
    )
    variants = [
        *configs(base, gates=(Gate.NONE, Gate.COMMIT), check_at=tuple(CheckAt)),
        *configs(base, gates=(Gate.NONE,), retry=(RetryMode.IDEMPOTENT,)),
    ]
    knobs = plan(
        [p for p in policies if p != "unit_safe"], variants, levels, seeds, horizon=horizon
    )
    return main, tight, knobs


def execute(args: argparse.Namespace) -> int:
    limit = run_time_limit(args)
    extra = list(dict.fromkeys(with_format(p, args.format) for p in args.policy or []))
    for spec in extra:
        load_policy(spec)  # fail early, naming the spec
    seeds = list(range(args.seed, args.seed + args.seeds))
    main, tight, knobs = default_parts(seeds, extra, quick=args.quick)
    out = output_folder(Path(args.out))  # absolute, symlinks followed; a device refused
    with locked_folder(out, "report"):  # a second report into the folder refuses (exit 2)
        return _report(args, out, main, tight, knobs, extra, seeds, limit)


def _check_folder(out: Path, force: bool) -> bool:
    """Refuse (exit 2) a folder whose files a report would replace without
    having written them: its ``results.jsonl`` is not a results file, or
    it has none but holds a file of the report's names; unless ``force``.
    Whether to start from nothing (``force`` over another tool's file)."""
    results = output_file(
        out / "results.jsonl", "--out", force=force, owned=holds_results, mine=RESULTS_FILE
    )
    ours = holds_results(results)
    held = [n for n in (*PLOTS, "summary.md", "index.html") if (out / n).exists()]
    if held and not ours and not force:
        raise ConfigError(
            str(out),
            f"holds {', '.join(held[:3])}{' …' if len(held) > 3 else ''} but no report's "
            "results.jsonl: a report replaces only the files a report wrote.",
            "give --out a new folder, or add --force to replace them.",
        )
    return force and not ours


def _plan_message(results: Path, planned: int, reusable: set[str], stored: int) -> str:
    """What the report is about to do: reuse stored runs, simulate, or both.

    >>> _plan_message(Path("r.jsonl"), 10, set(), 4).endswith("settings: not reused).")
    True
    """
    if not reusable:
        held = (
            f"{results} holds {stored:,} rows of other code or settings: not reused"
            if stored
            else f"none stored in {results}"
        )
        return f"prunecheck report: simulating all {planned:,} runs ({held})."
    if len(reusable) == planned:
        return (
            f"prunecheck report: reusing all {planned:,} runs stored in {results} (same code, "
            "same settings): nothing to simulate, only redrawing. To re-simulate from "
            f"nothing, delete {results} (make report-fresh)."
        )
    return (
        f"prunecheck report: reusing {len(reusable):,} runs stored in {results} and "
        f"simulating the other {planned - len(reusable):,} (delete it to re-simulate all)."
    )


def _report(
    args: argparse.Namespace,
    out: Path,
    main: list[RunSpec],
    tight: list[RunSpec],
    knobs: list[RunSpec],
    extra: list[str],
    seeds: list[int],
    limit: float | None,
) -> int:
    started = time.perf_counter()
    results = out / "results.jsonl"
    fresh = _check_folder(out, args.force)
    planned = {s.key for s in (*main, *tight, *knobs)}
    stored = {} if fresh else read_rows(results, lambda _: None)  # run_sweep warns
    reusable = {k for k in planned & stored.keys() if stored[k].error is None}
    if not args.quiet and sys.stderr.isatty():  # the closing line says it in any case
        print(_plan_message(results, len(planned), reusable, len(stored)), file=sys.stderr)
    outcome = run_sweep(
        [*main, *tight, *knobs],
        out / "results.jsonl",
        jobs=args.jobs,
        quiet=args.quiet,
        timeout=args.policy_timeout,
        exclusive=True,
        scheduler=parse_scheduler(args.scheduler),
        time_limit=limit,
        command="report",
        fresh=fresh,
    )
    failure = policy_failure(outcome.rows, out / "results.jsonl")
    if failure is not None:  # no report from runs that have no verdict
        raise failure
    by_key = {r.key: r for r in outcome.rows}
    if not outcome.rows:
        print(
            f"prunecheck report: out of time (--time-limit {limit:g} s) before any run "
            f"finished; nothing written. Give it more time.",
            file=sys.stderr,
        )
        return EXIT_OUT_OF_TIME
    command = f"prunecheck report --out {args.out} --seed {args.seed}"
    if args.seeds != SEEDS:
        command += f" --seeds {args.seeds}"
    command += "".join(f" {p}" for p in extra) + (" --quick" if args.quick else "")
    data = ReportData(
        main=tuple(by_key[s.key] for s in main if s.key in by_key),
        tightness=tuple(by_key[s.key] for s in tight if s.key in by_key),
        knobs=tuple(by_key[s.key] for s in knobs if s.key in by_key),
        tight_level=TIGHT_LEVEL,
        seeds=tuple(seeds),
        horizon=main[0].horizon,
        command=command,
        planned=len({s.key for s in (*main, *tight, *knobs)}),
        time_limit=limit,
    )
    if not args.quiet and sys.stderr.isatty():
        print(
            f"prunecheck report: {len(outcome.rows)} runs simulated; drawing the plots and "
            "summary.md",
            file=sys.stderr,
        )
    files = write_report(data, out)
    took = time.perf_counter() - started
    print(
        f"prunecheck report: {len(outcome.rows)} runs ({outcome.ran} run now, "
        f"{outcome.reused} reused) in {took:.0f} s; wrote "
        + ", ".join(str(f) for f in [*files, out / "results.jsonl"]),
        file=sys.stderr,
    )
    if outcome.reused and not outcome.ran:
        print(
            f"prunecheck report: nothing was simulated: every run came from {results}, "
            f"so only the plots, summary.md and index.html were redrawn. To re-simulate "
            f"from nothing, delete {results} (make report-fresh) and run it again.",
            file=sys.stderr,
        )
    if not outcome.complete:
        print(
            f"prunecheck report: out of time (--time-limit {limit:g} s): {len(outcome.rows)} "
            f"of {data.planned} runs finished; the report covers only them (summary.md "
            "says which). Run the same command again to resume.",
            file=sys.stderr,
        )
        return EXIT_OUT_OF_TIME
    return 0
