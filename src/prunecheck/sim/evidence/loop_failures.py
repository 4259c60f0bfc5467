"""An agent loop's failing schedules in the failure database, replayed first.

What :mod:`.failures` does for a policy's traces, for an agent loop's
schedules: ``check`` and ``search`` of a ``loop:`` spec save every shrunk
schedule that broke the loop, and on the next check or search of the same
agent and scenario class replay the saved ones before searching.  One that
still breaks the loop (with a violation ``search --target`` counts) is the
class's counterexample at once, and the class is not searched.

Entries live beside the policies' in the same database
(``ROOT/loop-<key>/<schedule digest>.json``).  The key digests the agent's
spec (a file made absolute), the SHA-256 of its source file, the framework
and the versions of its installed distributions, and the scenario class: an
edited agent file or another framework version never replays a stale
schedule (its entries are simply not looked at).  An agent given as an
object has no file to key it by: it is checked without the database.

A saved schedule whose steps the loop no longer accepts is reported and
discarded; a file that is not an entry is reported and left in place, as
for policies.

>>> import tempfile
>>> from pathlib import Path
>>> db = LoopFailures(FailureDatabase(Path(tempfile.mkdtemp())))
>>> db.folder("loop:agent.py:agent", "fake", "parallel").name.startswith("loop-")
True
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.drivers.action_search import Outcome, SearchOutcome, rerun
from prunecheck.sim.evidence.failures import MAX_ENTRIES, FailureDatabase
from prunecheck.sim.subjects.digest import policy_digest
from prunecheck.sim.subjects.loops.scenarios import Scenario
from prunecheck.sim.subjects.loops.steps import (
    ScheduleError,
    Step,
    schedule_from_json,
    schedule_to_json,
)
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import LoopTarget
from prunecheck.sim.subjects.policy_spec import parse_spec_or_none
from prunecheck.sim.support.inputs import read_input
from prunecheck.sim.support.outputs import make_folder, write_text

__all__ = [
    "DISTRIBUTIONS",
    "LoopFailures",
    "SavedOutcome",
    "SavedSchedule",
    "framework_versions",
]

_FORMAT = "prunecheck-loop-failure"

#: A framework's distributions whose versions key its saved schedules.
DISTRIBUTIONS: Mapping[str, tuple[str, ...]] = {
    "pydantic-ai": ("pydantic-ai-slim", "pydantic-ai"),
    "openai-agents": ("openai-agents",),
    "langgraph": ("langchain", "langgraph"),
    "autogen": ("autogen-agentchat", "autogen-core"),
}


@dataclass(frozen=True, slots=True)
class SavedSchedule:
    """A saved schedule that still breaks the loop, as replayed now."""

    path: Path
    outcome: Outcome[Step]


@dataclass(frozen=True, slots=True)
class SavedOutcome(SearchOutcome[Step]):
    """What ``search_loop`` returns when the failure database answered:
    ``found`` is the saved schedule replayed, ``saved`` its file; nothing
    was searched (``examples`` 0)."""

    saved: str = ""

    @classmethod
    def of(cls, replayed: SavedSchedule) -> SavedOutcome:
        steps = len(replayed.outcome.steps)
        return cls(replayed.outcome, 0, 1, steps, first_length=steps, saved=str(replayed.path))


def framework_versions(framework: str) -> dict[str, str]:
    """The installed versions of ``framework``'s distributions (its own name
    for a framework not in :data:`DISTRIBUTIONS`); those not installed are left out."""
    found: dict[str, str] = {}
    for dist in DISTRIBUTIONS.get(framework, (framework,)):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError, ValueError):
            found[dist] = importlib.metadata.version(dist)
    return found


def _identity(spec: str) -> str:
    """The spec with the agent's file made absolute (the same file from any folder)."""
    parsed = parse_spec_or_none(spec)
    if parsed is None or not parsed.is_file:
        return spec
    return f"loop:{parsed.adapter}:{Path(parsed.where).resolve()}:{parsed.attr}"


class LoopFailures:
    """An agent loop's saved schedules in ``db`` (its ``problems`` collect
    what was reported)."""

    def __init__(self, db: FailureDatabase) -> None:
        self.db = db

    def folder(self, spec: str, framework: str, scenario: str) -> Path:
        key = json.dumps(
            {
                "loop": _identity(spec),
                "source": policy_digest(spec),
                "framework": framework,
                "versions": framework_versions(framework),
                "scenario": scenario,
            },
            sort_keys=True,
        )
        return self.db.root / f"loop-{hashlib.sha256(key.encode()).hexdigest()[:16]}"

    @staticmethod
    def keyed(target: LoopTarget) -> bool:
        """Whether ``target`` can be kept (a spec, not an object)."""
        return not target.spec.endswith(":<object>")

    def save(self, target: LoopTarget, scenario: Scenario, found: Outcome[Step]) -> Path | None:
        """Save ``found`` (a shrunk schedule) for ``target`` under ``scenario``;
        the path, or None if it cannot be written (reported, never raised)."""
        if not self.keyed(target):
            return None
        folder = self.folder(target.spec, target.framework, scenario.name.value)
        schedule = schedule_to_json(found.steps, target=target.reference,
                                    framework=target.framework)  # fmt: skip
        entry = {
            "format": _FORMAT,
            "version": 1,
            "spec": target.spec,
            "scenario": scenario.name.value,
            "source_digest": policy_digest(target.spec),
            "versions": framework_versions(target.framework),
            "expect": sorted(found.kinds),
            "schedule": json.loads(schedule),
        }
        name = hashlib.sha256(schedule.encode()).hexdigest()[:16]
        path = folder / f"{name}.json"
        try:
            make_folder(self.db.root, private=True)
            make_folder(folder, private=True)
            write_text(path, json.dumps(entry, sort_keys=True, indent=1) + "\n", private=True)
        except OSError as exc:
            self.db.problems.append(
                f"failure database {self.db.root}: cannot save a loop schedule "
                f"({exc.strerror}); it is not kept for the next run."
            )
            return None
        self.db.trim(folder)
        return path

    def still_failing(
        self, target: LoopTarget, scenario: Scenario, kinds: frozenset[str] | None = None
    ) -> SavedSchedule | None:
        """Replay every saved schedule of ``target`` under ``scenario``, oldest
        first; the first that still shows a violation (of ``kinds``, if
        given), or None."""
        if not self.keyed(target):
            return None
        folder = self.folder(target.spec, target.framework, scenario.name.value)
        try:
            paths = sorted(
                (p for p in folder.iterdir() if p.suffix == ".json" and p.name[0] != "."),
                key=lambda p: (p.stat().st_mtime, p.name),
            )
        except OSError:
            return None
        for path in paths[-MAX_ENTRIES:]:
            try:
                data = json.loads(read_input(path, "a saved loop schedule").decode("utf-8"))
            except (OSError, ValueError, RecursionError, PrunecheckError) as exc:
                self.db.skip(path, str(exc))
                continue
            if not isinstance(data, Mapping) or data.get("format") != _FORMAT:
                self.db.skip(path, "it is not a saved loop schedule")
                continue
            try:
                steps = schedule_from_json(json.dumps(data.get("schedule")), str(path))
            except ScheduleError as exc:
                self.db.discard(path, str(exc))
                continue
            system = LoopSystem(target, scenario, max(16, len(steps)))
            outcome = rerun(system, steps)
            if outcome is None:
                self.db.discard(path, "a step of it is no longer enabled when its turn comes")
                continue
            if outcome.violations and (kinds is None or outcome.kinds & kinds):
                return SavedSchedule(path, outcome)
        return None
