"""prunecheck replay TRACE: re-run a trace and narrate it step by step.

A trace is data: it may come from a bug report.  When it names a policy
that is code (a user's file or module), replay does not import it unless
you name a policy yourself (POLICY) or say so (--trust-policy); it prints
what it would run and exits 2.  Built-in policies replay as they are."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from typing import Any, TypeVar

from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import Incident
from prunecheck.model.system import replay
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.json_output import add_json_argument, driver_document
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.trusted import add_trace_arguments, trusted_trace
from prunecheck.sim.evidence.narrative import narrate_stream
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.support.progress import Progress, TerminalProgress, progress_for

__all__ = ["execute", "register"]

_T = TypeVar("_T")

EXAMPLE = """\
example:
  prunecheck replay tests/corpus/seed_parallel_batch.json
  prunecheck replay bundle/trace.json --gate commit     # the same events, under the commit gate
  prunecheck replay bundle/trace.json unit_safe         # the same events, another policy

exit status: 0 no violation, 1 a violation (invalid prune, orphaned result, provider
rejection, ...), 2 bad input.  Costs (deferrals, overruns, spills) never fail a replay.
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "replay",
        help=SUMMARIES["replay"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_trace_arguments(p)
    p.add_argument(
        "--gate",
        choices=["none", "reference", "commit", "spill"],
        help="replay under this gate instead of the trace's",
    )
    p.add_argument("--markdown", action="store_true", help="print the narrative as markdown")
    p.add_argument(
        "--quiet", action="store_true", help="print only the verdict line (and no progress)"
    )
    add_policy_timeout(p)
    add_json_argument(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from prunecheck.model.gates import Gate

    trace = trusted_trace(args.trace, args.policy, args.trust_policy, "replay")
    if args.gate:
        trace = replace(trace, config=replace(trace.config, gate=Gate(args.gate)))
    system = load_system(trace.policy, args.policy_timeout)
    total = len(trace.events)
    bar = progress_for(command="replay", quiet=args.quiet)
    if total < 2_000 and isinstance(bar, TerminalProgress):
        bar = Progress()  # over before a bar could say anything (a log line is timed)
    try:
        violations = 0
        met_first: list[Incident] = []  # the first violation, for --json
        counts: dict[str, int] = {}  # every class met, costs too, for --json

        def met(incident: Incident) -> None:
            nonlocal violations
            violations += incident.is_violation
            counts[incident.kind.value] = counts.get(incident.kind.value, 0) + 1
            if incident.is_violation and not met_first:
                met_first.append(incident)

        # One step at a time: memory holds the context, not the whole story.
        bar.start(total, "events")
        steps = _counted(replay(trace, system, record=True), bar.runs(total))
        with closing(bar):
            # A file read whole is told whole or not at all (bad input prints only its
            # paragraph); a streamed one is told as it goes.
            streamed = not isinstance(trace.events, tuple)
            held: list[str] = []
            last = ""
            try:
                for line in narrate_stream(trace, steps, met, markdown=args.markdown):
                    if not args.quiet:
                        held.append(line)
                        if streamed and len(held) >= _BATCH:
                            _write(held)
                    last = line
            finally:
                if streamed:  # what was told so far, also when an event is impossible
                    _write(held)
    except TraceError as exc:  # an impossible event: name the file as well as the event
        raise TraceError(f"{args.trace}: {exc.subject}", exc.rule, exc.hint) from None
    sys.stdout.write(last + "\n" if args.quiet else "".join(f"{line}\n" for line in held))
    status = 1 if violations else 0
    driver_document(
        "replay",
        args,
        status=status,
        spec=trace.policy,
        config=trace.config,
        exercised={"events": len(trace.events), "violations": violations},
        incidents=met_first,
        reproduction=args.trace,
        details={"incidents": dict(sorted(counts.items()))},
    )
    return status


#: Lines a streamed narrative writes at once (one write a line costs a long replay).
_BATCH = 2048


def _write(lines: list[str]) -> None:
    """Write ``lines`` to stdout, one a line, and forget them."""
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
        lines.clear()


def _counted(steps: Iterable[tuple[_T, Any]], tell: Callable[[int], None] | None) -> Iterator[_T]:
    """Each step's first item, telling ``tell`` how many went by (every 1,024
    and at the end: a call an event would slow a long replay down)."""
    done = 0
    for done, (item, _) in enumerate(steps, 1):
        if tell is not None and not done & 1023:
            tell(done)
        yield item
    if tell is not None:
        tell(done)
