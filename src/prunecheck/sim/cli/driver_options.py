"""The options ``search`` and ``explore`` share: who is tested (``POLICY``,
a policy or ``runtime:`` spec), the runtime knobs with check's default
runtime, ``--target``, ``--out``, ``--policy-timeout``, the time limit and
the shape bounds; and how each becomes what the drivers take."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.system import System
from prunecheck.sim.cli.argtypes import natural
from prunecheck.sim.cli.formats import add_format_argument, provider_default
from prunecheck.sim.cli.limits import add_time_limit
from prunecheck.sim.cli.policy_argument import add_policy_argument, read_policy_argument
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.cli.runtime_options import add_runtime_arguments as add_knobs
from prunecheck.sim.cli.runtime_options import runtime_config
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.policy_spec import with_format

__all__ = [
    "BASE",
    "add_runtime_arguments",
    "add_shape_arguments",
    "check_out_arg",
    "config_from_args",
    "parse_sizes",
    "parse_target",
    "parse_time_steps",
    "shape_from_args",
    "spec_from_args",
    "system_from_args",
]

#: The raw runtime of the incidents (gate none, checks after each append), the
#: same default runtime as ``check``'s; message sizes scale with the budget.
BASE = RuntimeConfig()


def add_runtime_arguments(p: argparse.ArgumentParser) -> None:
    """``POLICY`` (a policy or ``runtime:`` spec), ``--format``, the runtime knobs
    (defaults: the raw runtime of the incidents — gate none, checks after
    each append — as in ``check``), targets, output and the time limit."""
    add_policy_argument(
        p,
        required=True,
        runtime_option=True,
        help="the policy spec (NAME, module:attr, file.py:attr, file.py:attr@openai, "
        "ADAPTER:key=value,...), or a runtime under test instead of a policy in the "
        "model runtime: runtime:FILE.py:CLASS (a RuntimeUnderTest class, see "
        "prunecheck.runtime) or runtime:guard:POLICY (prunecheck's "
        "reference runtime with CommitGuard wrapping POLICY)",
    )
    add_format_argument(p)
    add_knobs(p, BASE)
    p.add_argument(
        "--target",
        default=None,
        metavar="KIND[,KIND]",
        help="stop only on these incident kinds (default: any violation); e.g. "
        "orphaned_result, truncated_payload",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write the reproduction bundle here on a violation (a new folder)",
    )
    p.add_argument(
        "--force", action="store_true", help="let --out overwrite a folder that already holds files"
    )
    add_policy_timeout(p)
    add_time_limit(p)


def spec_from_args(args: argparse.Namespace) -> str:
    """The policy spec (POLICY, in whichever spelling it came), with
    ``@format`` when the deprecated ``--format`` is given."""
    read_policy_argument(args)
    return with_format(args.policy, getattr(args, "format", None))


def check_out_arg(args: argparse.Namespace) -> None:
    """Refuse a bad ``--out`` before any work is done (exit 2)."""
    if getattr(args, "out", None):
        from prunecheck.sim.support.outputs import check_bundle_folder, output_folder

        # resolved now: user code that changes directory later cannot move it
        args.out = str(output_folder(Path(args.out)))
        check_bundle_folder(Path(args.out), force=getattr(args, "force", False))


def config_from_args(args: argparse.Namespace) -> RuntimeConfig:
    """The runtime: ``BASE`` with the knobs given; a list function's own
    provider (its format) unless ``--provider`` says otherwise."""
    return runtime_config(args, provider_default(BASE, spec_from_args(args)))


def system_from_args(args: argparse.Namespace) -> System[Any]:
    """What the drivers drive: the policy in the model runtime (time-limited),
    or the runtime under test.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line (``policy``, ``format``, ``policy_timeout``);
        ``args.policy`` becomes the full spec traces record.

    Returns
    -------
    System
        A :class:`~prunecheck.model.model_system.ModelSystem` or a
        :class:`~prunecheck.sim.subjects.runtimes.judged.JudgedSystem`.

    Raises
    ------
    PolicyError
        if the spec cannot be loaded.
    """
    spec = spec_from_args(args)
    args.policy = spec  # what traces and bundles record
    return load_system(spec, args.policy_timeout)


def parse_target(text: str | None) -> frozenset[IncidentKind] | None:
    """``--target``: comma-separated incident kinds; ConfigError if unknown."""
    if not text:
        return None
    kinds = set()
    for name in (t.strip() for t in text.split(",")):
        try:
            kinds.add(IncidentKind(name.replace(" ", "_")))
        except ValueError:
            raise ConfigError(
                f"--target {name!r}",
                "is not an incident kind.",
                f"use one of: {', '.join(k.value for k in IncidentKind)}.",
            ) from None
    return frozenset(kinds)


_BOUNDS = (
    "max_batches",
    "max_calls",
    "max_chunks",
    "max_users",
    "max_texts",
    "max_writes",
    "max_steps",
)


def add_shape_arguments(p: argparse.ArgumentParser, defaults: Shape) -> None:
    """The shape bounds, with ``defaults`` shown (sizes as % of the budget)."""
    g = p.add_argument_group("shape bounds")
    for name in _BOUNDS:
        g.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            type=natural,
            default=None,
            metavar="N",
            help=f"default {getattr(defaults, name)}",
        )
    g.add_argument(
        "--sizes",
        default=None,
        metavar="T,T,...",
        help="token sizes of every kind of message and chunk (default: scaled to the budget)",
    )
    steps = ",".join(map(str, defaults.time_steps)) or "none"
    g.add_argument(
        "--time-steps",
        default=None,
        metavar="S,S,...|none",
        help="seconds the clock may jump between events while calls run (default "
        f"{steps}; none: each event a second after the one before)",
    )


def parse_sizes(text: str) -> tuple[int, ...]:
    """``--sizes``: comma-separated token counts; ConfigError if malformed."""
    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise ConfigError(
            f"--sizes {text!r}",
            "must be comma-separated token counts.",
            "for example --sizes 30,300,700.",
        ) from None
    return sizes


def parse_time_steps(text: str) -> tuple[int, ...]:
    """``--time-steps``: whole seconds, ascending, or none (empty); ConfigError if malformed."""
    if text.strip().lower() in ("none", "0", ""):
        return ()
    try:
        steps = tuple(sorted({int(t) for t in text.split(",")}))
    except ValueError:
        raise ConfigError(
            f"--time-steps {text!r}",
            "must be comma-separated whole seconds, or none.",
            "for example --time-steps 30,300 (half a minute, five minutes).",
        ) from None
    return steps


def shape_from_args(args: argparse.Namespace, make: Callable[..., Shape]) -> Shape:
    """The shape ``make(budget, **bounds)`` with the bounds given on the
    command line (ConfigError if out of range)."""
    bounds: dict[str, Any] = {n: getattr(args, n) for n in _BOUNDS if getattr(args, n) is not None}
    if args.sizes is not None:
        sizes = parse_sizes(args.sizes)
        bounds.update(user_sizes=sizes, text_sizes=sizes, batch_sizes=sizes, result_sizes=sizes)
    if getattr(args, "time_steps", None) is not None:
        bounds["time_steps"] = parse_time_steps(args.time_steps)
    if getattr(args, "max_waits", None) is not None:
        bounds["max_waits"] = args.max_waits
    return make(args.budget if args.budget is not None else BASE.budget, **bounds)
