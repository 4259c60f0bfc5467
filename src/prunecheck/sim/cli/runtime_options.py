"""The runtime knobs on the command line: one table, one spelling, shared
by every command that runs a runtime (check, baseline, regress, search,
explore).  ``sweep`` takes comma-separated lists of the same knobs."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from prunecheck.model.config import CheckAt, Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.errors import ConfigError, PrunecheckError
from prunecheck.model.gates import Gate
from prunecheck.model.provider import Provider
from prunecheck.sim.cli.argtypes import count, natural

__all__ = ["CHECK_AT_HELP", "KNOBS", "PROVIDERS_HELP", "add_runtime_arguments", "runtime_config"]

#: When each placement fires its budget check (model/runtime.py, model/budget.py).
CHECK_AT_HELP = (
    "when the runtime fires its budget check: after_append after every message "
    "appended or grown (each streamed chunk too); after_batch after an append that "
    "completes a unit: the system prompt, every user message (also one that arrives "
    "while calls are pending), the last chunk of assistant text, the result or failure "
    "that completes a batch, a retry's re-run batch; before_invoke only when a model "
    "call goes ahead (none while calls are pending). An explicit check event fires at "
    "every placement"
)

#: (flag, RuntimeConfig field, enum, help) for every enum-valued knob.
KNOBS: tuple[tuple[str, str, type[Any], str], ...] = (
    ("--gate", "gate", Gate, "what stands between policy and context"),
    ("--check-at", "check_at", CheckAt, CHECK_AT_HELP),
    ("--retry", "retry", RetryMode, "what a retry after a rejection re-runs"),
    (
        "--on-stream-loss",
        "on_stream_loss",
        StreamLoss,
        "what a stream does when its message was evicted",
    ),
    ("--repair", "repair", Repair, "the repair layer run before each invocation"),
    ("--provider", "provider", Provider, "whose request rules and error texts apply"),
)


#: ``check --provider``: several providers, each judging the subject.
PROVIDERS_HELP = (
    "the providers whose request rules and error texts judge the subject, comma-separated "
    "or repeated (e.g. --provider bedrock,gemini): the check runs under the first, and "
    "the verdict names each one's first rejection of the reproduction's requests, or "
    "that it accepts them; one of {names}"
)


def add_runtime_arguments(
    parser: argparse.ArgumentParser,
    base: RuntimeConfig,
    *,
    inherited: str = "",
    several_providers: bool = False,
) -> None:
    """Add the knobs; each one left out keeps its value from ``base`` (shown
    in the help), or from what ``inherited`` names when that is given.
    ``several_providers``: ``--provider`` takes a list (``check``), read by
    :func:`~prunecheck.sim.api.providers.parse_providers`, which
    :func:`runtime_config` leaves to its caller."""
    note = f"knobs left out keep {inherited}" if inherited else None
    group = parser.add_argument_group("runtime", note)
    for flag, dest, enum, text in KNOBS:
        shown = "" if inherited else f" (default {getattr(base, dest).value})"
        if several_providers and dest == "provider":
            from prunecheck.sim.api.providers import provider_names

            names = ", ".join(provider_names())
            group.add_argument(
                flag,
                dest=dest,
                action="append",
                default=None,
                metavar="NAME[,NAME]",
                help=PROVIDERS_HELP.format(names=names) + shown,
            )
            continue
        group.add_argument(
            flag, dest=dest, choices=[m.value for m in enum], default=None, help=text + shown
        )
    shown = "" if inherited else f" (default {base.budget})"
    group.add_argument(
        "--budget",
        type=count,
        default=None,
        metavar="TOKENS",
        help="working budget in tokens" + shown,
    )
    group.add_argument(
        "--hard-ceiling",
        "--ceiling",
        dest="hard_ceiling",
        type=count,
        default=None,
        metavar="TOKENS",
        help="where deferral must fail loudly (default: the budget times "
        f"{base.hard_ceiling / base.budget:g})",
    )
    shown = "" if inherited else f" (default {base.max_retries})"
    group.add_argument(
        "--max-retries",
        dest="max_retries",
        type=natural,
        default=None,
        metavar="N",
        help="retries after a rejected invocation before the "
        "runtime gives up and the session aborts" + shown,
    )


def runtime_config(args: argparse.Namespace, base: RuntimeConfig) -> RuntimeConfig:
    """``base`` with the knobs given on the command line.  A budget given
    without a ceiling keeps ``base``'s ceiling-to-budget ratio."""
    changes: dict[str, Any] = {}
    for _, dest, enum, _ in KNOBS:
        value = getattr(args, dest, None)
        if value is not None and not isinstance(value, list):  # a list: the caller's
            changes[dest] = enum(value)
    for dest in ("budget", "hard_ceiling", "max_retries"):
        value = getattr(args, dest, None)
        if value is not None:
            changes[dest] = value
    if "budget" in changes and "hard_ceiling" not in changes:
        changes["hard_ceiling"] = changes["budget"] * base.hard_ceiling // base.budget
    try:
        return replace(base, **changes)
    except PrunecheckError as exc:
        flag = "--" + exc.subject.replace("_", "-")
        raise ConfigError(flag, exc.rule, exc.hint) from None
