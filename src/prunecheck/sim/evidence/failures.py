"""The failure database: counterexamples found before, replayed first.

As Hypothesis's example database does, ``check`` and ``search`` save every
counterexample they find, and replay the saved ones for the same policy and
runtime before anything else: a fixed bug that comes back (a revert, a
refactoring that undoes the fix) is caught in the first second, with the
reproduction it had.  The Python API does it (:func:`~.check.check_policy`,
:func:`~.python_api.search_policy`, ``check_loop``, ``search_loop``), so the
command line and the pytest plugin, thin layers over it, do too, with one
default (:func:`database`).  An agent loop's failing schedules are kept
beside the policies' traces (:mod:`.loop_failures`).

Layout: ``ROOT/<key>/<trace digest>.json``, where ``key`` digests the
policy (its spec, a file's path made absolute) and the runtime (every
knob, the check placement included), so that a policy file edited since
still finds its failures; each entry records the policy's source digest it
was found with.  ``ROOT`` is ``.prunecheck/failures`` in the current
folder, or ``$PRUNECHECK_FAILURES`` (``0`` or ``off``: none).

Safe under concurrent processes: an entry is written to a temporary file
beside it and renamed into place (atomic on POSIX), so a reader sees a
whole entry or none; two processes saving the same counterexample write
the same name.  Entries hold conversation content: they are readable by
their owner only (``0600``, folders ``0700``) unless
``PRUNECHECK_SHARED_FILES=1``.

Bad saved state is never fatal (pytest's stepwise habit).  An entry of
ours whose trace no longer replays (its events are impossible now) is
reported and discarded.  Anything else in the database that is not an
entry — a folder, a FIFO or a device, a file that is not JSON or not an
entry — is reported once and skipped, and left where it is: prunecheck
deletes only what it wrote.  A database folder that is not a folder (a
file, a FIFO) is bad input (exit 2).

Examples
--------
>>> import tempfile
>>> from prunecheck.model.events import SystemPrompt, UserMessage
>>> from prunecheck.model.config import RuntimeConfig
>>> db = FailureDatabase(Path(tempfile.mkdtemp()))
>>> trace = Trace("recency", RuntimeConfig(), (SystemPrompt(10), UserMessage(10)))
>>> db.save(trace).name.endswith(".json"), len(db.entries("recency", RuntimeConfig()))
(True, 1)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError, PolicyError, PrunecheckError
from prunecheck.model.system import System, incidents_of
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.subjects.digest import policy_digest
from prunecheck.sim.subjects.policy_spec import user_code_of
from prunecheck.sim.support.inputs import read_input
from prunecheck.sim.support.outputs import file_kind, make_folder, write_text

__all__ = [
    "DEFAULT_ROOT",
    "ENV",
    "MAX_ENTRIES",
    "FailureDatabase",
    "FailuresLike",
    "Saved",
    "check_root",
    "database",
    "open_database",
    "warn_problems",
]

#: Where saved failures live unless told otherwise (relative to the current folder).
DEFAULT_ROOT = Path(".prunecheck") / "failures"
#: The environment variable naming the folder (``0`` / ``off``: no database).
ENV = "PRUNECHECK_FAILURES"
#: Entries kept per policy and runtime (the oldest go first).
MAX_ENTRIES = 16

_FORMAT = "prunecheck-failure"
_OFF = {"0", "off", "no", "false", "none", ""}


@dataclass(frozen=True, slots=True)
class Saved:
    """A saved counterexample that still fails, as replayed now."""

    path: Path
    trace: Trace
    digest: str  # the policy's source digest when it was saved
    violations: tuple[str, ...]


def _identity(spec: str) -> str:
    """The spec with a user's file made absolute (the same file from any folder)."""
    parsed = user_code_of(spec)
    if parsed is None or not parsed.is_file:
        return spec
    return f"{Path(parsed.where).resolve()}{parsed.tail}"


