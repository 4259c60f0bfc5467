"""``prunecheck sweep``: policies × gates × runtime configurations × load
levels × seeds, simulated in parallel, one JSON line per run in ``--out``.

Rerunning the same command resumes: runs already in the file are reused.
At the end the file is sorted by run key (byte-identical for the same
seeds) and a table of failure rates per 1,000 model invocations, with 95%
Wilson intervals, is printed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from prunecheck.model.errors import ConfigError
from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS
from prunecheck.model.runtime import CheckAt, RetryMode, RuntimeConfig, parse_knob

from .dask_pool import add_scheduler_option, parse_scheduler
from .loading import DEFAULT_TIMEOUT, load_policy
from .simulator import DEFAULT_HORIZON
from .stats import Pooled
from .sweep import Row, configs, plan, run_sweep

__all__ = ["add_grid_options", "rate_table", "register", "run"]

EXAMPLE = """\
examples:
  prunecheck sweep --out sweep.jsonl --seeds 3
  prunecheck sweep --out mine.jsonl --policy my_policy.py:select --policy lowest_salience \\
      --gate none,commit --check-at after_append,after_batch --levels 0.25,0.5,1 --jobs 2
  prunecheck sweep --out sweep.jsonl --scheduler tcp://10.0.0.5:8786   # a Dask cluster

Rates are model invocations that saw at least one incident of a class (since
the invocation before) per 1,000 invocations, pooled over levels and seeds,
with 95% Wilson intervals.  Interrupt it at any time: the same command resumes.
A policy that raises, hangs or returns garbage is recorded as that run's error.
exit status: 0 done (violations are data, not failures), 2 bad input.
"""

_T = TypeVar("_T")
_COLUMNS = (
    ("any violation", "any_violation"),
    ("orphan 400s", "provider_rejection:result_without_call"),
    ("dup. effects", "duplicated_side_effect"),
    ("truncated", "truncated_payload"),
    ("ceiling", "hard_ceiling_overrun"),
)


def register(sub: Any) -> None:
    p = sub.add_parser("sweep", help="simulate policies × gates × runtimes × loads × seeds",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, metavar="FILE",
                   help="results file (JSON lines); an existing one is resumed")
    add_grid_options(p)
    p.set_defaults(func=run)


def add_grid_options(p: argparse.ArgumentParser, *, levels: str = "0,0.25,0.5,0.75,1",
                     seeds: int = 2, horizon: float = DEFAULT_HORIZON) -> None:
    """The options that say which runs to make (shared with ``report``)."""
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="a policy: built-in name, module:attr or file.py:attr (repeatable; "
                   "default: every built-in)")
    p.add_argument("--gate", default=",".join(g.value for g in Gate), metavar="LIST",
                   help="gates, comma-separated (default: all)")
    p.add_argument("--check-at", default=CheckAt.AFTER_APPEND.value, metavar="LIST",
                   help="when budget checks fire, comma-separated (default after_append)")
    p.add_argument("--retry", default=RetryMode.RERUN_BATCH.value, metavar="LIST",
                   help="retry modes, comma-separated (default rerun_batch)")
    p.add_argument("--levels", default=levels, metavar="LIST",
                   help=f"load levels in [0, 1], comma-separated (default {levels})")
    p.add_argument("--tightness", metavar="LIST",
                   help="override the load's budget tightness (turn tokens / budget)")
    p.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    p.add_argument("--seeds", type=int, default=seeds, metavar="N",
                   help=f"seeds per configuration: seed, seed+1, ... (default {seeds})")
    p.add_argument("--horizon", type=float, default=horizon, metavar="S",
                   help=f"simulated seconds per run (default {horizon:g})")
    p.add_argument("--budget", type=int, default=32_000, help="working budget (default 32000)")
    p.add_argument("--hard-ceiling", type=int, default=40_000,
                   help="hard ceiling (default 40000)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="worker processes (default: all cores)")
    add_scheduler_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--policy-timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds one policy call may take (default {DEFAULT_TIMEOUT:g})")


def _split(text: str, name: str, parse: Callable[[str], _T]) -> list[_T]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"--{name}", "needs at least one value.", "values are comma-separated.")
    out = []
    for item in items:
        try:
            out.append(parse(item))
        except ValueError:
            raise ConfigError(f"--{name}", f"{item!r} is not a valid value.",
                              "values are comma-separated, e.g. 0.25,0.5,1.") from None
    return list(dict.fromkeys(out))


def grid(args: argparse.Namespace) -> tuple[list[str], list[RuntimeConfig], list[float],
                                             list[float | None], list[int]]:
    """The sweep's axes from parsed options; ConfigError/PolicyError if bad."""
    policies = list(dict.fromkeys(args.policy or list(BUILTINS)))
    for spec in policies:
        load_policy(spec)  # fail early, naming the spec
    if args.seeds < 1:
        raise ConfigError("--seeds", f"must be at least 1, got {args.seeds}.",
                          "it counts seeds per configuration, e.g. --seeds 3.")
    if args.horizon <= 0:
        raise ConfigError("--horizon", f"must be positive, got {args.horizon:g}.",
                          "simulated seconds per run, e.g. --horizon 600.")
    if args.jobs is not None and args.jobs < 1:
        raise ConfigError("--jobs", f"must be at least 1, got {args.jobs}.",
                          "leave it out to use every core.")
    base = RuntimeConfig(budget=args.budget, hard_ceiling=args.hard_ceiling)
    runtime = configs(
        base,
        gates=_split(args.gate, "gate", lambda v: parse_knob("gate", v, "--gate")),
        check_at=_split(args.check_at, "check-at",
                        lambda v: parse_knob("check_at", v, "--check-at")),
        retry=_split(args.retry, "retry", lambda v: parse_knob("retry", v, "--retry")),
    )
    levels = _split(args.levels, "levels", float)
    if any(not 0 <= lv <= 1 for lv in levels):
        raise ConfigError("--levels", f"load levels must be in [0, 1], got {levels}.",
                          "for example --levels 0,0.5,1.")
    tight: list[float | None] = [None]
    if args.tightness:
        tight = list(_split(args.tightness, "tightness", float))
        if any(t is not None and not 0 < t <= 4 for t in tight):
            raise ConfigError("--tightness", f"must be in (0, 4], got {args.tightness}.",
                          "it is turn tokens over budget, e.g. --tightness 0.3,0.6.")
    seeds = list(range(args.seed, args.seed + args.seeds))
    return policies, runtime, levels, tight, seeds


