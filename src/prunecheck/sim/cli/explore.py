"""``prunecheck explore``: exhaustive breadth-first exploration of every event
interleaving of a small configuration; writes a shortest counterexample as a
reproduction bundle, or says that there is none up to the depth."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.vacuity import vacuous_clause
from prunecheck.sim.cli.argtypes import count, natural
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.counterexample import report_counterexample
from prunecheck.sim.cli.driver_options import (
    add_runtime_arguments,
    add_shape_arguments,
    check_out_arg,
    config_from_args,
    parse_target,
    shape_from_args,
    spec_from_args,
    system_from_args,
)
from prunecheck.sim.cli.json_output import add_json_argument, driver_document
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, add_fail_vacuous_argument, vacuous_status
from prunecheck.sim.cli.loop_options import refuse_scenario_for_policy, remember_defaults
from prunecheck.sim.cli.policy_argument import read_policy_argument
from prunecheck.sim.drivers.explore import MAX_STATES, ExploreResult
from prunecheck.sim.drivers.shape import EXPLORE_TIME_STEPS, Shape
from prunecheck.sim.subjects.policy_spec import is_loop_spec
from prunecheck.sim.support.progress import progress_for

__all__ = ["execute", "register"]

EXAMPLE = f"""\
example:
  prunecheck explore lowest_salience --depth 6 --out repro/
  prunecheck explore unit_safe --gate none --depth 8
  prunecheck explore recency --gate commit --depth 9 --max-states 500000

Every history opens as a real session does (system prompt, then the user's
first message); --depth counts the events after that opening.  Budget checks
fire only where --check-at puts them.  The default runtime is check's and
search's (budget 32000), but not the shape: explore enumerates every
interleaving, so its default shape is small enough for that — the opening user
message and one more (it may arrive while a batch is pending), 1 assistant
text, up to 2 batches of up to 2 calls, 2 chunks per stream, sizes as a share
of --budget (two user messages and a result are over it) — while search and
check draw runs from a much wider one (batches of 8 calls, 12 turns, outputs
over the budget, gaps of time between events).  Time does not jump unless
--time-steps says by how much (each event comes a second after the one
before); the output says what was done with time.  Its
counterexample is the shortest within its own shape; one of search's can be
shorter when it uses sizes this shape lacks.  States are canonical (ids renamed,
interchangeable calls sorted) and remembered as 64-bit fingerprints (about
20-30 bytes a state, as TLC does); a counterexample is rebuilt by replaying its
path.  The probability that two states explored share a fingerprint,
n(n-1)/2^65, is printed.  Capped at --max-states (default {MAX_STATES}); a
capped run says how deep it got and proves nothing beyond.  A list function is
explored as FILE.py:trim@openai (or @anthropic).  Progress goes to stderr (a
bar on a terminal, else a line every $PRUNECHECK_PROGRESS_INTERVAL seconds,
default 10).