@dataclass(slots=True)
class FailureDatabase:
    """Saved counterexamples under ``root``; ``problems`` collects what was
    reported and discarded (bad entries), for the command to print."""

    root: Path
    problems: list[str] = field(default_factory=list)

    def folder(self, spec: str, config: RuntimeConfig) -> Path:
        key = json.dumps({"policy": _identity(spec), "runtime": config.to_json()}, sort_keys=True)
        return self.root / hashlib.sha256(key.encode()).hexdigest()[:16]

    def save(self, trace: Trace, spec: str | None = None) -> Path | None:
        """Save ``trace`` as a failure of ``spec`` (default: the trace's
        policy) in its runtime; the path, or None if it cannot be written
        (reported in ``problems``, never raised)."""
        spec = spec or trace.policy
        folder = self.folder(spec, trace.config)
        text = dumps(trace)
        entry = {
            "format": _FORMAT,
            "version": 1,
            "policy": _identity(spec),
            "policy_digest": policy_digest(spec),
            "runtime": trace.config.to_json(),
            "trace": json.loads(text),
        }
        body = json.dumps(entry, sort_keys=True, indent=1) + "\n"
        name = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        path = folder / f"{name}.json"
        try:
            make_folder(self.root, private=True)  # conversation content: its owner's only
            make_folder(folder, private=True)
            write_text(path, body, private=True)  # atomic: a reader sees all of it or none
        except OSError as exc:
            self.problems.append(
                f"failure database {self.root}: cannot save a counterexample ({exc.strerror}); "
                "it is not kept for the next run."
            )
            return None
        self.trim(folder)
        return path

    def trim(self, folder: Path) -> None:
        entries = sorted((p for p in _listed(folder) if _is_regular(p)), key=_mtime)
        for old in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            with contextlib.suppress(OSError):
                old.unlink()

    def entries(self, spec: str, config: RuntimeConfig) -> list[tuple[Path, Trace, str]]:
        """The readable entries for ``spec`` in ``config``, oldest first;
        bad ones are reported in ``problems`` and deleted."""
        out = []
        for path in sorted(_listed(self.folder(spec, config)), key=lambda p: (_mtime(p), p.name)):
            try:
                data = json.loads(read_input(path, "a saved failure").decode("utf-8"))
            except (OSError, ValueError, RecursionError, PrunecheckError) as exc:
                self.skip(path, _why(exc))
                continue
            if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
                self.skip(path, "it is not a saved failure")
                continue
            try:
                trace = loads(json.dumps(data["trace"]), str(path))
                digest = str(data.get("policy_digest", ""))
            except (ValueError, KeyError, TypeError, RecursionError, PrunecheckError) as exc:
                self.discard(path, _why(exc))
                continue
            out.append((path, trace, digest))
        return out

    def _report(self, text: str) -> None:
        if text not in self.problems:  # once, however often it is met
            self.problems.append(text)

    def skip(self, path: Path, why: str) -> None:
        """Report what is not an entry of ours; leave it where it is."""
        self._report(
            f"failure database: {path} is not a saved failure ({why.rstrip('.')}); skipped and "
            "left in place (prunecheck deletes only what it wrote; remove it to silence this)."
        )

    def discard(self, path: Path, why: str) -> None:
        """Report and delete an entry of ours that cannot be used any more."""
        self._report(
            f"failure database: {path} cannot be used ({why.rstrip('.')}); it was discarded."
        )
        with contextlib.suppress(OSError):
            path.unlink()

    def still_failing(self, spec: str, system: System[Any], config: RuntimeConfig) -> Saved | None:
        """Replay every saved failure of ``spec`` in ``config`` (as it is
        now) with ``system`` (what ``spec`` loads as); the first that still
        shows a violation, or None.  A policy error while replaying is
        raised (it is the policy's, not the file's)."""
        for path, trace, digest in self.entries(spec, config):
            now = replace(trace, policy=spec, config=config)
            try:
                bad = tuple(
                    dict.fromkeys(i.kind.value for i in incidents_of(now, system) if i.is_violation)
                )
            except PolicyError:
                raise
            except PrunecheckError as exc:  # its events are impossible now
                self.discard(path, exc.paragraph())
                continue
            if bad:
                found = {
                    "driver": "failure database",
                    "path": str(path),
                    "policy_digest": digest,
                }
                meta = {**now.meta, "found_by": found}
                return Saved(path, replace(now, meta=meta), digest, bad)
        return None


def _why(exc: BaseException) -> str:
    return exc.paragraph() if isinstance(exc, PrunecheckError) else str(exc)


def _listed(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]
    except OSError:
        return []


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def check_root(root: Path, name: str | None = None) -> Path:
    """``root`` if it is a folder or does not exist yet.

    Raises
    ------
    ConfigError
        if it is a file, a FIFO, a device or a socket (exit 2).
    """
    try:
        mode = os.stat(root).st_mode
    except OSError:
        return root
    if not stat.S_ISDIR(mode):
        kind = file_kind(mode) or "a file"
        raise ConfigError(
            name or str(root),
            f"is {kind}, not a folder; the failure database is a folder of saved failures.",
            f"give --failures (or ${ENV}) a folder, or --no-failures for none.",
        )
    return root


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def database(where: str | Path | bool | None = None) -> FailureDatabase | None:
    """The database to use: ``where`` if a folder, none if False; if None
    or True (the default of every entry point: the command line, the
    Python API, the pytest plugin), ``$PRUNECHECK_FAILURES`` (a folder, or
    ``0``/``off`` for none), else :data:`DEFAULT_ROOT` in the current folder
    — as Hypothesis keeps its example database in ``.hypothesis/``.

    Raises
    ------
    ConfigError
        if the folder named is a file, a FIFO or a device (:func:`check_root`).
    """
    if where is False:
        return None
    if isinstance(where, str | Path):
        return FailureDatabase(check_root(Path(where)))
    env = os.environ.get(ENV)
    if env is not None:
        if env.strip().lower() in _OFF:
            return None
        return FailureDatabase(check_root(Path(env), f"environment variable {ENV}={env!r}"))
    return FailureDatabase(check_root(DEFAULT_ROOT))


#: What the API's ``failures=`` takes: a database, a folder, True or None (the
#: default: :func:`database`), False (none).
FailuresLike = FailureDatabase | str | Path | bool | None


def open_database(failures: FailuresLike) -> FailureDatabase | None:
    """The database ``failures`` names (see :data:`FailuresLike`).

    Raises
    ------
    ConfigError
        if the folder named is a file, a FIFO or a device (:func:`check_root`).
    """
    return failures if isinstance(failures, FailureDatabase) else database(failures)


def warn_problems(db: FailureDatabase | None, given: FailuresLike, stacklevel: int = 3) -> None:
    """Report what a database the API opened itself discarded or skipped, as
    warnings (never fatal).  A database passed in is its owner's to report
    (the command line prints them: ``report_problems``)."""
    if db is None or isinstance(given, FailureDatabase):
        return
    for problem in db.problems:
        warnings.warn(f"prunecheck: {problem}", RuntimeWarning, stacklevel=stacklevel)
    db.problems.clear()
