"""``prunecheck check POLICY``: is this policy safe as it is?

Runs the fixed, seeded scenario suite and the adversarial search (see
:mod:`.check`), prints a table of the scenarios, the verdict and — when
unsafe — the minimal reproduction step by step.  Also holds the runtime and
suite arguments that ``baseline`` and ``regress`` share.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.provider import Provider
from prunecheck.model.runtime import RuntimeConfig

from .argtypes import integer, natural, seconds
from .check import DEFAULT_HORIZON, DEFAULT_LEVELS, DEFAULT_SEEDS, check_policy
from .cliargs import add_runtime_arguments, runtime_config
from .frameworks import is_framework_spec
from .loading import DEFAULT_TIMEOUT

__all__ = [
    "add_runtime_arguments",
    "add_suite_arguments",
    "parse_levels",
    "parse_seeds",
    "register",
    "run",
    "runtime_config",
]

EXAMPLE = """\
examples:
  prunecheck check lowest_salience
  prunecheck check --format openai examples/openai_keep_last.py:trim --out repro/
  prunecheck check --format openai examples/openai_commit_boundary.py:trim
  prunecheck check --langchain "strategy=last,start_on=human,include_system=true"
  prunecheck check mypkg.trim:select --gate commit --check-at after_batch

A list function trim(messages) -> messages is checked with --format: it gets the
context as OpenAI Chat Completions or Anthropic Messages dicts (and max_tokens /
token_counter if its signature names them); what it drops is evicted.
exit status: 0 safe, 1 unsafe (with a minimal reproduction), 2 bad input or a policy
that raised, hung, returned garbage or mutated its input (finished scenarios are
printed first).
"""

def parse_levels(text: str) -> tuple[float, ...]:
    """``0.2,0.6,1`` → load levels in [0, 1]; ConfigError if malformed."""
    try:
        levels = tuple(float(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise ConfigError(f"--levels {text!r}", "must be numbers separated by commas.",
                          "for example --levels 0.2,0.6,1.") from None
    if not levels or any(not 0.0 <= x <= 1.0 for x in levels):
        raise ConfigError(f"--levels {text!r}", "must be load levels between 0 and 1.",
                          "for example --levels 0.2,0.6,1.")
    return levels


def parse_seeds(text: str) -> tuple[int, ...]:
    """``1,2,3`` or ``1-5`` → seeds; ConfigError if malformed."""
    seeds: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            low, dash, high = part.partition("-")
            seeds.extend(range(int(low), int(high) + 1) if dash else [int(part)])
    except ValueError:
        raise ConfigError(f"--seeds {text!r}", "must be integers or ranges like 1-5.",
                          "for example --seeds 1,2,3 or --seeds 1-5.") from None
    if not seeds:
        raise ConfigError(f"--seeds {text!r}", "names no seed.", "for example --seeds 1-3.")
    return tuple(dict.fromkeys(seeds))


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scenario suite")
    group.add_argument("--levels", type=parse_levels, metavar="L,L",
                       help="load levels (default " + ",".join(map(str, DEFAULT_LEVELS)) + ")")
    group.add_argument("--seeds", type=parse_seeds, metavar="S,S|A-B",
                       help="seeds (default " + ",".join(map(str, DEFAULT_SEEDS)) + ")")
    group.add_argument("--horizon", type=seconds, metavar="SECONDS",
                       help=f"simulated seconds per run (default {DEFAULT_HORIZON:g})")


def register(sub: Any) -> None:
    p = sub.add_parser("check", help="is this policy (or trim function) safe as it is?",
                       description=__doc__, epilog=EXAMPLE,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("policy", nargs="?", help="policy spec: built-in name, module:attr or "
                   "file.py:attr (with --format: a trim(messages) function)")
    p.add_argument("--format", choices=[m.value for m in Provider],
                   help="POLICY is a list function over this provider's message dicts")
    p.add_argument("--langchain", metavar="SETTINGS",
                   help="check LangChain's trim_messages with these settings, e.g. "
                   "'strategy=last,start_on=human' (needs prunecheck[langchain])")
    add_runtime_arguments(p, RuntimeConfig())
    add_suite_arguments(p)
    p.add_argument("--seed", type=integer, default=0, help="seed of the adversarial search")
    p.add_argument("--max-examples", type=natural, default=200, metavar="N",
                   help="runs of the adversarial search (0: none; default 200)")
    p.add_argument("--policy-timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="S",
                   help=f"seconds one policy call may take (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--out", metavar="DIR", help="write the reproduction bundle here if unsafe "
                   "(a new folder)")
    p.add_argument("--force", action="store_true",
                   help="let --out overwrite a folder that already holds files")
    p.add_argument("--quiet", action="store_true", help="print only the verdict line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.langchain is not None:
        if args.policy:
            raise ConfigError("--langchain", "checks LangChain's trimmer; it takes no POLICY.",
                              "drop POLICY or drop --langchain.")
        spec = f"langchain:{args.langchain}"
    elif args.policy:
        spec = args.policy
    else:
        raise ConfigError("POLICY", "is missing.", "give a policy spec, e.g. "
                          "'prunecheck check lowest_salience', or --langchain SETTINGS.")
    if args.out:  # refuse a bad --out before any work (exit 2)
        from .bundle import check_out

        check_out(Path(args.out), force=args.force)
    fmt = args.format or ("openai" if is_framework_spec(spec) else None)
    base = RuntimeConfig(provider=Provider(fmt) if fmt else Provider.ANTHROPIC)
    config = runtime_config(args, base)
    result = check_policy(
        spec, format=args.format, config=config,
        levels=args.levels or DEFAULT_LEVELS, seeds=args.seeds or DEFAULT_SEEDS,
        horizon=args.horizon or DEFAULT_HORIZON, seed=args.seed,
        max_examples=args.max_examples, timeout=args.policy_timeout)
    failed = result.error is not None
    if args.quiet:
        if not failed:
            print(result.verdict_line())
    else:
        sys.stdout.write(result.summary(verdict=not failed))
        if result.reproduction is not None:
            sys.stdout.write("\nminimal reproduction:\n" + result.narrative)
    if failed:
        print(f"prunecheck check: {result.error}", file=sys.stderr)
        return 2
    if result.reproduction is not None and args.out:
        where = result.bundle(args.out, force=args.force)
        print(f"reproduction bundle written to {where}")
    return 0 if result.safe else 1
