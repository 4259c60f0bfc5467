"""``prunecheck sweep loop:…``: an agent loop's session failure rates.

A ``loop:`` subject given to ``sweep`` runs :func:`prunecheck.sim.sweeps.loop_sweep.run_loop_sweep`:
per scenario class and load level (``--levels``, 0 to 1), ``--sessions``
seeded sessions of the agent's real loop in the SimPy simulator's time, one
JSON line each in ``--out`` (resumed when run again), and the table of
session failure rates.  The
options of the model runtime's grid (gates, placements, retries, tightness,
budgets, horizon, workers, a Dask scheduler) have nothing to act on in a
framework's own loop: given, each is refused with exit 2 naming it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prunecheck.model.errors import ConfigError
from prunecheck.sim.cli.json_output import record
from prunecheck.sim.cli.loop_options import given_options, parse_scenarios
from prunecheck.sim.support.progress import progress_for

__all__ = ["GRID_ONLY", "LOOP_SESSIONS", "sweep_loop"]

#: Sessions per scenario class and level unless ``--sessions`` says otherwise.
LOOP_SESSIONS = 50

#: ``sweep`` options of the model runtime's grid (their dests): refused for a loop.
GRID_ONLY = frozenset({
    "format", "gate", "check_at", "retry", "tightness", "seeds", "horizon", "budget",
    "hard_ceiling", "jobs", "scheduler", "max_retries", "policy_timeout",
})  # fmt: skip


def _refuse_grid_options(args: argparse.Namespace) -> None:
    for dest, flag in given_options(args).items():
        if dest in GRID_ONLY:
            raise ConfigError(
                flag,
                "does not apply to an agent loop (a loop: spec): it is a knob of prunecheck's "
                "model runtime, and the framework's own loop decides when it trims, retries "
                "and sends.",
                "leave it out; a loop sweep takes --levels (load levels), --sessions, "
                "--scenario, --plot and --seed.",
            )


def sweep_loop(args: argparse.Namespace, specs: list[str], target: Path, fresh: bool) -> int:
    """Run the loop sweep of ``specs`` (one agent) into ``target``; print the table."""
    from prunecheck.sim.api.documents import document
    from prunecheck.sim.sweeps.loop_sweep import loop_rate_table, run_loop_sweep

    if len(specs) != 1:
        raise ConfigError(
            "POLICY",
            f"names {len(specs)} subjects with an agent loop among them; a loop sweep takes "
            "one agent.",
            "sweep each agent into its own --out file, and policies apart.",
        )
    _refuse_grid_options(args)
    levels = _levels(args.levels)
    scenarios = parse_scenarios(args.scenario) if args.scenario else None
    sessions = LOOP_SESSIONS if args.sessions is None else int(args.sessions)
    plot = _plot_file(args.plot) if args.plot else None  # refused before any user code runs
    bar = progress_for(command="sweep", quiet=args.quiet)
    started: list[int] = []

    def on_row(done: int, total: int) -> None:
        if not started:
            started.append(total)
            bar.start(total, "sessions")
            bar.step(f"running {total} sessions of {specs[0]}")
        bar.finished()

    try:
        outcome = run_loop_sweep(specs[0], target, levels=levels, sessions=sessions,
                                 seed=int(args.seed), scenarios=scenarios, fresh=fresh,
                                 on_row=on_row)  # fmt: skip
    finally:
        bar.close()
    print(f"{len(outcome.rows)} sessions ({outcome.ran} run now, {outcome.reused} reused) -> "
          f"{args.out}", file=sys.stderr)  # fmt: skip
    sys.stdout.write(loop_rate_table(outcome.rows, outcome.not_applicable))
    if plot is not None and outcome.rows:
        from prunecheck.sim.reports.loop_rates import loop_rate_plot

        loop_rate_plot(outcome.rows, plot)
        print(f"failure rates drawn -> {args.plot}", file=sys.stderr)
    violated = sum(1 for r in outcome.rows if r.violations)
    record(args, document(
        "sweep", policy=specs[0], verdict="unsafe" if violated else "safe", exit_status=0,
        exercised={"sessions": len(outcome.rows), "ran": outcome.ran, "reused": outcome.reused},
        reproduction=str(args.out),
        details={"subject": "loop", "levels": levels, "violated_sessions": violated,
                 "not_applicable": list(outcome.not_applicable)},
    ))  # fmt: skip
    return 0


#: The first bytes of every PNG file: a plot a sweep drew may be drawn over.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(PNG_SIGNATURE)) == PNG_SIGNATURE


def _plot_file(text: str) -> Path:
    """The ``--plot`` file: a new file or a PNG (an earlier plot); never another file."""
    from prunecheck.sim.support.outputs import output_file

    if not text.lower().endswith(".png"):
        raise ConfigError(
            f"--plot {text}",
            "names the PNG picture of the loop sweep's failure rates; the name must end in .png.",
            "for example --plot rates.png.",
        )
    return output_file(Path(text), "--plot", owned=_is_png, mine="a PNG picture")


def _levels(text: str) -> list[float]:
    try:
        levels = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        levels = []
    if not levels or any(not 0 <= lv <= 1 for lv in levels):
        raise ConfigError(
            f"--levels {text}",
            "is the load levels of a loop sweep: numbers in [0, 1], comma-separated.",
            "for example --levels 0.1,0.5,1.",
        )
    return list(dict.fromkeys(levels))
