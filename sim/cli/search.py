"""``prunecheck search``: adversarial search (Hypothesis) for an event
sequence on which a policy breaks the commit-boundary invariant; writes the
shrunk reproduction bundle.

Also the command-line helpers ``explore`` shares: runtime knobs, shape
bounds, targets.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import RuntimeConfig
from prunecheck.model.trace import Trace, loads
from prunecheck.sim.adapters.loader import DEFAULT_TIMEOUT, guarded, load_policy
from prunecheck.sim.cli.argtypes import count, integer, natural, seconds
from prunecheck.sim.cli.formats import add_format_argument, provider_default, with_format
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, add_time_limit
from prunecheck.sim.cli.runtime_options import add_runtime_arguments as add_knobs
from prunecheck.sim.cli.runtime_options import runtime_config
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.reproductions.narrative import narrate
from prunecheck.sim.runtimes.under_test import replay  # the model's, or a runtime's
from prunecheck.sim.support.progress import progress_for

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
    "spec_from_args",
]

EXAMPLE = """\
example:
  prunecheck search --policy lowest_salience --out repro/
  prunecheck search --policy lowest_salience --target truncated_payload --seed 3 --out repro/
  prunecheck search --policy my_trim.py:select --gate commit --max-examples 500
  prunecheck search --runtime examples/agent_loop.py:NaiveLoop --out repro/
  prunecheck search --policy my_trim.py:trim --format openai --check-at before_invoke

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
smaller one).  A list function trim(messages) is searched with --format (its
provider's rules and error texts apply unless --provider says otherwise).  On a
terminal, progress is shown on stderr.

exit status: 0 no violation found, 1 a violation found (also one found before
--time-limit stopped the search), 2 bad input, 3 out of time: --time-limit came
before any violation and before the search finished; no verdict.  Costs
(deferrals, hard-ceiling overruns, spills) are reported, never failed on.
"""

#: The raw runtime of the incidents (gate none, checks after each append), the
#: same default runtime as ``check``'s; message sizes scale with the budget.
BASE = RuntimeConfig()


def add_runtime_arguments(p: argparse.ArgumentParser) -> None:
    """``--policy`` (or ``--runtime``), ``--format``, the runtime knobs
    (defaults: the raw runtime of the incidents — gate none, checks after
    each append — as in ``check``), targets, output and the time limit."""
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--policy", metavar="SPEC",
                     help="built-in name, module:attr or file.py:attr (with --format: a "
                     "trim(messages) list function)")
    who.add_argument("--runtime", metavar="FILE.py:CLASS",
                     help="test your runtime's real code instead of a policy in the model "
                          "runtime: a RuntimeUnderTest class (see "
                          "prunecheck.sim.runtimes.stimuli); "
                          "guard:POLICY is prunecheck's reference runtime with CommitGuard "
                          "wrapping POLICY")
    add_format_argument(p)
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
    add_time_limit(p)


def spec_from_args(args: argparse.Namespace) -> str:
    """The policy spec, with ``@format`` when ``--format`` is given
    (``runtime:FILE.py:CLASS`` for ``--runtime``)."""
    if getattr(args, "runtime", None):
        return "runtime:" + str(args.runtime)
    return with_format(args.policy, getattr(args, "format", None))


def check_out_arg(args: argparse.Namespace) -> None:
    """Refuse a bad ``--out`` before any work is done (exit 2)."""
    if getattr(args, "out", None):
        from prunecheck.sim.reproductions.bundle import check_out

        check_out(Path(args.out), force=getattr(args, "force", False))


def config_from_args(args: argparse.Namespace) -> RuntimeConfig:
    """The runtime: ``BASE`` with the knobs given; a list function's own
    provider (its format) unless ``--provider`` says otherwise."""
    return runtime_config(args, provider_default(BASE, spec_from_args(args)))


def policy_from_args(args: argparse.Namespace) -> Policy:
    spec = spec_from_args(args)
    args.policy = spec  # what traces and bundles record
    return guarded(load_policy(spec), args.policy_timeout)


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
        from prunecheck.sim.reproductions.bundle import BUNDLE_FILES, replay_command, write_bundle

        folder = write_bundle(trace, Path(out), policy=policy, force=force)
        print(f"\nbundle written to {folder}/ ({', '.join(BUNDLE_FILES)})")
        spec = loads((folder / "trace.json").read_text(encoding="utf-8")).policy
        print(f"replay it: {replay_command(spec, str(folder / 'trace.json'), folder=folder)}")


def register(sub: Any) -> None:
    p = sub.add_parser("search", help="adversarial search for a breaking event sequence",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_runtime_arguments(p)
    p.add_argument("--seed", type=integer, default=0, help="the same seed gives the same result")
    p.add_argument("--max-examples", type=count, default=200, metavar="N",
                   help="runs to generate (default 200; shrinking comes on top)")
    add_shape_arguments(p, Shape.for_budget(BASE.budget))
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from prunecheck.sim.drivers.search import search

    config = config_from_args(args)
    target = parse_target(args.target)
    check_out_arg(args)
    shape = shape_from_args(args, Shape.for_budget)
    if args.max_examples < 1:
        raise ConfigError("--max-examples", f"must be at least 1, got {args.max_examples}.")
    spec = spec_from_args(args)
    policy = policy_from_args(args)
    deadline = None if args.time_limit is None else time.monotonic() + args.time_limit
    bar = progress_for(args.time_limit)
    bar.start(args.max_examples, "runs")
    bar.step(f"search {spec} (checks {config.check_at})")
    try:
        result = search(spec, config, seed=args.seed, max_examples=args.max_examples,
                        shape=shape, target=target, policy=policy, deadline=deadline,
                        progress=bar.runs(args.max_examples))
    finally:
        bar.close()
    costs = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in sorted(result.costs.items()))
    where = (f"policy {spec}, gate {config.gate}, checks {config.check_at}, provider "
             f"{config.provider}, retries {config.max_retries} ({config.retry}), "
             f"seed {args.seed}")
    if not result.found or result.trace is None:
        what = "no " + ("/".join(sorted(target)) if target else "violation")
        if result.timed_out:
            print(f"prunecheck search: out of time after {result.examples} of "
                  f"{args.max_examples} runs ({where}, {result.seconds:.1f} s): {what} in "
                  "what was covered; no verdict.")
            print(f"costs met (reported, not failed on): {costs or 'none'}.")
            return EXIT_OUT_OF_TIME
        print(f"prunecheck search: {what} in {result.examples} runs ({where}, "
              f"{result.seconds:.1f} s).")
        print(f"costs met (reported, not failed on): {costs or 'none'}.")
        return 0
    stopped = " — stopped at --time-limit, shrinking cut short" if result.timed_out else ""
    lead = (f"prunecheck search: found after {result.examples} runs "
            f"({result.first_seconds or 0:.2f} s; {result.first_length} events, shrunk to "
            f"{len(result.trace.events)}; {where}{stopped})")
    report_counterexample(result.trace, result.incidents, policy, args.out, lead,
                          force=args.force)
    return 1
