"""A repair layer judged per provider: what it repaired, whether honestly, and
who would have rejected the history it repaired.

A runtime whose repair layer rewrites the history before each model call
(``--repair drop_orphans`` drops orphaned results and the rest of a batch a
call is missing from; ``--repair synthesize`` also answers a missing call with
a text no tool produced) hides the provider's 400 but not the loss.  For
each invocation of a reproduction at which the layer acted, this module
replays the same invocation with the layer off (a copy of the state, the
same event), so the history the runtime would have sent unrepaired is
exact, and reports:

* **what was repaired** — the messages the layer dropped, the results it
  synthesized;
* **whether the repair is honest** — a dropped result leaves nothing in the
  context to say so (silent); a synthesized result is judged by the
  honest-placeholder rule (:func:`~prunecheck.sim.subjects.loops.placeholder.ruling`,
  ``docs/explanation/loop-verdicts.md``): honest only if it says what
  happened to the call, truly, and nothing about the world;
* **which providers would have rejected the unrepaired history** — rendered
  in each provider's request format and validated by its rules, with the
  text each would have answered.

Pure but for replaying the policy; O(invocations × providers × messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from prunecheck.model.config import Repair
from prunecheck.model.context import Message
from prunecheck.model.events import Invoke
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.provider import Provider, ProviderError, render, validate
from prunecheck.model.state import CallStatus, CounterName, RuntimeState
from prunecheck.model.trace import Trace
from prunecheck.sim.api.providers import with_next_invoke

__all__ = ["RepairJudgment", "judge_repairs", "repair_verdict"]


@dataclass(frozen=True, slots=True)
class RepairJudgment:
    """One invocation a repair layer rewrote, judged.

    Attributes
    ----------
    layer : str
        The repair layer (``drop_orphans``, ``synthesize``, or a framework's).
    step : int
        The 1-based step of the reproduction (its invocation).
    check_at : str
        The placement whose reproduction it is.
    steps : int
        The reproduction's length (``step == steps + 1``: the request the
        runtime sends next, after its last step).
    dropped : tuple of str
        Messages the layer removed (results, calls), with nothing left to say so.
    synthesized : tuple of (str, str, str)
        Per result the layer wrote: (call id, its text, the rule's verdict in words).
    honest : bool
        True only when nothing was dropped and every synthesized result is an
        honest placeholder.
    rejected_by : tuple of ProviderError
        Per provider that would have rejected the unrepaired history, its
        first error (the text it would have answered).
    accepted_by : tuple of Provider
        The providers that would have accepted it anyway.
    """

    layer: str
    step: int
    check_at: str
    steps: int
    dropped: tuple[str, ...]
    synthesized: tuple[tuple[str, str, str], ...]
    honest: bool
    rejected_by: tuple[ProviderError, ...]
    accepted_by: tuple[Provider, ...]

    def lines(self) -> list[str]:
        """The judgment as ``check`` prints it: what, whether honest, who would reject."""
        what = []
        if self.dropped:
            what.append(f"dropped {', '.join(self.dropped)}")
        for cid, text, _ in self.synthesized:
            what.append(f"synthesized a result for {cid} ({text!r})")
        if self.dropped:
            honesty = "not honest: nothing in the context says the dropped messages are gone"
        elif self.honest:
            honesty = "honest: " + "; ".join(why for _, _, why in self.synthesized)
        else:
            honesty = "not honest: " + "; ".join(why for _, _, why in self.synthesized)
        where = f"at step {self.step} of {self.steps}"
        if self.step > self.steps:
            where = f"at the request sent next, after step {self.steps}"
        out = [
            f"repair layer {self.layer} {where} of the reproduction at checks "
            f"{self.check_at}: " + "; ".join(what),
            f"  {honesty}",
        ]
        if self.rejected_by:
            out.append("  unrepaired, the history would have been rejected by:")
            out.extend(
                f"    {e.provider}: {e.path}: HTTP {e.status}: {e.text}" for e in self.rejected_by
            )
        if self.accepted_by:
            names = ", ".join(str(p) for p in self.accepted_by)
            out.append(f"  unrepaired, accepted anyway by: {names}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The judgment as ``--json``'s ``repairs`` entries hold it."""
        return {
            "layer": self.layer,
            "step": self.step,
            "check_at": self.check_at,
            "steps": self.steps,
            "dropped": list(self.dropped),
            "synthesized": [
                {"call": cid, "text": text, "ruling": why} for cid, text, why in self.synthesized
            ],
            "honest": self.honest,
            "rejected_by": [
                {
                    "provider": str(e.provider),
                    "kind": e.kind,
                    "location": e.path,
                    "status": e.status,
                    "text": e.text,
                }
                for e in self.rejected_by
            ],
            "accepted_by": [str(p) for p in self.accepted_by],
        }


def repair_verdict(
    unrepaired: Sequence[Message],
    repaired: Sequence[Message],
    providers: Sequence[Provider],
    ran: dict[str, str],
) -> tuple[
    tuple[str, ...], tuple[tuple[str, str, str], ...], bool, list[ProviderError], list[Provider]
]:
    """Compare the history a repair layer was given with what it sent.

    Parameters
    ----------
    unrepaired, repaired:
        The context before and after the layer.
    providers:
        Whose rules judge the unrepaired history.
    ran:
        Per call id, how its body ended: ``ok``, ``failed`` or ``none``
        (the placeholder rule's ``ran``).

    Returns
    -------
    tuple
        (dropped ids, synthesized (call, text, why), honest, the first error of
        each provider that rejects the unrepaired history, the providers
        that accept it).
    """
    from prunecheck.sim.subjects.loops.placeholder import ruling  # the loops' one rule

    after = {m.id for m in repaired}
    before = {m.id for m in unrepaired}
    dropped = tuple(m.id for m in unrepaired if m.id not in after)
    synthesized = []
    honest = not dropped
    for m in repaired:
        if m.id in before or m.call_id is None:
            continue
        verdict = ruling(m.text, ran=ran.get(m.call_id, "none"), call_words=())
        honest = honest and verdict.honest
        synthesized.append((m.call_id, m.text, verdict.why))
    rejected: list[ProviderError] = []
    accepted: list[Provider] = []
    for provider in providers:
        errors = validate(render(unrepaired, provider), provider)
        if errors:
            rejected.append(errors[0])
        else:
            accepted.append(provider)
    return dropped, tuple(synthesized), honest, rejected, accepted


def _ran(state: RuntimeState) -> dict[str, str]:
    return {
        cid: {CallStatus.DONE: "ok", CallStatus.FAILED: "failed"}.get(record.status, "none")
        for cid, record in state.calls.items()
    }


def judge_repairs(
    traces: Sequence[tuple[str, Trace]], system: Any, providers: Sequence[Provider]
) -> tuple[RepairJudgment, ...]:
    """Every invocation of ``traces`` ((placement, trace) pairs) whose
    runtime's repair layer rewrote the history, judged (see the module's
    docs).  Only the model runtime (a policy's check) has a repair layer
    prunecheck can switch off; other subjects give ()."""
    if not isinstance(system, ModelSystem):
        return ()
    found: list[RepairJudgment] = []
    for check_at, given in traces:
        trace = with_next_invoke(given)
        layer = trace.config.repair
        if layer is Repair.NONE:
            continue
        state = system.initial(trace.config, record=False)
        for i, event in enumerate(trace.events):
            at = trace.times[i] if trace.times is not None else float(i)
            twin = None
            if isinstance(event, Invoke):
                twin = system.copy(state)
                twin.config = replace(twin.config, repair=Repair.NONE)
                sent = twin.count(CounterName.INVOCATIONS)
                system.apply(twin, event, at)
                if twin.count(CounterName.INVOCATIONS) == sent:
                    twin = None  # blocked: nothing was sent
            system.apply(state, event, at)
            if twin is None:
                continue
            unrepaired, repaired = tuple(twin.context), tuple(state.context)
            if [m.id for m in unrepaired] == [m.id for m in repaired]:
                continue  # the layer had nothing to do
            dropped, synthesized, honest, rejected, accepted = repair_verdict(
                unrepaired, repaired, providers, _ran(state)
            )
            found.append(
                RepairJudgment(
                    str(layer),
                    i + 1,
                    check_at,
                    len(given.events),
                    dropped,
                    synthesized,
                    honest,
                    tuple(rejected),
                    tuple(accepted),
                )
            )
    return tuple(found)
