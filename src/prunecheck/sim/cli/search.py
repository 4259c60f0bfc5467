"""``prunecheck search``: adversarial search (Hypothesis) for an event
sequence on which a policy breaks the commit-boundary invariant; writes the
shrunk reproduction bundle.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from prunecheck.sim.api.vacuity import vacuous_clause
from prunecheck.sim.cli.argtypes import count, integer
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.counterexample import report_counterexample
from prunecheck.sim.cli.driver_options import (
    BASE,
    add_runtime_arguments,
    add_shape_arguments,
    check_out_arg,
    config_from_args,
    parse_target,
    shape_from_args,
    spec_from_args,
    system_from_args,
)
from prunecheck.sim.cli.failure_options import (
    add_failure_arguments,
    failure_database,
    report_problems,
)
from prunecheck.sim.cli.json_output import add_json_argument, driver_document
from prunecheck.sim.cli.limits import (
    EXIT_OUT_OF_TIME,
    add_fail_on_framework_argument,
    add_fail_vacuous_argument,
    vacuous_status,
)
from prunecheck.sim.cli.loop_options import refuse_scenario_for_policy, remember_defaults
from prunecheck.sim.cli.loop_runs import LOOP_HELP, search_loop_command
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.subjects.digest import policy_digest
from prunecheck.sim.subjects.loops.scenarios import ScenarioClass
from prunecheck.sim.subjects.policy_spec import is_loop_spec
from prunecheck.sim.support.progress import progress_for

# The options shared with explore live in driver_options; they stay importable
# from here, where they lived before.
__all__ = ["execute", "register"]

EXAMPLE = """\
example:
  prunecheck search lowest_salience --out repro/
  prunecheck search lowest_salience --target truncated_payload --seed 3 --out repro/
  prunecheck search my_trim.py:select --gate commit --max-examples 500
  prunecheck search runtime:examples/agent_loop.py:NaiveLoop --out repro/
  prunecheck search my_trim.py:trim@openai --check-at before_invoke

