"""A loop failure's reproduction bundle.

A folder holding everything needed to see and re-run one counterexample:

* ``schedule.json`` — the shrunk schedule
  (:mod:`prunecheck.sim.subjects.loops.steps`), the spec it was
  found on, the seed, and the violations it must show (``expect``);
* ``narrative.txt`` — the run step by step, incidents where they happened;
* ``requests.jsonl`` — every request the model received, in order;
* ``incidents.json`` — every incident, as JSON;
* ``repro.py`` — the adapter's standalone script: the schedule replayed with
  the framework alone (no prunecheck import), printing the broken request or
  the ledger mismatch.

Same schedule, same bytes: nothing in a bundle holds a time, a path of the
machine or a random value.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from prunecheck.sim.subjects.loops.steps import Step, schedule_to_json
from prunecheck.sim.subjects.loops.story import retell
from prunecheck.sim.subjects.loops.target import LoopTarget
from prunecheck.sim.support.outputs import (
    check_bundle_folder,
    make_folder,
    output_folder,
    write_text,
)

from .loop_narrative import narrative, requests_json

__all__ = ["BUNDLE_FILES", "bundle_texts", "write_bundle"]


class Found(Protocol):
    """A counterexample: a search's outcome (its steps are what a bundle replays)."""

    @property
    def steps(self) -> Sequence[Step]: ...


#: The files of a bundle.
BUNDLE_FILES = ("schedule.json", "narrative.txt", "requests.jsonl", "incidents.json", "repro.py")


def bundle_texts(
    target: LoopTarget, found: Found, *, seed: int, scenario: str, folder: Path | None = None
) -> dict[str, str]:
    """The bundle's files by name (see the module's docs); ``folder`` is where
    they will be written (the script finds the user's module from there)."""
    story = retell(target.adapter, target.target, found.steps)
    expect = sorted({i.kind.value for i in story.incidents if i.is_violation})
    schedule = schedule_to_json(
        story.steps,
        target=target.reference,
        framework=target.framework,
        seed=seed,
        extra={"scenario": scenario, "expect": expect, "spec": target.spec},
    )
    head = (
        f"{target.spec} ({target.framework}), scenario class {scenario}, seed {seed}: "
        f"{len(story.steps)} steps, violations: {', '.join(expect) or 'none'}\n\n"
    )
    incidents = [i.to_json() for i in story.incidents]
    return {
        "schedule.json": schedule,
        "narrative.txt": head + narrative(story),
        "requests.jsonl": requests_json(story),
        "incidents.json": json.dumps(incidents, indent=2, sort_keys=True) + "\n",
        "repro.py": target.adapter.script(target.reference, schedule, folder=folder),
    }


def write_bundle(
    target: LoopTarget, found: Found, out: Path, *, seed: int, scenario: str, force: bool = False
) -> Path:
    """Write the bundle into ``out`` (created); the folder.

    Raises
    ------
    ConfigError
        If ``out`` holds files and ``force`` is not set (see
        :func:`~prunecheck.sim.support.outputs.check_bundle_folder`).
    """
    folder = output_folder(out)
    check_bundle_folder(folder, force=force)
    make_folder(folder, private=True)  # conversation content: its owner's only
    for name, text in bundle_texts(
        target, found, seed=seed, scenario=scenario, folder=folder
    ).items():
        write_text(folder / name, text, private=True)
    return folder
