"""prunecheck replay TRACE: re-run a trace and narrate it step by step.

A trace is data: it may come from a bug report.  When it names a policy
that is code (a user's file or module), replay does not import it unless
you name a policy yourself (POLICY) or say so (--trust-policy); it prints
what it would run and exits 2.  Built-in policies replay as they are."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError, TraceError
from prunecheck.model.incidents import Incident
from prunecheck.model.system import replay
from prunecheck.model.trace import Trace
from prunecheck.sim.adapters.loader import load_system
from prunecheck.sim.adapters.policy_spec import SpecKind, parse_spec_or_none
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.policy_argument import add_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.reproductions.bundle import policy_file, replay_command
from prunecheck.sim.reproductions.narrative import narrate_stream
from prunecheck.sim.reproductions.trace_file import read_trace

__all__ = ["execute", "load_trace", "register"]

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
    p.add_argument("trace", help="trace JSON file (a bundle's trace.json), or a bundle folder")
    add_policy_argument(p, help="replay with this policy spec instead of the trace's")
    p.add_argument(
        "--trust-policy",
        action="store_true",
        help="import the policy file or module the trace names (it runs its code)",
    )
    p.add_argument(
        "--gate",
        choices=["none", "reference", "commit", "spill"],
        help="replay under this gate instead of the trace's",
    )
    p.add_argument("--markdown", action="store_true", help="print the narrative as markdown")
    p.add_argument("--quiet", action="store_true", help="print only the verdict line")
    add_policy_timeout(p)
    p.set_defaults(func=execute)


def load_trace(path_text: str) -> Trace:
    """Read a trace file (or ``DIR/trace.json`` of a bundle); TraceError if
    bad.  A large file prunecheck wrote is streamed (see :mod:`.trace_file`)."""
    path = Path(path_text)
    if path.is_dir():
        path = path / "trace.json"
    return read_trace(path)


def _is_data(spec: str) -> bool:
    """Whether a policy spec runs no user code (a built-in, an imported log's
    observed removals, or LangChain's trimmer)."""
    parsed = parse_spec_or_none(spec)
    return parsed is not None and (
        parsed.kind in (SpecKind.BUILTIN, SpecKind.OBSERVED)
        or (parsed.kind is SpecKind.FRAMEWORK and parsed.adapter == "langchain")
    )


def _beside(spec: str, trace_path: str) -> str:
    """A relative policy file found beside the trace (a bundle's copy) wins."""
    found = policy_file(spec)
    if found is None or found[0].is_absolute():
        return spec
    folder = Path(trace_path)
    folder = folder if folder.is_dir() else folder.parent
    here = folder / found[0]
    return f"{here}:{found[1]}" if here.is_file() else spec


def _what(spec: str) -> str:
    found = policy_file(spec)
    if found is None:
        parsed = parse_spec_or_none(spec)
        where = spec if parsed is None else parsed.where or parsed.adapter or spec
        return f"importing module {where!r}"
    path = found[0].resolve()
    if not path.is_file():
        return f"file {path}, which does not exist here"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return f"file {path}, sha256 {digest}…"


def execute(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from prunecheck.model.gates import Gate

    trace = load_trace(args.trace)
    if args.policy:
        trace = replace(trace, policy=args.policy)
    else:
        spec = _beside(trace.policy, args.trace)
        if not args.trust_policy and not _is_data(spec):
            raise ConfigError(
                f"{args.trace}",
                f"names the policy {trace.policy!r}, which is code "
                f"({_what(spec)}); replay does not run a trace's code without your consent.",
                f"to run it: {replay_command(spec, args.trace)} (or add "
                "--trust-policy); to replay the events under a built-in instead: "
                f"prunecheck replay {args.trace} unit_safe.",
            )
        trace = replace(trace, policy=spec)
    if args.gate:
        trace = replace(trace, config=replace(trace.config, gate=Gate(args.gate)))
    system = load_system(trace.policy, args.policy_timeout)
    try:
        from tqdm import tqdm

        violations = 0

        def met(incident: Incident) -> None:
            nonlocal violations
            violations += incident.is_violation

        # One step at a time: memory holds the context, not the whole story.
        with tqdm(
            replay(trace, system, record=True),
            total=len(trace.events),
            unit="event",
            desc="replay",
            file=sys.stderr,
            dynamic_ncols=True,
            disable=len(trace.events) < 2_000 or not sys.stderr.isatty(),
        ) as events:
            # A file read whole is told whole or not at all (bad input prints only its
            # paragraph); a streamed one is told as it goes.
            streamed = not isinstance(trace.events, tuple)
            held: list[str] = []
            last = ""
            for line in narrate_stream(
                trace, (item for item, _ in events), met, markdown=args.markdown
            ):
                if args.quiet:
                    pass
                elif streamed:
                    sys.stdout.write(line + "\n")
                else:
                    held.append(line)
                last = line
    except TraceError as exc:  # an impossible event: name the file as well as the event
        raise TraceError(f"{args.trace}: {exc.subject}", exc.rule, exc.hint) from None
    sys.stdout.write(last + "\n" if args.quiet else "".join(f"{line}\n" for line in held))
    return 1 if violations else 0
