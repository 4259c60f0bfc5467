"""prunecheck's environment variables, each read and validated like a flag.

A bad value is one paragraph and exit 2 before any work starts — never
silently ignored (``PRUNECHECK_POLICY_MEMORY_MB=-5`` once meant "no limit").

- ``PRUNECHECK_CAGE``: ``1`` (default) runs user policies and runtimes in a
  worker process; ``0`` runs them in prunecheck's own (for a debugger).
- ``PRUNECHECK_POLICY_MEMORY_MB``: a worker's memory limit in MiB (default
  4096; ``0`` for none).
- ``PRUNECHECK_JOBS``: the most processes a command forks for its own work
  (a check's placements side by side; default: one per core).
- ``PRUNECHECK_PROGRESS_INTERVAL``: seconds between progress lines on a
  stderr that is not a terminal (default 10; ``0``: none).
- ``PRUNECHECK_SHARED_FILES``: ``0`` (default) creates files holding
  conversation content (bundles, saved failures) readable by their owner
  only; ``1`` with the umask's permissions (see :mod:`.outputs`).
- ``PRUNECHECK_GATE``: read by a bundle's ``test_reproduction.py`` only (the
  gate to replay under); validated there.
"""

from __future__ import annotations

import os

from prunecheck.model.errors import ConfigError
from prunecheck.sim.support.outputs import shared_files

__all__ = [
    "cage_enabled",
    "check_environment",
    "jobs_limit",
    "memory_limit_mb",
    "progress_interval",
]

#: Seconds between progress lines when stderr is not a terminal.
DEFAULT_PROGRESS_INTERVAL = 10.0


def cage_enabled() -> bool:
    """Whether user policies run in a worker (``PRUNECHECK_CAGE`` is not ``0``).

    Raises
    ------
    ConfigError
        if ``PRUNECHECK_CAGE`` is set to anything but ``0`` or ``1``.
    """
    text = os.environ.get("PRUNECHECK_CAGE", "1").strip()
    if text not in ("0", "1"):
        raise ConfigError(
            f"environment variable PRUNECHECK_CAGE={text!r}",
            "must be 1 (run user policies and runtimes in a worker process) or 0 "
            "(in prunecheck's own process, for a debugger).",
            "unset it, or set it to 0 or 1.",
        )
    return text != "0"


def memory_limit_mb() -> int:
    """``PRUNECHECK_POLICY_MEMORY_MB``: a worker's memory limit in MiB
    (default 4096; 0 for none).

    Raises
    ------
    ConfigError
        if it is not a whole number of MiB, 0 or more.
    """
    text = os.environ.get("PRUNECHECK_POLICY_MEMORY_MB", "4096").strip()
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0 or value > 2**40:
        raise ConfigError(
            f"environment variable PRUNECHECK_POLICY_MEMORY_MB={text!r}",
            "must be a whole number of MiB, 0 or more (0: no limit).",
            "for example PRUNECHECK_POLICY_MEMORY_MB=2048, or unset it for the default 4096.",
        )
    return value


def jobs_limit() -> int | None:
    """``PRUNECHECK_JOBS``: the most processes a command forks for its own
    work (None when unset: one per core).

    Raises
    ------
    ConfigError
        if it is not a whole number of processes, 1 or more.
    """
    text = os.environ.get("PRUNECHECK_JOBS", "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(
            f"environment variable PRUNECHECK_JOBS={text!r}",
            "must be a whole number of processes, 1 or more (1: run in this process).",
            "for example PRUNECHECK_JOBS=1, or unset it for one process per core.",
        )
    return int(text)


def progress_interval() -> float | None:
    """``PRUNECHECK_PROGRESS_INTERVAL``: seconds between progress lines on a
    stderr that is not a terminal (default 10; None for ``0``: no lines).

    Raises
    ------
    ConfigError
        if it is not a number of seconds, 0 or more.
    """
    text = os.environ.get("PRUNECHECK_PROGRESS_INTERVAL", "").strip()
    if not text:
        return DEFAULT_PROGRESS_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e9:  # NaN and inf fail too
        raise ConfigError(
            f"environment variable PRUNECHECK_PROGRESS_INTERVAL={text!r}",
            "must be a number of seconds, 0 or more (0: no progress lines).",
            "for example PRUNECHECK_PROGRESS_INTERVAL=30, or unset it for the default 10.",
        )
    return value or None


def check_environment() -> None:
    """Validate every variable the command line reads (ConfigError if bad)."""
    cage_enabled()
    memory_limit_mb()
    jobs_limit()
    progress_interval()
    shared_files()
