"""``prunecheck check POLICY``: is this policy safe as it is?

Runs the fixed, seeded scenario suite and the adversarial search (see
:mod:`.check`), prints a table of the scenarios, the verdict and — when
unsafe — the minimal reproduction step by step.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.provider import Provider
from prunecheck.sim.api.check import check_policy
from prunecheck.sim.api.documents import check_document
from prunecheck.sim.api.junit import check_cases, check_properties, check_times, write_junit
from prunecheck.sim.api.minimal import shrink_note
from prunecheck.sim.api.providers import parse_providers
from prunecheck.sim.api.suite import (
    DEFAULT_HORIZON,
    DEFAULT_LEVELS,
    DEFAULT_SEEDS,
    DEFAULT_SLOW_LEVELS,
)
from prunecheck.sim.api.verdict import CheckResult, Verdict, provider_lines
from prunecheck.sim.cli.argtypes import integer, natural
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.failure_options import (
    add_failure_arguments,
    failure_database,
    report_problems,
)
from prunecheck.sim.cli.formats import FORMAT_HELP
from prunecheck.sim.cli.json_output import add_json_argument, record
from prunecheck.sim.cli.junit_output import add_junit_argument, check_junit
from prunecheck.sim.cli.limits import (
    add_fail_on_framework_argument,
    add_fail_vacuous_argument,
    add_time_limit,
    exit_status,
    vacuous_status,
)
from prunecheck.sim.cli.loop_options import refuse_scenario_for_policy, remember_defaults
from prunecheck.sim.cli.loop_runs import LOOP_HELP, check_loop_command
from prunecheck.sim.cli.policy_argument import add_policy_argument, read_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.runtime_options import add_runtime_arguments, runtime_config
from prunecheck.sim.cli.suite_options import add_suite_arguments
from prunecheck.sim.subjects.loops.scenarios import ScenarioClass
from prunecheck.sim.subjects.policy_spec import FORMATS, is_loop_spec, list_format
from prunecheck.sim.support.progress import progress_for

__all__ = ["execute", "register"]

EXAMPLE = """\
examples:
  prunecheck check lowest_salience
  prunecheck check examples/openai_keep_last.py:trim@openai --out repro/
  prunecheck check examples/openai_commit_boundary.py:trim@openai
  prunecheck check "langchain:strategy=last,start_on=human,include_system=true"
  prunecheck check mypkg.trim:select --gate commit --check-at after_batch

A list function trim(messages) -> messages is checked as FILE.py:trim@openai (or
@anthropic): it gets the context as OpenAI Chat Completions or Anthropic Messages
dicts (and max_tokens / token_counter if its signature names them); what it
drops is evicted.  Its provider's request rules and error texts apply unless
--provider says otherwise.

Where the runtime fires its budget check decides what a policy ever sees.
Without --check-at, every placement is checked (after every append, after a
batch completes, only before model calls) and one table shows each verdict; the
verdict line says which runtime it holds for, e.g. "safe if your runtime trims
only before model calls; UNSAFE if it trims after every append: reproduction
below".  With --check-at, only that runtime is checked.  --out DIR gets the first
unsafe placement's reproduction bundle; each other unsafe placement's goes to
DIR/<placement>/.

Every counterexample found is saved in the failure database (--failures DIR,
default $PRUNECHECK_FAILURES or .prunecheck/failures; --no-failures: none) and
replayed first the next time this policy is checked in this runtime: a fixed
bug that comes back is caught at once; the search of its placement is not run
(the table marks it "from the failure database"), the suite is, for its rows.
A bad saved entry is reported and discarded.

Each generated run draws its own shape (batches up to 8 calls, sessions up to
12 turns, resumed histories of up to 16 turns, outputs larger than the budget,
several results streaming at once).  The suite's slow-call scenarios
(--slow-levels, one per seed; default load 1) let batches start a test run or a
build minutes long while the user writes and budget checks fire: where a policy
that reads message ages meets a unit whose call still runs.  Each simulated
scenario is capped at
--max-events events (a capped scenario says so).  Progress goes to stderr: a
bar on a terminal, else a line every $PRUNECHECK_PROGRESS_INTERVAL seconds
(default 10; --quiet: none).  --time-limit stops the check with what it covered (the limit
is checked between scenarios and between search runs; a scenario is bounded by
--max-events).

