"""Reading a trace that may come from a bug report, for the commands that
replay one (``replay``, ``shrink``).

A trace is data; one that names a policy which is code (a user's file or
module) is not imported unless the user names a policy (``--policy``) or
says so (``--trust-policy``): until then the command prints what it would
run and exits 2.  Built-in policies replay as they are.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.trace import Trace
from prunecheck.sim.cli.policy_argument import add_policy_argument
from prunecheck.sim.evidence.bundle import (
    policy_file,
    replay_command,
    runtime_file,
    spec_is_data,
)
from prunecheck.sim.evidence.trace_file import read_trace
from prunecheck.sim.subjects.policy_spec import parse_spec_or_none

__all__ = ["add_trace_arguments", "load_trace", "trusted_trace"]


def add_trace_arguments(p: Any) -> None:
    """The arguments of a command that reads a trace and replays its policy
    (``replay``, ``shrink``): ``TRACE``, ``[POLICY]`` and ``--trust-policy``."""
    p.add_argument("trace", help="trace JSON file (a bundle's trace.json), or a bundle folder")
    add_policy_argument(p, help="replay with this policy spec instead of the trace's")
    p.add_argument(
        "--trust-policy",
        action="store_true",
        help="import the policy file or module the trace names (it runs its code)",
    )


def load_trace(path_text: str) -> Trace:
    """Read a trace file (or ``DIR/trace.json`` of a bundle); TraceError if
    bad.  A large file prunecheck wrote is streamed (see :mod:`.trace_file`)."""
    path = Path(path_text)
    if path.is_dir():
        path = path / "trace.json"
    return read_trace(path)


def _is_data(spec: str) -> bool:
    """Whether a policy spec runs no user code (a built-in, an imported log's
    observed removals, or a framework's trimmer whose settings name no code of
    the user's)."""
    return spec_is_data(spec)


def _beside(spec: str, trace_path: str) -> str:
    """A relative policy (or runtime) file found beside the trace (a bundle's copy) wins."""
    found, prefix = policy_file(spec), ""
    if found is None:
        found, prefix = runtime_file(spec), "runtime:"
    if found is None or found[0].is_absolute():
        return spec
    folder = Path(trace_path)
    folder = folder if folder.is_dir() else folder.parent
    here = folder / found[0]
    return f"{prefix}{here}:{found[1]}" if here.is_file() else spec


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


def trusted_trace(path: str, policy: str | None, trust: bool, command: str) -> Trace:
    """The trace at ``path`` with the policy to run: ``policy`` if given,
    else the trace's own (a copy beside the trace wins), which must be
    data or ``trust``-ed.

    Raises
    ------
    ConfigError
        if the trace names code and neither ``policy`` nor ``trust`` is given.
    """
    trace = load_trace(path)
    if policy:
        return replace(trace, policy=policy)
    spec = _beside(trace.policy, path)
    if not trust and not _is_data(spec):
        raise ConfigError(
            f"{path}",
            f"names the policy {trace.policy!r}, which is code "
            f"({_what(spec)}); {command} does not run a trace's code without your consent.",
            f"to run it: {replay_command(spec, path).replace('replay', command, 1)} (or add "
            "--trust-policy); to replay the events under a built-in instead: "
            f"prunecheck {command} {path} unit_safe.",
        )
    return replace(trace, policy=spec)
