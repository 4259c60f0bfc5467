"""The failure database: counterexamples found before, replayed first.

As Hypothesis's example database does, ``check`` and ``search`` save every
counterexample they find, and replay the saved ones for the same policy and
runtime before anything else: a fixed bug that comes back (a revert, a
refactoring that undoes the fix) is caught in the first second, with the
reproduction it had.

Layout: ``ROOT/<key>/<trace digest>.json``, where ``key`` digests the
policy (its spec, a file's path made absolute) and the runtime (every
knob, the check placement included), so that a policy file edited since
still finds its failures; each entry records the policy's source digest it
was found with.  ``ROOT`` is ``.prunecheck/failures`` in the current
folder, or ``$PRUNECHECK_FAILURES`` (``0`` or ``off``: none).

Safe under concurrent processes: an entry is written to a temporary file
beside it and renamed into place (atomic on POSIX), so a reader sees a
whole entry or none; two processes saving the same counterexample write
the same name.  Bad saved state — an entry that is not JSON, not an entry,
or whose trace no longer replays (its events are impossible now) — is
reported and discarded, never fatal (pytest's stepwise habit).

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

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError, PrunecheckError
from prunecheck.model.system import System, incidents_of
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.adapters.digest import policy_digest
from prunecheck.sim.adapters.policy_spec import user_code_of

__all__ = [
    "DEFAULT_ROOT",
    "ENV",
    "MAX_ENTRIES",
    "FailureDatabase",
    "Saved",
    "database",
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
        path = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
        tmp = folder / f".{path.name}.{os.getpid()}.tmp"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp.write_text(body, encoding="utf-8")
            os.replace(tmp, path)  # atomic: a reader sees all of it or none
        except OSError as exc:
            self.problems.append(
                f"failure database {self.root}: cannot save a counterexample ({exc.strerror}); "
                "it is not kept for the next run."
            )
            return None
        self._trim(folder)
        return path

    def _trim(self, folder: Path) -> None:
        entries = sorted(_listed(folder), key=_mtime)
        for old in entries[: max(0, len(entries) - MAX_ENTRIES)]:
            old.unlink(missing_ok=True)

    def entries(self, spec: str, config: RuntimeConfig) -> list[tuple[Path, Trace, str]]:
        """The readable entries for ``spec`` in ``config``, oldest first;
        bad ones are reported in ``problems`` and deleted."""
        out = []
        for path in sorted(_listed(self.folder(spec, config)), key=lambda p: (_mtime(p), p.name)):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
                    raise ValueError("it is not a saved failure")
                trace = loads(json.dumps(data["trace"]), str(path))
                digest = str(data.get("policy_digest", ""))
            except (
                OSError,
                ValueError,
                KeyError,
                TypeError,
                RecursionError,
                PrunecheckError,
            ) as exc:
                self._discard(
                    path, str(exc.paragraph() if isinstance(exc, PrunecheckError) else exc)
                )
                continue
            out.append((path, trace, digest))
        return out

    def _discard(self, path: Path, why: str) -> None:
        self.problems.append(
            f"failure database: {path} cannot be used ({why.rstrip('.')}); it was discarded."
        )
        path.unlink(missing_ok=True)

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
                self._discard(path, exc.paragraph())
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


def _listed(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")]
    except OSError:
        return []


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def database(where: str | Path | bool | None = None) -> FailureDatabase | None:
    """The database to use: ``where`` if a folder, none if False; if None,
    ``$PRUNECHECK_FAILURES`` (a folder, or ``0``/``off``), else none; if
    True, ``$PRUNECHECK_FAILURES`` or :data:`DEFAULT_ROOT`."""
    if where is False:
        return None
    if isinstance(where, str | Path):
        return FailureDatabase(Path(where))
    env = os.environ.get(ENV)
    if env is not None:
        return None if env.strip().lower() in _OFF else FailureDatabase(Path(env))
    return FailureDatabase(DEFAULT_ROOT) if where is True else None
