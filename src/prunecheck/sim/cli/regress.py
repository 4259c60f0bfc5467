"""``prunecheck regress --baseline FILE``: did a runtime change make things worse?

Re-runs the baseline's scenario suite with the runtime as it is now (knobs
left out keep the baseline's values) and replays the reproduction corpus,
then compares, class by class, the share of *sessions* that met the class
with a one-sided Fisher exact test and a minimum-effect guard, and the time
to the first violation with a log-rank test (see :mod:`.regress`), and
prints a table of what changed, whether the policy's source or the runtime
changed since the baseline, and the smallest effect the suite can see.
Exit 1 on a significant regression — a violation class that grew, or a
first violation that comes significantly sooner — or when a corpus trace
now shows violations it did not show before.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.exposure import ANY_VIOLATION
from prunecheck.sim.api.baseline_file import (
    Baseline,
    read_baseline,
)
from prunecheck.sim.api.compare import detectable_rate
from prunecheck.sim.api.documents import regress_document
from prunecheck.sim.api.junit import regress_cases, write_junit
from prunecheck.sim.api.regress_api import regress_policy
from prunecheck.sim.cli.argtypes import fraction, non_negative, ratio
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.formats import add_format_argument
from prunecheck.sim.cli.json_output import add_json_argument, record
from prunecheck.sim.cli.junit_output import add_junit_argument, check_junit
from prunecheck.sim.cli.policy_argument import add_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.runtime_options import add_runtime_arguments, runtime_config
from prunecheck.sim.cli.suite_options import default_corpus
from prunecheck.sim.subjects.policy_spec import with_format
from prunecheck.sim.support.outputs import output_file

__all__ = ["execute", "register"]

EXAMPLE = """\
examples:
  prunecheck baseline --out baseline.json lowest_salience --gate commit
  prunecheck regress --baseline baseline.json                 # unchanged: exit 0
  prunecheck regress --baseline baseline.json --gate none     # weakened: exit 1
  prunecheck regress --baseline b.json mypkg.trim:select_v2 --out current.json

