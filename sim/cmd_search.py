"""``prunecheck search``: adversarial search (Hypothesis) for an event
sequence on which a policy breaks the commit-boundary invariant; writes the
shrunk reproduction bundle.

Also the command-line helpers ``explore`` shares: runtime knobs, shape
bounds, targets.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import RuntimeConfig
from prunecheck.model.trace import Trace, loads

from .argtypes import count, integer, natural, seconds
from .cliargs import add_runtime_arguments as add_knobs
from .cliargs import runtime_config
from .loading import DEFAULT_TIMEOUT, guarded, load_policy
from .narrative import narrate
from .shape import Shape
from .under_test import replay  # the model's, or a runtime's

__all__ = [
    "add_runtime_arguments",
    "add_shape_arguments",
    "config_from_args",
    "parse_target",
    "policy_from_args",
    "register",
    "report_counterexample",
    "run",
    "shape_from_args",
]

EXAMPLE = """\
example:
  prunecheck search --policy lowest_salience --out repro/
  prunecheck search --policy lowest_salience --target truncated_payload --seed 3 --out repro/
  prunecheck search --policy my_trim.py:select --gate commit --max-examples 500
  prunecheck search --runtime examples/agent_loop.py:NaiveLoop --out repro/

Each run is a sequence of runtime events (batches, result chunks in any order,
streamed text, user messages mid-batch, budget checks, invocations, failures,
retries, external writes) within the shape bounds; a violation is shrunk to a
short trace and written as a bundle (trace.json, test_reproduction.py,
narrative.md, timeline.png, request.json) to --out.  Sizes scale with --budget.

