"""``prunecheck sweep``: policies × gates × runtime configurations × load
levels × seeds, simulated in parallel, one JSON line per run in ``--out``.

Rerunning the same command resumes: runs already in the file are reused.
At the end the file is sorted by run key (byte-identical for the same
seeds) and a table of session-level failure rates is printed: sessions
with at least one incident of a class, of all sessions, with exact 95%
intervals per 1,000 sessions, and the median user turns to the first
violation (Kaplan–Meier).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from prunecheck.model.config import CheckAt, RetryMode, RuntimeConfig, parse_knob
from prunecheck.model.errors import ConfigError
from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.model.provider import Provider
from prunecheck.sim.api.documents import document
from prunecheck.sim.cli.argtypes import count, integer, natural, seconds
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.formats import add_format_argument
from prunecheck.sim.cli.json_output import add_json_argument, record
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, add_run_time_limit, run_time_limit
from prunecheck.sim.cli.loop_options import remember_defaults
from prunecheck.sim.cli.policy_argument import add_policy_argument, read_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.runtime_options import CHECK_AT_HELP
from prunecheck.sim.drivers.simulator import DEFAULT_HORIZON
from prunecheck.sim.drivers.workload import SESSION_TURNS
from prunecheck.sim.stats.sessions import SessionRecord, observations, rate_of
from prunecheck.sim.stats.survival import kaplan_meier
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.policy_spec import is_loop_spec, parse_spec_or_none, with_format
from prunecheck.sim.sweeps.dask_pool import add_scheduler_option, parse_scheduler
from prunecheck.sim.sweeps.runs import Row
from prunecheck.sim.sweeps.sweep import (
    RESULTS_FILE,
    configs,
    holds_results,
    plan,
    policy_failure,
    run_sweep,
)

__all__ = ["add_grid_options", "execute", "rate_table", "register"]

EXAMPLE = f"""\
examples:
  prunecheck sweep --out sweep.jsonl --seeds 3
  prunecheck sweep loop:examples/loops/autogen_token_limited.py:agent --out loop.jsonl \\
      --levels 0.1,0.5,1 --sessions 100 --scenario cancel,trim   # an agent loop's rates
  prunecheck sweep --out mine.jsonl my_policy.py:select lowest_salience \\
      --gate none,commit --check-at after_append,after_batch --levels 0.25,0.5,1 --jobs 2
  prunecheck sweep --out sweep.jsonl --scheduler tcp://10.0.0.5:8786   # a Dask cluster

