"""Incidents: named, observed failures (and the costs of safety).

Two classes are judged only in real agent loops (:mod:`prunecheck.sim.subjects.loops`):
``silent_loss`` (a tool ran, its side effect happened, and the model is no
longer told: its call and result are gone from a request although no trim
removed their whole, closed unit) and ``hang`` (a turn that does not return
within a virtual deadline after a cancel).

``ineffective_trim`` is a client-side trim of items the provider's server
already holds (an OpenAI Responses request chained by
``previous_response_id``): the model still sees them.  A cost, not a
violation: the model's context is whole and honest, only the budget the
trim was for is not kept.

Every incident says *what* happened, at *which step* and *which ids* it
concerns.  Violation classes are failures a user must never ship; cost
classes (deferral, hard-ceiling overrun, spill, re-injection) are the price
of the safe gates and are reported, not failed on.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "COST_KINDS",
    "NO_EFFECT_KINDS",
    "OUTCOME_KINDS",
    "VIOLATION_KINDS",
    "Incident",
    "IncidentKind",
    "incident_from_json",
]


class IncidentKind(StrEnum):
    INVALID_PRUNE = "invalid_prune"
    ORPHANED_RESULT = "orphaned_result"
    UNANSWERED_CALL = "unanswered_call"
    PROVIDER_REJECTION = "provider_rejection"
    DUPLICATED_SIDE_EFFECT = "duplicated_side_effect"
    TRUNCATED_PAYLOAD = "truncated_payload"
    SYNTHESIZED_RESULT = "synthesized_result"
    SILENT_LOSS = "silent_loss"
    HANG = "hang"
    HARD_CEILING_OVERRUN = "hard_ceiling_overrun"
    DEFERRAL = "deferral"
    SPILL = "spill"
    REINJECTION = "reinjection"
    SESSION_ABORT = "session_abort"
    INEFFECTIVE_TRIM = "ineffective_trim"

    @property
    def is_violation(self) -> bool:
        return self in VIOLATION_KINDS

    @property
    def is_outcome(self) -> bool:
        return self in OUTCOME_KINDS

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


VIOLATION_KINDS = frozenset(
    {
        IncidentKind.INVALID_PRUNE,
        IncidentKind.ORPHANED_RESULT,
        IncidentKind.UNANSWERED_CALL,
        IncidentKind.PROVIDER_REJECTION,
        IncidentKind.DUPLICATED_SIDE_EFFECT,
        IncidentKind.TRUNCATED_PAYLOAD,
        IncidentKind.SYNTHESIZED_RESULT,
        IncidentKind.SILENT_LOSS,
        IncidentKind.HANG,
    }
)
#: How a session ended, neither a violation (the violation came before it)
#: nor a cost of safety: the runtime gave up after its retries.
OUTCOME_KINDS = frozenset({IncidentKind.SESSION_ABORT})
COST_KINDS = frozenset(IncidentKind) - VIOLATION_KINDS - OUTCOME_KINDS
#: Costs that are not the price of a safe gate: a trim that did not free
#: what it meant to (the provider's server still holds the items).
NO_EFFECT_KINDS = frozenset({IncidentKind.INEFFECTIVE_TRIM})


@dataclass(frozen=True, slots=True)
class Incident:
    """One observed incident.

    Attributes
    ----------
    kind: the incident class.
    step: index of the event (0-based) during which it happened.
    ids: the message and call ids it concerns.
    detail: one sentence for a human.
    reason: a sub-class, e.g. ``split_unit`` / ``open_message`` /
        ``pending_unit`` for an invalid prune.
    text: for a provider rejection, the provider's exact error text.
    """

    kind: IncidentKind
    step: int
    ids: tuple[str, ...]
    detail: str
    reason: str = ""
    text: str = ""

    @property
    def is_violation(self) -> bool:
        return self.kind.is_violation

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "step": self.step,
            "ids": list(self.ids),
            "detail": self.detail,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.text:
            out["text"] = self.text
        return out


def incident_from_json(data: dict[str, Any]) -> Incident:
    return Incident(
        kind=IncidentKind(data["kind"]),
        step=int(data["step"]),
        ids=tuple(data["ids"]),
        detail=str(data["detail"]),
        reason=str(data.get("reason", "")),
        text=str(data.get("text", "")),
    )
