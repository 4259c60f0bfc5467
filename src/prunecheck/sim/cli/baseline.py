"""``prunecheck baseline --out FILE``: record a runtime's incident rates.

Runs the fixed, seeded scenario suite (simulated runs at a few load levels ×
seeds; seeds 1-8 unless --seeds says otherwise, more than check's 1-3, so
that regress has the sessions to tell a regression of about one session in
ten from chance) for one policy in one runtime, records the policy's source
digest and the runtime's, replays the reproduction corpus under
the runtime's knobs, and writes both to FILE for ``prunecheck regress``.
The file is rewritten after every run, so an interrupted or failed baseline
keeps what finished (marked incomplete; ``regress`` refuses it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.sim.api.regress_api import baseline_policy
from prunecheck.sim.api.suite import BASELINE_SEEDS
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.formats import add_format_argument, provider_default
from prunecheck.sim.cli.policy_argument import add_policy_argument, read_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.runtime_options import add_runtime_arguments, runtime_config
from prunecheck.sim.cli.suite_options import DEFAULT_CORPUS, add_suite_arguments, default_corpus
from prunecheck.sim.subjects.policy_spec import with_format
from prunecheck.sim.support.outputs import output_file

__all__ = ["DEFAULT_POLICY", "execute", "register"]

#: The policy a baseline records when none is given.
DEFAULT_POLICY = "lowest_salience"

EXAMPLE = """\
examples:
  prunecheck baseline --out baseline.json lowest_salience --gate commit
  prunecheck baseline --out b.json mypkg.trim:select --check-at after_batch \\
      --levels 0.2,0.6,1 --seeds 1-5 --corpus tests/corpus

then, after changing the runtime:
  prunecheck regress --baseline baseline.json --gate none     # flags the weaker runtime
exit status: 0 written, 2 bad input or a policy error (the finished runs are kept in FILE,
marked incomplete).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "baseline",
        help=SUMMARIES["baseline"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, metavar="FILE", help="baseline JSON to write")
    p.add_argument(
        "--force", action="store_true", help="let --out replace a file that already exists"
    )
    add_policy_argument(p, help=f"the policy spec (default {DEFAULT_POLICY})")
    add_format_argument(p)
    add_runtime_arguments(p, RuntimeConfig())
    add_suite_arguments(p, seeds=BASELINE_SEEDS)
    p.add_argument(
        "--corpus",
        metavar="DIR",
        help=f"reproduction traces to replay (default {DEFAULT_CORPUS} when it exists)",
    )
    add_policy_timeout(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    read_policy_argument(args)
    out = output_file(args.out, force=args.force)  # refused before any work (exit 2)
    args.policy = with_format(args.policy or DEFAULT_POLICY, args.format)
    config = runtime_config(args, provider_default(RuntimeConfig(), args.policy))
    run = baseline_policy(
        args.policy,
        config=config,
        levels=args.levels,
        seeds=args.seeds,
        horizon=args.horizon,
        corpus=default_corpus(args.corpus),
        out=out,
        policy_timeout=args.policy_timeout,
    )
    final, error = run.baseline, run.error
    invocations = sum(r.invocations for r in final.runs)
    sessions = sum(len(r.sessions) for r in final.runs)
    print(
        f"baseline {args.out}: policy {args.policy}, gate {config.gate}, checks {config.check_at}; "
        f"{len(final.runs)} of {final.suite.size()} runs, {sessions} sessions, {invocations} "
        "invocations; "
        f"{len(final.corpus)} corpus trace(s)"
    )
    if error is not None:
        print(
            f"prunecheck baseline: {error} (the {len(final.runs)} finished run(s) are in "
            f"{args.out}, marked incomplete; regress will refuse it)",
            file=sys.stderr,
        )
        return 2
    return 0