The unit is the session (a simulated agent's conversation; see 'prunecheck report').
Baselines written before sessions (version 1) are refused: re-create them.
exit status: 0 no significant regression, 1 a regression (a violation class grew
significantly over sessions, the first violation comes significantly sooner
(log-rank), or a corpus trace now shows violations), 2 bad input or
a policy error (the runs that finished are compared and, with --out, written).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "regress",
        help=SUMMARIES["regress"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--baseline", required=True, metavar="FILE", help="the file 'prunecheck baseline' wrote"
    )
    add_policy_argument(p, help="the policy spec (default: the baseline's)")
    add_format_argument(p)
    add_runtime_arguments(p, RuntimeConfig(), inherited="the baseline's values")
    p.add_argument(
        "--corpus",
        metavar="DIR",
        help="reproduction traces to replay (default: the baseline's corpus folder)",
    )
    p.add_argument("--alpha", type=fraction, default=0.01, help="significance level (default 0.01)")
    p.add_argument(
        "--min-effect",
        type=non_negative,
        default=10.0,
        metavar="PER_1K",
        help="smallest growth that counts, per 1,000 sessions (default 10)",
    )
    p.add_argument(
        "--min-ratio",
        type=ratio,
        default=1.25,
        metavar="X",
        help="smallest growth that counts, as a ratio (default 1.25)",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="also write the current results (the baseline format), updated after every run",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="let --out and --junit replace a file that already exists (never the baseline)",
    )
    add_policy_timeout(p)
    add_json_argument(p)
    add_junit_argument(p)
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    check_junit(args.junit, force=args.force)  # before any work (exit 2)
    out = _out_file(args) if args.out else None
    base = read_baseline(args.baseline)
    spec = with_format(args.policy, args.format) if args.policy else base.policy
    run = regress_policy(
        args.baseline,
        spec,
        config=runtime_config(args, base.config),
        corpus=args.corpus or base.corpus_dir or default_corpus(None),
        out=out,
        alpha=args.alpha,
        min_effect=args.min_effect,
        min_ratio=args.min_ratio,
        policy_timeout=args.policy_timeout,
    )
    base, current, result, error = run.baseline, run.current, run.comparison, run.error
    print(f"baseline {args.baseline}: policy {base.policy}, {_knobs(base.config)}")
    print(f"current: policy {spec}, {_knobs(current.config)}")
    print(f"changed: {_diff(base, current)}")
    sessions = sum(len(r.sessions) for r in current.runs)
    print(
        f"{result.runs} suite runs compared ({sessions} sessions now); unit: sessions — "
        f"rates are sessions that met the class at least once per 1,000 sessions (count/"
        f"sessions); one-sided Fisher exact test over sessions, alpha {args.alpha:g}; 'not "
        f"significant' means the test cannot tell the difference from chance\n"
    )
    sys.stdout.write(result.table())
    print(_power(base, args.alpha))
    status = run.status
    doc = regress_document(result, current, baseline=args.baseline, status=status, error=error)
    record(args, doc)
    if args.junit:
        times = (run.suite_seconds, {c.path: c.seconds for c in current.corpus})
        write_junit(args.junit, regress_cases(doc, times), name="regress")
    if error is not None:
        print(
            f"prunecheck regress: {error}"
            + (f" (finished runs written to {args.out})" if out else ""),
            file=sys.stderr,
        )
        return 2
    regressions = [c.kind for c in result.classes if c.change == "REGRESSION"]
    if result.regressed:
        what = ", ".join(k.replace("_", " ") for k in regressions)
        sooner = "the first violation comes significantly sooner" if result.sooner else ""
        corpus = f"{len(result.corpus)} corpus trace(s)" if result.corpus else ""
        print("\nverdict: REGRESSION — " + "; ".join(x for x in (what, sooner, corpus) if x))
        return 1
    print("\nverdict: no significant regression")
    return 0


def _out_file(args: argparse.Namespace) -> Path:
    """``--out``, refused before any work when it would replace a file
    without ``--force``, or the baseline itself (even with it)."""
    out = output_file(args.out, force=args.force)
    with contextlib.suppress(OSError):
        if out.exists() and os.path.samefile(out, args.baseline):
            raise ConfigError(
                f"--out {args.out}",
                f"is the baseline file ({args.baseline}); writing the current results there "
                "would destroy the baseline they are compared with.",
                "give --out another file name.",
            )
    return out


def _knobs(config: Any) -> str:
    data = config.to_json()
    return ", ".join(f"{k} {v}" for k, v in data.items())


def _diff(base: Baseline, current: Baseline) -> str:
    old, new = base.config.to_json(), current.config.to_json()
    changes = [f"{k} {old[k]} → {new[k]}" for k in old if old[k] != new[k]]
    if base.policy != current.policy:
        changes.insert(0, f"policy {base.policy} → {current.policy}")
    if base.policy_digest is None:
        changes.append("policy source not recorded in the baseline (re-create it to compare)")
    elif base.policy_digest != current.policy_digest:
        changes.append(f"policy source changed ({base.policy_digest} → {current.policy_digest})")
    if old == new and base.runtime_digest not in (None, current.runtime_digest):
        changes.append(
            f"prunecheck's simulator or model changed ({base.runtime_digest} → "
            f"{current.runtime_digest})"
        )
    return ", ".join(changes) or (
        f"nothing (same policy source {current.policy_digest} and runtime)"
    )


def _power(base: Baseline, alpha: float) -> str:
    """What this suite can see: the smallest share of sessions with a
    violation the test calls significant when the baseline saw none."""
    sessions = [s for r in base.runs if r.error is None for s in r.sessions]
    clean = sum(1 for s in sessions if ANY_VIOLATION not in s.first)
    rate = detectable_rate(len(sessions), alpha)
    seeds = len(base.suite.seeds)
    if rate is None:
        return (
            f"power: {len(sessions)} baseline sessions ({seeds} seeds) are too few for any "
            f"difference to be significant at alpha {alpha:g}; add --seeds to the baseline."
        )
    return (
        f"power: with {len(sessions)} sessions a run ({seeds} seeds × "
        f"{len(base.suite.levels)} levels; {clean} without a violation in the baseline), "
        f"the smallest share of sessions with a violation the Fisher test calls significant "
        f"at alpha {alpha:g} against a clean baseline is {rate:g} per 1,000 sessions."
    )