exit status: 0 no violation found, 1 a violation found, 2 bad input.  Costs
(deferrals, hard-ceiling overruns, spills) are reported, never failed on.
"""

#: The raw runtime of the incidents at a small budget (message sizes scale with it).
BASE = RuntimeConfig(budget=1000, hard_ceiling=1500)


def add_runtime_arguments(p: argparse.ArgumentParser) -> None:
    """``--policy``, the runtime knobs (defaults: the raw runtime of the
    incidents — gate none, checks after each append — at a budget of 1000),
    targets and output."""
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", metavar="SPEC",
                     help="built-in name, module:attr or file.py:attr")
    who.add_argument("--runtime", metavar="FILE.py:CLASS",
                     help="test your runtime's real code instead of a policy in the model "
                          "runtime: a RuntimeUnderTest class (see prunecheck.sim.stimuli); "
                          "guard:POLICY is prunecheck's reference runtime with CommitGuard "
                          "wrapping POLICY")
    add_knobs(p, BASE)
    p.add_argument("--target", default=None, metavar="KIND[,KIND]",
                   help="stop only on these incident kinds (default: any violation); e.g. "
                        "orphaned_result, truncated_payload")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the reproduction bundle here on a violation (a new folder)")
    p.add_argument("--force", action="store_true",
                   help="let --out overwrite a folder that already holds files")
    p.add_argument("--policy-timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds one policy call may take (default {DEFAULT_TIMEOUT:g})")


def check_out_arg(args: argparse.Namespace) -> None:
    """Refuse a bad ``--out`` before any work is done (exit 2)."""
    if getattr(args, "out", None):
        from .bundle import check_out

        check_out(Path(args.out), force=getattr(args, "force", False))


def config_from_args(args: argparse.Namespace) -> RuntimeConfig:
    return runtime_config(args, BASE)


def policy_from_args(args: argparse.Namespace) -> Policy:
    if getattr(args, "runtime", None):
        args.policy = "runtime:" + args.runtime  # what traces and bundles record
    return guarded(load_policy(args.policy), args.policy_timeout)


def parse_target(text: str | None) -> frozenset[IncidentKind] | None:
    """``--target``: comma-separated incident kinds; ConfigError if unknown."""
    if not text:
        return None
    kinds = set()
    for name in (t.strip() for t in text.split(",")):
        try:
            kinds.add(IncidentKind(name.replace(" ", "_")))
        except ValueError:
            raise ConfigError(f"--target {name!r}", "is not an incident kind.",
                              f"use one of: {', '.join(k.value for k in IncidentKind)}."
                              ) from None
    return frozenset(kinds)


_BOUNDS = ("max_batches", "max_calls", "max_chunks", "max_users", "max_texts", "max_writes",
           "max_steps")


def add_shape_arguments(p: argparse.ArgumentParser, defaults: Shape) -> None:
    """The shape bounds, with ``defaults`` shown (sizes as % of the budget)."""
    g = p.add_argument_group("shape bounds")
    for name in _BOUNDS:
        g.add_argument("--" + name.replace("_", "-"), dest=name, type=natural, default=None,
                       metavar="N", help=f"default {getattr(defaults, name)}")
    g.add_argument("--sizes", default=None, metavar="T,T,...",
                   help="token sizes of every kind of message and chunk (default: scaled "
                        "to the budget)")


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise ConfigError(f"--sizes {text!r}", "must be comma-separated token counts.",
                          "for example --sizes 30,300,700.") from None
    return sizes


def shape_from_args(args: argparse.Namespace, make: Callable[..., Shape]) -> Shape:
    """The shape ``make(budget, **bounds)`` with the bounds given on the
    command line (ConfigError if out of range)."""
    bounds: dict[str, Any] = {n: getattr(args, n) for n in _BOUNDS if getattr(args, n) is not None}
    if args.sizes is not None:
        sizes = _sizes(args.sizes)
        bounds.update(user_sizes=sizes, text_sizes=sizes, batch_sizes=sizes, result_sizes=sizes)
    return make(args.budget if args.budget is not None else BASE.budget, **bounds)


def report_counterexample(trace: Trace, incidents: Sequence[Incident], policy: Policy,
                          out: str | None, lead: str, *, force: bool = False) -> None:
    """Print the counterexample's narrative and write its bundle to ``out``."""
    steps = [item for item, _ in replay(trace, policy, record=True)]
    at_end = [i for i in incidents if i.step == len(trace.events) - 1] or list(incidents)
    if at_end:
        first = next((i for i in at_end if i.is_violation), at_end[0])
        print(f"{lead}: {first.kind.label} at step {first.step + 1}: {first.detail}")
    print()
    sys.stdout.write(narrate(trace, steps).text())
    if out:
        from .bundle import BUNDLE_FILES, replay_command, write_bundle

        folder = write_bundle(trace, Path(out), policy=policy, force=force)
        print(f"\nbundle written to {folder}/ ({', '.join(BUNDLE_FILES)})")
        spec = loads((folder / "trace.json").read_text(encoding="utf-8")).policy
        print(f"replay it: {replay_command(spec, str(folder / 'trace.json'))}")


def register(sub: Any) -> None:
    p = sub.add_parser("search", help="adversarial search for a breaking event sequence",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_runtime_arguments(p)
    p.add_argument("--seed", type=integer, default=0, help="the same seed gives the same result")
    p.add_argument("--max-examples", type=count, default=200, metavar="N",
                   help="runs to generate (default 200; shrinking comes on top)")
    add_shape_arguments(p, Shape.for_budget(1000))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .search import search

    config = config_from_args(args)
    target = parse_target(args.target)
    check_out_arg(args)
    shape = shape_from_args(args, Shape.for_budget)
    if args.max_examples < 1:
        raise ConfigError("--max-examples", f"must be at least 1, got {args.max_examples}.")
    policy = policy_from_args(args)
    result = search(args.policy, config, seed=args.seed, max_examples=args.max_examples,
                    shape=shape, target=target, policy=policy)
    costs = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(result.costs.items()))
    if not result.found or result.trace is None:
        what = "no " + ("/".join(sorted(target)) if target else "violation")
        print(f"prunecheck search: {what} in {result.examples} runs (policy {args.policy}, "
              f"gate {config.gate}, seed {args.seed}, {result.seconds:.1f} s).")
        print(f"costs met (reported, not failed on): {costs or 'none'}.")
        return 0
    lead = (f"prunecheck search: found after {result.examples} runs "
            f"({result.first_seconds or 0:.2f} s; {result.first_length} events, shrunk to "
            f"{len(result.trace.events)})")
    report_counterexample(result.trace, result.incidents, policy, args.out, lead,
                          force=args.force)
    return 1