exit status:
  0  safe (without --check-at: safe at every placement)
  1  unsafe (without --check-at: unsafe at one placement or more — the verdict
     line names the placements that are safe), with a minimal reproduction; also
     when the time limit stopped the check after a violation was found
  2  bad input, or a policy that raised, hung, returned garbage or mutated its
     input (finished scenarios are printed first)
  3  out of time: --time-limit came before any violation and before the check
     finished; no verdict (what was covered is printed)
  4  safe but vacuous, with --fail-vacuous only: the policy never proposed
     anything under pressure with live state, or no run produced an
     interleaving the invariant is about (without the flag: 0, and the verdict
     line says "safe, but vacuous" and which flag widens it)
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help=SUMMARIES["check"],
        description=__doc__,
        epilog=EXAMPLE + "\n" + LOOP_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_policy_argument(p, required=True, langchain_option=True)
    p.add_argument("--format", choices=list(FORMATS), help=FORMAT_HELP)
    add_runtime_arguments(p, RuntimeConfig(), several_providers=True)
    add_suite_arguments(p, slow_levels=True)
    p.add_argument("--seed", type=integer, default=0, help="seed of the adversarial search")
    p.add_argument(
        "--max-examples",
        type=natural,
        default=200,
        metavar="N",
        help="runs of the adversarial search (0: none; default 200)",
    )
    add_policy_timeout(p)
    p.add_argument(
        "--out", metavar="DIR", help="write the reproduction bundle here if unsafe (a new folder)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="let --out overwrite a folder that already holds files, and --junit replace a file",
    )
    p.add_argument(
        "--quiet", action="store_true", help="print only the verdict line (and no progress)"
    )
    add_time_limit(p)
    add_json_argument(p)
    add_junit_argument(p)
    add_fail_vacuous_argument(p)
    add_fail_on_framework_argument(p)
    add_failure_arguments(p)
    p.add_argument(
        "--scenario",
        metavar="CLASS[,CLASS]",
        help="for a loop: spec, the scenario classes to check (default: every class); "
        f"of {', '.join(c.value for c in ScenarioClass)}",
    )
    remember_defaults(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    read_policy_argument(args)
    spec: str = args.policy
    if is_loop_spec(spec):
        if args.out:  # refuse a bad --out before any work (exit 2)
            from prunecheck.sim.support.outputs import check_bundle_folder, output_folder

            args.out = str(output_folder(Path(args.out)))
            check_bundle_folder(Path(args.out), force=args.force)
        return check_loop_command(args)
    refuse_scenario_for_policy(args)
    if args.out:  # refuse a bad --out before any work (exit 2)
        from prunecheck.sim.support.outputs import check_bundle_folder, output_folder

        # resolved now: user code that changes directory later cannot move it
        args.out = str(output_folder(Path(args.out)))
        check_bundle_folder(Path(args.out), force=args.force)
    check_junit(args.junit, force=args.force)
    providers = parse_providers(args.provider)
    fmt = args.format or list_format(spec)
    base = RuntimeConfig(provider=Provider(fmt) if fmt else Provider.ANTHROPIC)
    config = runtime_config(args, base)
    placements = (config.check_at,) if args.check_at is not None else None
    db = failure_database(args)
    result = check_policy(
        spec,
        format=args.format,
        config=config,
        levels=args.levels or DEFAULT_LEVELS,
        seeds=args.seeds or DEFAULT_SEEDS,
        horizon=args.horizon or DEFAULT_HORIZON,
        slow_levels=DEFAULT_SLOW_LEVELS if args.slow_levels is None else args.slow_levels,
        seed=args.seed,
        max_examples=args.max_examples,
        timeout=args.policy_timeout,
        placements=placements or tuple(CheckAt),
        time_limit=args.time_limit,
        max_events=args.max_events,
        progress=progress_for(args.time_limit, command="check", quiet=args.quiet),
        failures=db if db is not None else False,
        providers=providers or None,
    )
    report_problems(db, "check")
    failed = result.error is not None
    bundles = _bundles(result, args.out, args.force) if not failed and args.out else {}
    if args.quiet:
        if not failed:
            print(result.verdict_line(bundles))
            for line in provider_lines(result):
                print(line)
    else:
        sys.stdout.write(result.summary(verdict=False))
        if not failed:
            print(result.verdict_line(bundles))
            for line in provider_lines(result):
                print(line)
        for p in result.placements or (result,):
            if p.reproduction is not None and not failed:
                where = f"checks {p.config.check_at}" if len(result.placements) > 1 else ""
                note = "; ".join(x for x in (where, shrink_note(p.reproduction)) if x)
                shown = f" ({note})" if note else ""
                found = p.reproduction.meta.get("found_by", {})
                if found.get("driver") == "failure database":
                    sys.stdout.write(
                        f"\nreplayed first: the saved failure {found.get('path')} (found with "
                        f"policy source {found.get('policy_digest') or 'unknown'}) still fails; "
                        "the search was not run for this placement (the suite was: its rows "
                        "above are as the first time).\n"
                    )
                sys.stdout.write(f"\nminimal reproduction{shown}:\n" + p.narrative)
    if failed:
        print(f"prunecheck check: {result.error}", file=sys.stderr)
    for placement, folder in bundles.items():
        print(f"reproduction bundle ({placement}) written to {folder}")
    status = vacuous_status(exit_status(result.verdict), result.vacuous, args)
    if args.json or args.junit:
        doc = check_document(result, bundles, status)
        record(args, doc)
        if args.junit:
            write_junit(
                args.junit,
                check_cases(doc, check_times(result)),
                name="check",
                properties=check_properties(doc),
            )
    return status


def _bundles(result: CheckResult, out: str, force: bool) -> dict[str, Path]:
    """Write each unsafe placement's reproduction: the first one's to
    ``out``, each other's to ``out/<placement>/``."""
    unsafe = [
        p
        for p in result.placements or (result,)
        if p.verdict is Verdict.UNSAFE and p.reproduction is not None
    ]
    return {
        str(p.config.check_at): p.bundle(
            Path(out) / str(p.config.check_at) if i else out, force=force
        )
        for i, p in enumerate(unsafe)
    }
