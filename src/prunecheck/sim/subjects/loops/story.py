"""A schedule retold: its run on the loop with everything kept.

:func:`retell` runs a concrete schedule once more keeping the requests the
model received, the ledger and the framework's history (past a violation
too): the subject's own account of a run, which its adapters' script
generators and the evidence (:mod:`prunecheck.sim.evidence.loop_narrative`,
:mod:`prunecheck.sim.evidence.loop_bundle`) read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prunecheck.model.incidents import Incident

from .confine import confined
from .contract import Adapter
from .ledger import Ledger
from .offline import offline
from .scheduler import LoopRun, StepRefused
from .steps import Step

__all__ = ["Story", "retell"]


@dataclass(frozen=True, slots=True)
class Story:
    """One run of a schedule, everything kept.

    Attributes
    ----------
    steps : tuple[Step, ...]
        The steps applied.
    incidents : tuple[Incident, ...]
        Every incident, in order.
    ledger : Ledger
        The ground truth (requests, calls, bodies, outcomes).
    history : list[dict[str, object]]
        What the framework held at the end (OpenAI chat messages), if its
        process was up.
    refused : int or None
        The index of a step that was not enabled (the schedule did not fit), or None.
    """

    steps: tuple[Step, ...]
    incidents: tuple[Incident, ...]
    ledger: Ledger
    history: list[dict[str, object]]
    refused: int | None = None


def retell(adapter: Adapter, target: object, steps: Sequence[Step]) -> Story:
    """Run ``steps`` keeping everything (every step, also past a violation)."""
    with confined(), offline(), LoopRun(adapter, target) as run:
        refused = None
        for i, step in enumerate(steps):
            try:
                run.apply(step)
            except StepRefused:
                refused = i
                break
        history = run.loop.history() if run.loop is not None else []
        return Story(tuple(run.steps), tuple(run.incidents), run.ledger, history, refused)