def run(args: argparse.Namespace) -> int:
    policies, runtime, levels, tight, seeds = grid(args)
    specs = plan(policies, runtime, levels, seeds, tightness=tight, horizon=args.horizon)
    out = Path(args.out)
    outcome = run_sweep(specs, out, jobs=args.jobs, quiet=args.quiet, timeout=args.policy_timeout,
                        scheduler=parse_scheduler(args.scheduler))
    print(f"{len(outcome.rows)} runs ({outcome.ran} run now, {outcome.reused} reused) "
          f"-> {out}", file=sys.stderr)
    sys.stdout.write(rate_table(outcome.rows))
    return 0


def rate_table(rows: Sequence[Row]) -> str:
    """Rates per policy × gate × check time × retry, pooled over levels and seeds,
    then one line per run that ended with a policy error."""
    groups: dict[tuple[str, str, str, str], Pooled] = {}
    for row in rows:
        c = row.spec.config
        key = (row.spec.policy, c.gate.value, c.check_at.value, c.retry.value)
        groups.setdefault(key, Pooled()).add(
            invocations=row.invocations, events=row.events, sim_time=row.sim_time,
            time_deferred=row.time_deferred, incidents=row.incidents, exposed=row.exposed,
            error=row.error is not None)
    head = ["policy", "gate", "check_at", "retry", "runs", "invocations",
            *(name for name, _ in _COLUMNS), "errors"]
    body = [[*key, str(p.runs), str(p.invocations), *(p.rate(k).text() for _, k in _COLUMNS),
             str(p.errors)] for key, p in sorted(groups.items())]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    text = "\n".join(lines) + "\n"
    text += ("rates: invocations per 1,000 that saw the incident class since the invocation "
             "before, [95% Wilson interval]\n")
    errors = [r for r in rows if r.error is not None]
    for row in errors:
        text += f"policy error in {row.key}: {row.error}\n"
    return text