exit status: 0 no violation up to the depth, 1 a counterexample, 2 bad input,
3 out of time: --time-limit came before the depth and before any violation; no
verdict (the depth explored completely is printed); 4 (only with --fail-vacuous)
no violation, but vacuous: the transitions' coverage is printed (budget checks,
pressure, live state, proposals, messages mid-batch), and a shape that never
produced what the invariant is about says "safe, but vacuous" and which flag
widens it (exit 0 without the flag).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "explore",
        help=SUMMARIES["explore"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_runtime_arguments(p)
    p.add_argument(
        "--depth",
        type=natural,
        required=True,
        metavar="N",
        help="longest event sequence to explore",
    )
    p.add_argument(
        "--max-states",
        type=count,
        default=MAX_STATES,
        metavar="N",
        help=f"stop after this many distinct states (default {MAX_STATES})",
    )
    add_shape_arguments(p, Shape.small())
    p.add_argument(
        "--max-waits",
        type=natural,
        default=None,
        metavar="N",
        help="time jumps (--time-steps) one explored history may take (default 1)",
    )
    p.add_argument(
        "--scenario",
        metavar="NAME",
        help="an agent loop's scenario class to walk (loop: specs only; default parallel)",
    )
    p.add_argument(
        "--values",
        type=natural,
        default=3,
        metavar="N",
        help="an agent loop's alternatives per drawn value (loop: specs only; default 3, 0: all)",
    )
    add_json_argument(p)
    add_fail_vacuous_argument(p)
    p.set_defaults(func=execute)
    remember_defaults(p)


def execute(args: argparse.Namespace) -> int:
    from prunecheck.sim.api.python_api import run_explore

    read_policy_argument(args)
    if args.policy is not None and is_loop_spec(str(args.policy)):
        from prunecheck.sim.cli.loop_explore import explore_loop_command

        return explore_loop_command(args)
    refuse_scenario_for_policy(args)
    if args.values != 3:
        raise ConfigError(
            "--values",
            "sets an agent loop's alternatives per drawn value; "
            f"{args.policy!r} is not a loop: spec.",
            "drop --values (the model runtime's explorer takes every value of its shape).",
        )
    config = config_from_args(args)
    target = parse_target(args.target)
    check_out_arg(args)
    shape = shape_from_args(args, Shape.small)
    if args.depth < 1:
        raise ConfigError("--depth", f"must be at least 1, got {args.depth}.")
    if args.max_states < 1:
        raise ConfigError("--max-states", f"must be at least 1, got {args.max_states}.")
    system = system_from_args(args)
    spec = spec_from_args(args)
    result = run_explore(  # the API, with its progress
        system,
        config,
        depth=args.depth,
        shape=shape,
        target=target,
        max_states=args.max_states,
        time_limit=args.time_limit,
        progress=progress_for(args.time_limit, command="explore"),
    )

    def verdict(status: int, bundle: Path | None = None) -> int:
        driver_document(
            "explore",
            args,
            status=status,
            spec=spec,
            config=config,
            exercised={
                "states": result.states,
                "transitions": result.transitions,
                "depth_reached": result.depth_reached,
            },
            incidents=result.incidents if result.counterexample is not None else (),
            reproduction=bundle,
            coverage=result.coverage,
            details={
                "depth": args.depth,
                "capped": result.capped,
                "timed_out": result.timed_out,
                "reproduction_events": (
                    None if result.counterexample is None else len(result.counterexample.events)
                ),
            },
        )
        return status

    print(
        f"prunecheck explore: {result.states} states, {result.transitions} transitions, "
        f"depth {result.depth_reached} reached ({result.seconds:.1f} s; checks "
        f"{config.check_at}, provider {config.provider}, retries {config.max_retries} "
        f"({config.retry}))."
    )
    print(
        f"  {result.states_per_second:,.0f} states/s; {result.bytes_per_state:.0f} bytes a "
        f"state; fingerprint collision probability {result.collision_probability:.1e} "
        "(n(n-1)/2^65)."
    )
    print(
        f"  shape: up to {shape.max_batches} batch(es) of up to {shape.max_calls} call(s), "
        f"{shape.max_chunks} chunk(s) a stream, {shape.max_users} user message(s) — "
        "enumerable, so smaller than the one search and check draw from (a counterexample "
        "of theirs can be shorter)."
    )
    print(f"  time: {_time_line(result, shape)}")
    if result.counterexample is not None:
        lead = f"shortest counterexample ({len(result.counterexample.events)} events)"
        bundle = report_counterexample(
            result.counterexample, result.incidents, system, args.out, lead, force=args.force
        )
        return verdict(1, bundle)
    print("\n".join(result.coverage.lines()))
    clause = vacuous_clause(result.coverage, "explore")
    what = "/".join(sorted(target)) if target else "violation"
    if result.timed_out:
        print(
            f"out of time at --time-limit {args.time_limit:g} s: no {what} in the "
            f"{result.states} states seen, but only depth {result.depth_reached} of "
            f"{args.depth} was explored completely; no verdict."
        )
        return verdict(EXIT_OUT_OF_TIME)
    if result.capped:
        print(
            f"stopped at --max-states {args.max_states}: no {what} in the {result.states} "
            f"states seen, but only depth {result.depth_reached} of {args.depth} was "
            "explored completely. Raise --max-states or shrink the shape for a proof."
        )
    else:
        print(f"no {what} in {result.states} states up to depth {args.depth}.")
    if clause is not None:
        print(f"verdict: {clause}.")
    return verdict(vacuous_status(0, clause is not None, args))


def _time_line(result: ExploreResult, shape: Shape) -> str:
    """What the exploration did with time, in words."""
    if not result.reads_times:
        return (
            "not branched: the policy reads creation times only to order messages, "
            "so a time jump could not change what it does."
        )
    if not result.time_steps:
        return (
            "not branched (each event a second after the one before); --time-steps "
            f"{','.join(map(str, EXPLORE_TIME_STEPS))} lets the user's message come "
            "that many seconds later while a call runs."
        )
    steps = ", ".join(f"+{t} s" for t in result.time_steps)
    return (
        f"the user's message may come {steps} later while a call runs "
        f"(at most {shape.max_waits} jump(s) a history; --time-steps, --max-waits)."
    )
