"""How ``search`` and ``explore`` show a counterexample: the incident, the
narrative step by step (on past the violation to the harm it causes), and
the reproduction bundle written to ``--out``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.incidents import Incident
from prunecheck.model.system import System, incidents_of, replay
from prunecheck.model.trace import Trace, loads
from prunecheck.sim.evidence.harm import extend_to_harm
from prunecheck.sim.evidence.narrative import narrate

__all__ = ["report_counterexample"]


def report_counterexample(
    trace: Trace,
    incidents: Sequence[Incident],
    system: System[Any],
    out: str | None,
    lead: str,
    *,
    force: bool = False,
) -> Path | None:
    """Print the counterexample's narrative and write its bundle to ``out``;
    both run past the violation to the harm it causes (see
    :mod:`~prunecheck.sim.evidence.harm`).  Return the bundle's folder
    (None without ``out``)."""
    hit = len(trace.events) - 1
    longer = extend_to_harm(trace, system)
    if longer is not trace:
        trace, incidents = longer, incidents_of(longer, system)
    steps = [item for item, _ in replay(trace, system, record=True)]
    at_end = [i for i in incidents if i.step == hit] or list(incidents)
    if at_end:
        first = next((i for i in at_end if i.is_violation), at_end[0])
        print(f"{lead}: {first.kind.label} at step {first.step + 1}: {first.detail}")
    print()
    sys.stdout.write(narrate(trace, steps).text())
    if out:
        from prunecheck.sim.evidence.bundle import BUNDLE_FILES, replay_command, write_bundle

        folder = write_bundle(trace, Path(out), system=system, force=force)
        print(f"\nbundle written to {folder}/ ({', '.join(BUNDLE_FILES)})")
        spec = loads((folder / "trace.json").read_text(encoding="utf-8")).policy
        print(f"replay it: {replay_command(spec, str(folder / 'trace.json'), folder=folder)}")
        return Path(folder)
    return None
