"""``prunecheck shrink TRACE``: shrink a failing trace to a minimal one.

Any failing trace — from ``check``'s suite, a sweep's results, ``explore``,
``search``, or an incident imported from production — is reduced by delta
debugging over its events to a minimal trace with the same incident class
(its first violation's, or ``--target``'s), then run on to the harm the
violation causes (the rejected invocation and its HTTP 400, the retry and
its duplicated side effect, the truncated payload read back), and narrated;
``--out DIR`` writes the usual reproduction bundle.  See
:mod:`prunecheck.sim.api.minimal`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import incidents_of, replay
from prunecheck.sim.api.minimal import AIM, DEFAULT_REPLAYS, shrink_note, shrink_trace
from prunecheck.sim.cli.argtypes import count
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.json_output import add_json_argument, driver_document
from prunecheck.sim.cli.limits import parse_time_limit
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.trusted import add_trace_arguments, trusted_trace
from prunecheck.sim.evidence.harm import extend_to_harm
from prunecheck.sim.evidence.narrative import narrate
from prunecheck.sim.subjects.loader import load_system

__all__ = ["execute", "register"]

EXAMPLE = f"""\
examples:
  prunecheck shrink suite_trace.json --trust-policy --out repro/
  prunecheck shrink incident.json my_policy.py:select
  prunecheck shrink trace.json --target provider_rejection      # keep the 400, not the prune

The shrunk trace opens as the original does (system prompt, then a user message),
keeps each event's time, and ends at the first step of its class; the events the
runtime makes next (results, the invocation, a retry) follow when they show harm.
It aims at {AIM} events or fewer and says which bound it reached.
With --json, stdout holds one verdict document (schemas/verdict-3.json): the shrunk
trace's first violation, the events before and after, the bundle folder (if --out).
exit status: 1 the shrunk trace reproduces (the usual case), 2 bad input (a trace with
no violation, an unknown class, a policy that raises).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "shrink",
        help=SUMMARIES["shrink"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_trace_arguments(p)
    p.add_argument(
        "--target",
        metavar="KINDS",
        help="keep these incident classes (comma-separated) instead of the first violation's",
    )
    p.add_argument(
        "--max-replays",
        type=count,
        default=DEFAULT_REPLAYS,
        metavar="N",
        help=f"replays shrinking may spend (default {DEFAULT_REPLAYS})",
    )
    p.add_argument(
        "--no-harm", action="store_true", help="stop at the violation (do not run on to the harm)"
    )
    p.add_argument("--out", metavar="DIR", help="write the reproduction bundle here")
    p.add_argument(
        "--force", action="store_true", help="let --out overwrite a folder that already holds files"
    )
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    add_policy_timeout(p)
    p.add_argument(
        "--time-limit",
        type=parse_time_limit,
        default=None,
        metavar="SECONDS",
        help="stop shrinking after this many seconds with the shortest trace so far",
    )
    add_json_argument(p)
    p.set_defaults(func=execute)


def _target(text: str | None) -> tuple[IncidentKind, ...] | None:
    if not text:
        return None
    out = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        try:
            out.append(IncidentKind(word.replace(" ", "_")))
        except ValueError:
            raise ConfigError(
                f"--target {word}",
                "is not an incident class.",
                f"use one of: {', '.join(k.value for k in IncidentKind)}.",
            ) from None
    return tuple(out)


def execute(args: argparse.Namespace) -> int:
    target = _target(args.target)
    if args.out:  # refuse a bad --out before any work (exit 2)
        from prunecheck.sim.support.outputs import check_bundle_folder, output_folder

        shown = args.out  # what the user wrote: how the output names it
        args.out = str(output_folder(Path(args.out)))
        check_bundle_folder(Path(args.out), force=args.force)
    trace = trusted_trace(args.trace, args.policy, args.trust_policy, "shrink")
    system = load_system(trace.policy, args.policy_timeout)
    deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
    shrunk = shrink_trace(
        trace, system, target=target, max_replays=args.max_replays, deadline=deadline
    )
    out = shrunk.trace if args.no_harm else extend_to_harm(shrunk.trace, system)
    summary = shrink_note(out) or shrunk.summary()
    print(f"{args.trace}: {summary}")
    if not args.quiet:
        steps = [step for step, _ in replay(out, system, record=True)]
        sys.stdout.write("\n" + narrate(out, steps).text())
    folder = None
    if args.out:
        from prunecheck.sim.evidence.bundle import write_bundle

        folder = write_bundle(out, Path(args.out), system=system, force=args.force)
        print(f"reproduction bundle written to {shown}")
    if args.json:
        driver_document(
            "shrink",
            args,
            status=1,
            spec=out.policy,
            config=out.config,
            exercised={
                "events": shrunk.original,
                "shrunk_events": len(out.events),
                "replays": shrunk.replays,
            },
            incidents=incidents_of(out, system),
            reproduction=folder,
            details={
                "trace": args.trace,
                "summary": summary,
                "kinds": list(shrunk.kinds),
                "fixpoint": shrunk.fixpoint,
                "stopped": shrunk.stopped,
                "harm_events": len(out.events) - shrunk.events,
            },
        )
    return 1
