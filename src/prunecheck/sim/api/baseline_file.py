"""The baseline file: a suite's results for one policy in one runtime, and
the reproduction corpus replayed under it, as JSON.

File format (JSON, version 2; written sorted, so the same suite gives a
byte-identical file)::

    {"format": "prunecheck-baseline", "version": 2, "complete": true,
     "policy": "lowest_salience", "config": {...RuntimeConfig...},
     "suite": {"levels": [0.2, 0.6, 1.0], "seeds": [1, ..., 8], "horizon": 300.0},
     "policy_digest": "sha256:…", "runtime_digest": "sha256:…",
     "runs": [{"level": 0.2, "seed": 1, "invocations": 29, "events": 135,
               "incidents": {...}, "exposed": {...}, "error": null,
               "sessions": [{...SessionRecord...}, ...]}, ...],
     "corpus": {"dir": "tests/corpus", "traces": [{"path": "x.json",
                "violations": {...}, "error": null}, ...]}}

The digests (added within version 2; absent in older files) say whether the
policy's source or the runtime changed between a baseline and a regress.
Version 1 files (counts per invocation, no sessions) are refused with a
hint to re-create them: their numbers cannot be compared over sessions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.baseline_schema import check_baseline_json
from prunecheck.sim.api.suite import Suite
from prunecheck.sim.stats.sessions import (
    SessionRecord,
    sessions_from_json,
    sessions_to_json,
)
from prunecheck.sim.support.inputs import read_input
from prunecheck.sim.support.outputs import write_text

__all__ = [
    "FORMAT",
    "VERSION",
    "Baseline",
    "CorpusResult",
    "SuiteRun",
    "read_baseline",
    "runtime_digest",
    "write_baseline",
]

FORMAT = "prunecheck-baseline"
VERSION = 2


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """One simulated run: incidents and exposed invocations per class, and
    its sessions."""

    level: float
    seed: int
    invocations: int
    events: int
    incidents: Mapping[str, int]
    exposed: Mapping[str, int]
    error: str | None = None
    sessions: tuple[SessionRecord, ...] = ()

    @property
    def key(self) -> tuple[float, int]:
        return (self.level, self.seed)


@dataclass(frozen=True, slots=True)
class CorpusResult:
    """One corpus trace replayed under a runtime's knobs (``seconds``: the
    wall time the replay took, for ``--junit``; not saved in a baseline)."""

    path: str
    violations: Mapping[str, int]
    error: str | None = None
    seconds: float = field(default=0.0, compare=False)


@dataclass(frozen=True, slots=True)
class Baseline:
    """A suite's results for one policy in one runtime (also a current run)."""

    policy: str
    config: RuntimeConfig
    suite: Suite
    runs: tuple[SuiteRun, ...] = ()
    corpus: tuple[CorpusResult, ...] = ()
    corpus_dir: str | None = None
    complete: bool = False
    #: The policy's source digest (:func:`~prunecheck.sim.subjects.digest.policy_digest`)
    #: and the runtime's (its knobs and prunecheck's simulator), None in older files.
    policy_digest: str | None = None
    runtime_digest: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "complete": self.complete,
            "policy": self.policy,
            "config": self.config.to_json(),
            "suite": self.suite.to_json(),
            "policy_digest": self.policy_digest,
            "runtime_digest": self.runtime_digest,
            "runs": [
                {
                    "level": r.level,
                    "seed": r.seed,
                    "invocations": r.invocations,
                    "events": r.events,
                    "incidents": dict(r.incidents),
                    "exposed": dict(r.exposed),
                    "error": r.error,
                    "sessions": sessions_to_json(r.sessions),
                }
                for r in self.runs
            ],
            "corpus": {
                "dir": self.corpus_dir,
                "traces": [
                    {"path": c.path, "violations": dict(c.violations), "error": c.error}
                    for c in self.corpus
                ],
            },
        }


def runtime_digest(config: RuntimeConfig) -> str:
    """``sha256:<16 hex>`` of the runtime's knobs and of prunecheck's
    simulator and model code (what else decides a suite's runs)."""
    import hashlib

    from prunecheck.sim.drivers.simulator import SIMULATOR_VERSION

    text = json.dumps(config.to_json(), sort_keys=True) + SIMULATOR_VERSION
    return f"sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def write_baseline(baseline: Baseline, path: str | Path) -> None:
    """Write atomically (a reader never sees half a file; see
    :func:`~prunecheck.sim.support.outputs.write_text`)."""
    text = json.dumps(baseline.to_json(), indent=1, sort_keys=True) + "\n"
    try:
        write_text(Path(path), text)
    except OSError as exc:
        raise ConfigError(
            str(path),
            f"cannot be written ({exc.strerror}).",
            "check that the folder exists and is writable.",
        ) from None


def read_baseline(path: str | Path) -> Baseline:
    """Read a baseline file; :class:`ConfigError` naming it if malformed."""
    where = str(path)
    try:
        raw = read_input(path, "a baseline")
        data = json.loads(raw.decode("utf-8", errors="backslashreplace"))
    except FileNotFoundError:
        raise ConfigError(
            where, "does not exist.", "write one with 'prunecheck baseline --out FILE'."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(where, f"cannot be read ({exc}).") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            where,
            f"is not JSON ({exc.msg} at line {exc.lineno}).",
            "a baseline is the JSON file 'prunecheck baseline' wrote.",
        ) from None
    except RecursionError:
        raise ConfigError(
            where,
            "nests JSON too deeply to be a baseline.",
            "a baseline is the JSON file 'prunecheck baseline' wrote.",
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(
            where,
            f"is not a prunecheck baseline ('format' must be {FORMAT!r}).",
            "write one with 'prunecheck baseline --out FILE'.",
        )
    if data.get("version") == 1:
        raise ConfigError(
            where,
            "is a version 1 baseline: it counts model invocations, and "
            "regress now compares sessions (version 2), which it does not hold.",
            "re-create it with 'prunecheck baseline --out FILE' and the same "
            "flags, from the runtime you trust.",
        )
    if data.get("version") != VERSION:
        raise ConfigError(
            where,
            f"baseline version {data.get('version')!r} is not supported "
            f"(this prunecheck reads version {VERSION}).",
            "re-create it with 'prunecheck baseline'.",
        )
    check_baseline_json(data, where)
    try:
        runs = tuple(
            SuiteRun(
                float(r["level"]),
                int(r["seed"]),
                int(r["invocations"]),
                int(r["events"]),
                _counts(r["incidents"]),
                _counts(r["exposed"]),
                r.get("error"),
                sessions_from_json(r["sessions"]),
            )
            for r in data["runs"]
        )
        corpus = data.get("corpus") or {}
        traces = tuple(
            CorpusResult(str(c["path"]), _counts(c["violations"]), c.get("error"))
            for c in corpus.get("traces", [])
        )
        return Baseline(
            str(data["policy"]),
            RuntimeConfig.from_json(data["config"], f"{where}: config"),
            Suite.from_json(data["suite"], where),
            runs,
            traces,
            corpus.get("dir"),
            bool(data.get("complete")),
            _text(data.get("policy_digest")),
            _text(data.get("runtime_digest")),
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(
            where,
            f"is malformed ({type(exc).__name__}: {exc}).",
            "re-create it with 'prunecheck baseline'.",
        ) from None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _counts(data: object) -> dict[str, int]:
    if not isinstance(data, dict):
        raise TypeError("counts must be an object")
    return {str(k): int(v) for k, v in data.items()}