The unit is the session: a simulated agent's conversation, from its system prompt
until it ends naturally (after {SESSION_TURNS} user messages), is aborted (a rejection after the
runtime's --max-retries) or is cut by the horizon.  Rates are sessions with at least
one incident of the class, "K of N [low–high]" with the exact (Clopper–Pearson) 95%
interval per 1,000 sessions, pooled over levels and seeds.  Interrupt it at any time:
the same command resumes.  A policy that raises, hangs or returns garbage is recorded
as that run's error.
exit status: 0 done (violations are data, not failures), 2 bad input, 3 out of time
(--time-limit reached: the finished runs are kept, the table covers only them, and
the same command resumes).
"""

_T = TypeVar("_T")
_COLUMNS = (
    ("any violation", ANY_VIOLATION),
    ("orphan 400s", ORPHAN_REJECTION),
    ("dup. effects", IncidentKind.DUPLICATED_SIDE_EFFECT),
    ("truncated", IncidentKind.TRUNCATED_PAYLOAD),
    ("aborted", IncidentKind.SESSION_ABORT),
)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "sweep",
        help=SUMMARIES["sweep"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="results file (JSON lines); an existing one is resumed",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="let --out replace a file that is not a results file (its content is lost)",
    )
    add_grid_options(p)
    loops = p.add_argument_group("an agent loop (a loop: spec): session failure rates")
    loops.add_argument(
        "--sessions",
        type=count,
        default=None,
        metavar="N",
        help="sessions per scenario class and load level (default 50); a loop's "
        "--levels are load levels in [0, 1]: the tools' latency spread and the user's pace "
        "of that load, and the rate of faults (a tool failure or timeout, a cancel, a "
        "crash), none at 0",
    )
    loops.add_argument(
        "--scenario",
        metavar="LIST",
        help="the scenario classes of a loop sweep, comma-separated (default: every class "
        "the agent supports)",
    )
    loops.add_argument(
        "--plot",
        metavar="PNG",
        help="also draw the loop sweep's failure rates into this PNG: per scenario class, "
        "sessions violated per 1,000 (exact 95%% interval) by load level",
    )
    add_json_argument(p)
    remember_defaults(p)
    p.set_defaults(func=execute)


def add_grid_options(
    p: argparse.ArgumentParser,
    *,
    levels: str = "0,0.25,0.5,0.75,1",
    seeds: int = 2,
    horizon: float = DEFAULT_HORIZON,
) -> None:
    """The options that say which runs to make (shared with ``report``)."""
    add_policy_argument(
        p,
        many=True,
        help="the policies, as specs: NAME, module:attr, file.py:attr, file.py:attr@openai, "
        "ADAPTER:key=value,... (default: every built-in)",
    )
    add_format_argument(
        p,
        "every POLICY that is a file.py:attr or module:attr is a list "
        "function trim(messages) over this provider's message dicts; the "
        "sweep's runtimes then use its provider's rules and error texts",
    )
    p.add_argument(
        "--gate",
        default=",".join(g.value for g in Gate),
        metavar="LIST",
        help="gates, comma-separated (default: all)",
    )
    p.add_argument(
        "--check-at",
        default=CheckAt.AFTER_APPEND.value,
        metavar="LIST",
        help="when budget checks fire, comma-separated (default after_append): "
        + CHECK_AT_HELP.removeprefix("when the runtime fires its budget check: "),
    )
    p.add_argument(
        "--retry",
        default=RetryMode.RERUN_BATCH.value,
        metavar="LIST",
        help="retry modes, comma-separated (default rerun_batch)",
    )
    p.add_argument(
        "--levels",
        default=levels,
        metavar="LIST",
        help=f"load levels in [0, 1], comma-separated (default {levels})",
    )
    p.add_argument(
        "--tightness",
        metavar="LIST",
        help="override the load's budget tightness (turn tokens / budget)",
    )
    p.add_argument("--seed", type=integer, default=1, help="first seed (default 1)")
    p.add_argument(
        "--seeds",
        type=count,
        default=seeds,
        metavar="N",
        help=f"seeds per configuration: seed, seed+1, ... (default {seeds})",
    )
    p.add_argument(
        "--horizon",
        type=seconds,
        default=horizon,
        metavar="S",
        help=f"simulated seconds per run (default {horizon:g})",
    )
    p.add_argument("--budget", type=count, default=32_000, help="working budget (default 32000)")
    p.add_argument(
        "--hard-ceiling", type=count, default=40_000, help="hard ceiling (default 40000)"
    )
    p.add_argument(
        "--jobs",
        type=count,
        default=None,
        metavar="N",
        help="worker processes (default: all cores)",
    )
    add_scheduler_option(p)
    p.add_argument(
        "--max-retries",
        type=natural,
        default=None,
        metavar="N",
        help="retries after a rejected invocation before the runtime gives up "
        "and the session aborts (default 2)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress (bar or lines)")
    add_policy_timeout(p)
    add_run_time_limit(p)


def _split(text: str, name: str, parse: Callable[[str], _T]) -> list[_T]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"--{name}", "needs at least one value.", "values are comma-separated.")
    out = []
    for item in items:
        try:
            out.append(parse(item))
        except ValueError:
            raise ConfigError(
                f"--{name}",
                f"{item!r} is not a valid value.",
                "values are comma-separated, e.g. 0.25,0.5,1.",
            ) from None
    return list(dict.fromkeys(out))


def grid(
    args: argparse.Namespace,
) -> tuple[list[str], list[RuntimeConfig], list[float], list[float | None], list[int]]:
    """The sweep's axes from parsed options; ConfigError/PolicyError if bad."""
    read_policy_argument(args)
    fmt = getattr(args, "format", None)
    policies = list(dict.fromkeys(with_format(p, fmt) for p in args.policy or list(BUILTINS)))
    for spec in policies:
        load_system(spec)  # fail early, naming the spec (a policy or a runtime)
    retries = {} if args.max_retries is None else {"max_retries": args.max_retries}
    base = RuntimeConfig(
        budget=args.budget,
        hard_ceiling=args.hard_ceiling,
        provider=Provider(fmt) if fmt else Provider.ANTHROPIC,
        **retries,
    )
    runtime = configs(
        base,
        gates=_split(args.gate, "gate", lambda v: parse_knob("gate", v, "--gate")),
        check_at=_split(
            args.check_at, "check-at", lambda v: parse_knob("check_at", v, "--check-at")
        ),
        retry=_split(args.retry, "retry", lambda v: parse_knob("retry", v, "--retry")),
    )
    levels = _split(args.levels, "levels", float)
    if any(not 0 <= lv <= 1 for lv in levels):
        raise ConfigError(
            "--levels",
            f"load levels must be in [0, 1], got {levels}.",
            "for example --levels 0,0.5,1.",
        )
    tight: list[float | None] = [None]
    if args.tightness:
        tight = list(_split(args.tightness, "tightness", float))
        if any(t is not None and not 0 < t <= 4 for t in tight):
            raise ConfigError(
                "--tightness",
                f"must be in (0, 4], got {args.tightness}.",
                "it is turn tokens over budget, e.g. --tightness 0.3,0.6.",
            )
    seeds = list(range(args.seed, args.seed + args.seeds))
    return policies, runtime, levels, tight, seeds


def execute(args: argparse.Namespace) -> int:
    from prunecheck.sim.support.outputs import output_file

    # resolved (and refused: a device, another tool's file) before any user code runs
    target = output_file(Path(args.out), force=args.force, owned=holds_results, mine=RESULTS_FILE)
    fresh = args.force and not holds_results(target)
    read_policy_argument(args)
    if any(is_loop_spec(p) for p in args.policy or ()):
        from prunecheck.sim.cli.loop_sweep import sweep_loop

        return sweep_loop(args, list(args.policy), target, fresh)
    for flag, given in (
        ("--sessions", args.sessions is not None),
        ("--scenario", args.scenario),
        ("--plot", args.plot),
    ):
        if given:
            raise ConfigError(
                flag,
                "applies to an agent loop (a loop: spec) only: a policy's sweep runs the "
                "model runtime's sessions, one per agent of a run.",
                "leave it out, or sweep a loop: spec.",
            )
    policies, runtime, levels, tight, seeds = grid(args)
    limit = run_time_limit(args)
    # A runtime under test gates, places its budget checks and retries by
    # itself: it runs once per level and seed, not once per knob setting.
    own = [p for p in policies if _owns_placement(p)]
    specs = [
        *plan(
            [p for p in policies if p not in own],
            runtime,
            levels,
            seeds,
            tightness=tight,
            horizon=args.horizon,
        ),
        *plan(own, runtime[:1], levels, seeds, tightness=tight, horizon=args.horizon),
    ]
    out = Path(args.out)
    outcome = run_sweep(
        specs,
        target,
        jobs=args.jobs,
        quiet=args.quiet,
        timeout=args.policy_timeout,
        scheduler=parse_scheduler(args.scheduler),
        time_limit=limit,
        fresh=fresh,
    )
    print(
        f"{len(outcome.rows)} runs ({outcome.ran} run now, {outcome.reused} reused) -> {out}",
        file=sys.stderr,
    )
    sys.stdout.write(rate_table(outcome.rows))
    failure = policy_failure(outcome.rows, out)
    if failure is not None:
        raise failure
    status = 0 if outcome.complete else EXIT_OUT_OF_TIME
    record(args, _summary_document(outcome.rows, out, status, ran=outcome.ran))
    if not outcome.complete:
        print(
            f"prunecheck sweep: out of time (--time-limit {limit:g} s): {len(outcome.rows)} "
            f"of {len(outcome.rows) + outcome.skipped} runs finished; the table covers only "
            "them. Run the same command again to resume.",
            file=sys.stderr,
        )
        return EXIT_OUT_OF_TIME
    return 0


class _Group:
    __slots__ = ("errors", "invocations", "runs", "sessions")

    def __init__(self) -> None:
        self.runs = self.errors = self.invocations = 0
        self.sessions: list[SessionRecord] = []


def _median(sessions: Sequence[SessionRecord]) -> str:
    if not sessions:
        return "n/a"
    median = kaplan_meier(observations(sessions, ANY_VIOLATION)).median()
    return "not reached" if median is None else f"{median:g}"


def _owns_placement(spec: str) -> bool:
    parsed = parse_spec_or_none(spec)
    return parsed is not None and parsed.kind.owns_placement


#: The gate, check time and retry shown for a runtime that decides them.
ITS_OWN = "its own"


def _groups(rows: Sequence[Row]) -> dict[tuple[str, str, str, str], _Group]:
    """The rows pooled per policy × gate × check time × retry (a runtime
    under test: per runtime, its knobs "its own")."""
    groups: dict[tuple[str, str, str, str], _Group] = {}
    for row in rows:
        c = row.spec.config
        key = (
            (row.spec.policy, ITS_OWN, ITS_OWN, ITS_OWN)
            if _owns_placement(row.spec.policy)
            else (row.spec.policy, c.gate.value, c.check_at.value, c.retry.value)
        )
        group = groups.setdefault(key, _Group())
        group.runs += 1
        group.errors += row.error is not None
        group.invocations += row.invocations
        group.sessions.extend(row.sessions)
    return groups


def _summary_document(rows: Sequence[Row], out: Path, status: int, *, ran: int) -> dict[str, Any]:
    """sweep's --json summary: the rate table's groups, sessions that met
    each class out of all.  A sweep measures: it exits 0 whether or not a
    session met a violation; its verdict says whether one did."""
    groups: list[dict[str, Any]] = [
        {
            "policy": key[0],
            "gate": key[1],
            "check_at": key[2],
            "retry": key[3],
            "runs": g.runs,
            "sessions": len(g.sessions),
            "invocations": g.invocations,
            "errors": g.errors,
            "sessions_met": {
                str(k): sum(1 for x in g.sessions if k in x.first) for _, k in _COLUMNS
            },
            "median_turns_to_violation": _median(g.sessions),
        }
        for key, g in sorted(_groups(rows).items())
    ]
    return document(
        "sweep",
        verdict="out_of_time"
        if status
        else "unsafe"
        if any(g["sessions_met"][str(ANY_VIOLATION)] for g in groups)
        else "safe",
        exit_status=status,
        exercised={
            "runs": len(rows),
            "ran_now": ran,
            "sessions": sum(g["sessions"] for g in groups),
            "invocations": sum(g["invocations"] for g in groups),
        },
        details={"results": str(out), "groups": groups},
    )


def rate_table(rows: Sequence[Row]) -> str:
    """Session rates per policy × gate × check time × retry, pooled over
    levels and seeds, then one line per run that ended with a policy error."""
    groups = _groups(rows)
    head = [
        "policy",
        "gate",
        "check_at",
        "retry",
        "runs",
        "sessions",
        "invocations",
        *(name for name, _ in _COLUMNS),
        "median turns",
        "errors",
    ]
    body = [
        [
            *key,
            str(g.runs),
            str(len(g.sessions)),
            str(g.invocations),
            *(rate_of(g.sessions, k).text() for _, k in _COLUMNS),
            _median(g.sessions),
            str(g.errors),
        ]
        for key, g in sorted(groups.items())
    ]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
        for r in [head, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    text = "\n".join(lines) + "\n"
    text += (
        "unit: sessions. Each rate is 'K of N': K sessions of N met the class at least "
        "once; [95% exact (Clopper-Pearson) interval, per 1,000 sessions]. Median turns: "
        "user messages into a session until half the sessions had a violation "
        "(Kaplan-Meier; 'not reached': more than half stayed intact)\n"
    )
    errors = [r for r in rows if r.error is not None]
    for row in errors:
        text += f"policy error in {row.key}: {row.error}\n"
    return text