Each run opens as a real session does (system prompt, then a user message, or a
persisted history it resumes, possibly cut off by a crash), then is a sequence of
runtime events (batches, result chunks in any order, streamed text, user messages
mid-batch, invocations, failures and timeouts, retries, external writes).  Budget
checks fire only where --check-at puts them, as in the runtime checked.  Each run
draws its own bounds within the shape (swarm testing): most are small, some reach
batches of 8 calls, 12 turns, 16 resumed turns, outputs larger than the budget.
A violation is shrunk to a short trace and written as a bundle (trace.json,
test_reproduction.py, narrative.md, timeline.png, request.json) to --out.  Sizes
scale with --budget.  search, explore and check share the default runtime
(budget 32000); search and check share the default shape (explore enumerates a
smaller one).  A list function trim(messages) is searched as FILE.py:trim@openai (its
provider's rules and error texts apply unless --provider says otherwise).  On a
terminal, progress is a bar on stderr; else a line there every
$PRUNECHECK_PROGRESS_INTERVAL seconds (default 10; 0: none).

exit status: 0 no violation found, 1 a violation found (also one found before
--time-limit stopped the search), 2 bad input, 3 out of time: --time-limit came
before any violation and before the search finished; no verdict; 4 (only with
--fail-vacuous) no violation, but vacuous: what the runs exercised is printed
(budget checks, pressure, live state, proposals) and a safe that never
exercised what the invariant is about says "safe, but vacuous" and which flag
widens it (exit 0 without the flag).  Costs (deferrals, hard-ceiling overruns,
spills) are reported, never failed on.
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "search",
        help=SUMMARIES["search"],
        description=__doc__,
        epilog=EXAMPLE + "\n" + LOOP_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_runtime_arguments(p)
    p.add_argument("--seed", type=integer, default=0, help="the same seed gives the same result")
    p.add_argument(
        "--max-examples",
        type=count,
        default=200,
        metavar="N",
        help="runs to generate (default 200; shrinking comes on top)",
    )
    add_shape_arguments(p, Shape.for_budget(BASE.budget))
    p.add_argument(
        "--scenario",
        choices=[c.value for c in ScenarioClass],
        help="for a loop: spec, the scenario class to search (default parallel)",
    )
    add_json_argument(p)
    add_fail_vacuous_argument(p)
    add_fail_on_framework_argument(p)
    add_failure_arguments(p)
    remember_defaults(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from prunecheck.sim.api.python_api import run_search, saved_failure

    if is_loop_spec(str(getattr(args, "policy", None) or "")):
        check_out_arg(args)
        return search_loop_command(args)
    refuse_scenario_for_policy(args)
    config = config_from_args(args)
    target = parse_target(args.target)
    check_out_arg(args)
    shape = shape_from_args(args, Shape.for_budget)
    spec = spec_from_args(args)
    system = system_from_args(args)
    db = failure_database(args)
    try:
        result = run_search(  # the API: the failure database first, the search, the save
            system,
            config,
            seed=args.seed,
            max_examples=args.max_examples,
            shape=shape,
            target=target,
            time_limit=args.time_limit,
            progress=progress_for(args.time_limit, command="search"),
            failures=db if db is not None else False,
        )
    finally:
        report_problems(db, "search")
    saved = saved_failure(result)
    if saved is not None and result.trace is not None:
        lead = (
            f"prunecheck search: a saved failure still fails ({saved.get('path')}; found with "
            f"policy source {saved.get('policy_digest') or 'unknown'}, now "
            f"{policy_digest(spec)}); not searched again"
        )
        bundle = report_counterexample(
            result.trace, result.incidents, system, args.out, lead, force=args.force
        )
        driver_document(  # --json: the saved failure, replayed, is the verdict
            "search",
            args,
            status=1,
            spec=spec,
            config=config,
            exercised={"examples": 0, "saved_failures_replayed": 1},
            incidents=result.incidents,
            reproduction=bundle,
            details={
                "seed": args.seed,
                "saved_failure": str(saved.get("path")),
                "saved_policy_digest": saved.get("policy_digest") or None,
                "policy_digest": policy_digest(spec),
                "reproduction_events": len(result.trace.events),
            },
        )
        return 1
    costs = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(result.costs.items()))

    def verdict(status: int, bundle: Path | None = None) -> int:
        driver_document(
            "search",
            args,
            status=status,
            spec=spec,
            config=config,
            exercised={"examples": result.examples},
            incidents=result.incidents if result.found else (),
            reproduction=bundle,
            coverage=result.coverage,
            details={
                "seed": args.seed,
                "costs": dict(sorted(result.costs.items())),
                "timed_out": result.timed_out,
                "reproduction_events": None if result.trace is None else len(result.trace.events),
            },
        )
        return status

    where = (
        f"policy {spec}, gate {config.gate}, checks {config.check_at}, provider "
        f"{config.provider}, retries {config.max_retries} ({config.retry}), "
        f"seed {args.seed}"
    )
    if not result.found or result.trace is None:
        what = "no " + ("/".join(sorted(target)) if target else "violation")
        if result.timed_out:
            print(
                f"prunecheck search: out of time after {result.examples} of "
                f"{args.max_examples} runs ({where}, {result.seconds:.1f} s): {what} in "
                "what was covered; no verdict."
            )
            print(f"costs met (reported, not failed on): {costs or 'none'}.")
            print("\n".join(result.coverage.lines()))
            return verdict(EXIT_OUT_OF_TIME)
        print(
            f"prunecheck search: {what} in {result.examples} runs ({where}, "
            f"{result.seconds:.1f} s)."
        )
        print(f"costs met (reported, not failed on): {costs or 'none'}.")
        print("\n".join(result.coverage.lines()))
        clause = vacuous_clause(result.coverage, "search")
        if clause is not None:
            print(f"verdict: {clause}.")
        return verdict(vacuous_status(0, clause is not None, args))
    stopped = " — stopped at --time-limit, shrinking cut short" if result.timed_out else ""
    lead = (
        f"prunecheck search: found after {result.examples} runs "
        f"({result.first_seconds or 0:.2f} s; {result.first_length} events, shrunk to "
        f"{len(result.trace.events)}; {where}{stopped})"
    )
    bundle = report_counterexample(
        result.trace, result.incidents, system, args.out, lead, force=args.force
    )
    return verdict(1, bundle)
