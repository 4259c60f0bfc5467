"""How ``search`` and ``explore`` show a counterexample: the incident, the
narrative step by step, and the reproduction bundle written to ``--out``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.incidents import Incident
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace, loads
from prunecheck.sim.reproductions.narrative import narrate

__all__ = ["report_counterexample"]


def report_counterexample(
    trace: Trace,
    incidents: Sequence[Incident],
    system: System[Any],
    out: str | None,
    lead: str,
    *,
    force: bool = False,
) -> None:
    """Print the counterexample's narrative and write its bundle to ``out``."""
    steps = [item for item, _ in replay(trace, system, record=True)]
    at_end = [i for i in incidents if i.step == len(trace.events) - 1] or list(incidents)
    if at_end:
        first = next((i for i in at_end if i.is_violation), at_end[0])
        print(f"{lead}: {first.kind.label} at step {first.step + 1}: {first.detail}")
    print()
    sys.stdout.write(narrate(trace, steps).text())
    if out:
        from prunecheck.sim.reproductions.bundle import BUNDLE_FILES, replay_command, write_bundle

        folder = write_bundle(trace, Path(out), system=system, force=force)
        print(f"\nbundle written to {folder}/ ({', '.join(BUNDLE_FILES)})")
        spec = loads((folder / "trace.json").read_text(encoding="utf-8")).policy
        print(f"replay it: {replay_command(spec, str(folder / 'trace.json'), folder=folder)}")
