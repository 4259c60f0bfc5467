"""A framework's repair layer inside its own loop, judged per provider (issue 34).

Some frameworks rewrite the history before each model request so that the
provider accepts it: pydantic-ai (since 2.10) drops tool results whose call
is gone and answers a call left without a result with a synthesized return.
The request the judge reads is the repaired one; a repair hides the 400, not
the loss.  An adapter that can see the history before the framework's layer
rewrote it tells the harness (:meth:`~.contract.Harness.repaired`), and
:func:`judge_repair` says, for the next request:

* **what was repaired**: the calls and the results the layer dropped, the
  results it wrote;
* **whether the repair is honest**: a result it wrote is an honest
  placeholder or invented, by the honest-placeholder rule
  (:func:`.placeholder.ruling`); a result or call it dropped of a tool that
  ran is **silent** (nothing in the context says so; whether that is a loss
  is the judge's call, from the ledger: a whole unit a trim cut is not);
* **which providers would have rejected the unrepaired history**: it is
  rendered in every provider's request format and checked by its rules
  (:func:`prunecheck.model.provider.as_provider`,
  :func:`~prunecheck.model.provider.validate`), with the first text each
  would have answered.

A repair that changed no call or result (a merge of same-role messages) is
not reported.  Pure but for reading the ledger: no I/O.

>>> from .ledger import Ledger
>>> before = [{"role": "user", "content": "q"},
...           {"role": "tool", "tool_call_id": "c1", "content": "r1"}]
>>> r = judge_repair("pydantic-ai", before, [{"role": "user", "content": "q"}], Ledger(), 4)
>>> r.dropped_results, r.honest, [p for p, _ in r.rejected_by][:2]
(('c1',), True, ['anthropic', 'openai'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prunecheck.model.provider import CHECKED, Provider, as_provider, validate

from .judge import calls_and_results
from .ledger import BodyEnd, Ledger
from .placeholder import call_words, ruling

__all__ = ["REJECTED", "Repair", "RepairCounts", "judge_repair", "rejections", "repair_figures"]


@dataclass(frozen=True, slots=True)
class Repair:
    """One rewrite of a history by a framework's repair layer, judged.

    Attributes
    ----------
    step : int
        The schedule step of the request the repaired history went out in.
    layer : str
        The layer, as the adapter names it (``pydantic-ai repair``).
    dropped_calls, dropped_results : tuple of str
        Call ids whose call, or whose result, the layer removed.
    synthesized : tuple of (str, str, bool, str)
        Per result it wrote: call id, text, honest, the rule's reason.
    silent : tuple of str
        The dropped calls and results whose tool ran (an effect happened):
        nothing in the context says so (a silent drop, not an invention).
    rejected_by : tuple of (str, str)
        (provider, its first error text) for each provider whose rules
        reject the unrepaired history, in :data:`~prunecheck.model.provider.CHECKED` order.
    """

    step: int
    layer: str
    dropped_calls: tuple[str, ...]
    dropped_results: tuple[str, ...]
    synthesized: tuple[tuple[str, str, bool, str], ...]
    silent: tuple[str, ...]
    rejected_by: tuple[tuple[str, str], ...]

    @property
    def honest(self) -> bool:
        """Every result the layer wrote is an honest placeholder (none invented)."""
        return all(ok for _, _, ok, _ in self.synthesized)

    def what(self) -> str:
        """What the layer did, in words."""
        parts = []
        if self.dropped_calls:
            parts.append(f"dropped the call(s) {', '.join(self.dropped_calls)}")
        if self.dropped_results:
            parts.append(f"dropped the result(s) of {', '.join(self.dropped_results)}")
        for cid, text, _, _ in self.synthesized:
            parts.append(f"wrote a result for {cid}: {_short(text)}")
        return "; ".join(parts)

    def verdict(self) -> str:
        """Honest or not (placeholder vs invented), and silent or not, and why."""
        if self.honest:
            told = ("honest: what it wrote says what happened to the call"
                    if self.synthesized else "honest: it wrote no result")  # fmt: skip
        else:
            told = "not honest: " + "; ".join(
                f"the result of {cid} is invented ({reason})"
                for cid, _, ok, reason in self.synthesized if not ok
            )  # fmt: skip
        if self.silent:
            told += (f"; silent: {', '.join(self.silent)} ran and nothing in the context "
                     "says what was dropped")  # fmt: skip
        return told

    def text(self) -> str:
        """The narrative's sentence."""
        if self.rejected_by:
            names = ", ".join(p for p, _ in self.rejected_by)
            first = self.rejected_by[0]
            who = (f"the unrepaired history would have been rejected by {names} "
                   f"({first[0]}: {first[1]})")  # fmt: skip
        else:
            who = "every provider accepts the unrepaired history too"
        return (f"{self.layer} rewrote the history before this request: {self.what()} "
                f"({self.verdict()}); {who}")  # fmt: skip


#: The prefix of a run's figure naming a provider that rejects an unrepaired
#: history (``unrepaired_rejected:gemini``).
REJECTED = "unrepaired_rejected:"


def repair_figures(repairs: Sequence[Repair]) -> dict[str, int]:
    """One run's figures of its repairs: how many, whether one dropped calls,
    dropped results, wrote results, wrote an invented one, dropped silently
    what a tool that ran produced, and (1) per provider that would have
    rejected an unrepaired history."""
    did = {
        "dropped_calls": any(r.dropped_calls for r in repairs),
        "dropped_results": any(r.dropped_results for r in repairs),
        "wrote": any(r.synthesized for r in repairs),
        "invented": any(not r.honest for r in repairs),
        "silent": any(r.silent for r in repairs),
    }
    out = {"repaired": len(repairs)} | {f"repair_{k}": int(v) for k, v in did.items()}
    for r in repairs:
        for provider, _ in r.rejected_by:
            out[REJECTED + provider] = 1
    return out


@dataclass(frozen=True, slots=True)
class RepairCounts:
    """A scenario class's repairs over its schedules: in how many schedules the
    framework's repair layer rewrote a history, and did each thing
    (:func:`repair_figures`), and which providers reject a history it
    repaired, as it was before the repair."""

    schedules: int = 0
    dropped_calls: int = 0
    dropped_results: int = 0
    wrote: int = 0
    invented: int = 0
    silent: int = 0
    rejected_by: tuple[str, ...] = ()

    @classmethod
    def of(cls, hits: Mapping[str, int]) -> RepairCounts:
        """The counts of a class's tally (runs in which each figure was above 0)."""
        rejected = tuple(p.value for p in CHECKED if hits.get(REJECTED + p.value, 0))
        return cls(hits.get("repaired", 0), hits.get("repair_dropped_calls", 0),
                   hits.get("repair_dropped_results", 0), hits.get("repair_wrote", 0),
                   hits.get("repair_invented", 0), hits.get("repair_silent", 0),
                   rejected)  # fmt: skip

    def __add__(self, other: RepairCounts) -> RepairCounts:
        return RepairCounts(
            self.schedules + other.schedules, self.dropped_calls + other.dropped_calls,
            self.dropped_results + other.dropped_results, self.wrote + other.wrote,
            self.invented + other.invented, self.silent + other.silent,
            tuple(dict.fromkeys((*self.rejected_by, *other.rejected_by))),
        )  # fmt: skip

    def text(self) -> str:
        """In words, for a cell's figures ("" when no repair was made)."""
        if not self.schedules:
            return ""
        did = [f"{what} in {n}" for what, n in (
            ("dropped calls", self.dropped_calls), ("dropped results", self.dropped_results),
            ("wrote results", self.wrote)) if n]  # fmt: skip
        how = [f"{what} in {n}" for what, n in (
            ("invented a result", self.invented),
            ("dropped silently what a tool that ran produced", self.silent)) if n]  # fmt: skip
        honest = "; ".join(how) if how else "honestly"
        who = (f"unrepaired, rejected by {', '.join(self.rejected_by)}" if self.rejected_by
               else "every provider accepts it unrepaired")  # fmt: skip
        return (f"the framework's repair layer rewrote the history in {self.schedules} "
                f"schedules ({', '.join(did)}; {honest}; {who})")  # fmt: skip

    def to_json(self) -> dict[str, object]:
        """The counts in ``--json`` (a placement's ``figures.repaired``)."""
        return {"schedules": self.schedules, "dropped_calls": self.dropped_calls,
                "dropped_results": self.dropped_results, "wrote": self.wrote,
                "invented": self.invented, "silent": self.silent,
                "unrepaired_rejected_by": list(self.rejected_by)}  # fmt: skip


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def rejections(messages: Sequence[Mapping[str, object]]) -> tuple[tuple[str, str], ...]:
    """(provider, first error text) of every provider whose rules reject these
    OpenAI Chat Completions messages, rendered in its own request format."""
    body = {"messages": list(messages)}
    out: list[tuple[str, str]] = []
    for provider in CHECKED:
        rendered = body if provider is Provider.OPENAI else as_provider(body, provider)
        errors = validate(rendered, provider, source="request")
        if errors:
            out.append((provider.value, errors[0].text))
    return tuple(out)


def judge_repair(
    layer: str,
    before: Sequence[Mapping[str, object]],
    after: Sequence[Mapping[str, object]],
    ledger: Ledger,
    step: int,
) -> Repair | None:
    """The repair that turned ``before`` into ``after`` (both OpenAI Chat
    Completions messages), judged; None if it changed no call or result."""
    calls0, results0 = calls_and_results({"messages": list(before)})
    calls1, results1 = calls_and_results({"messages": list(after)})
    dropped_calls = tuple(c for c in calls0 if c not in calls1)
    dropped_results = tuple(c for c in results0 if c not in results1)
    written = [(c, t) for c, t in results1.items() if c not in results0 or results0[c] != t]
    if not (dropped_calls or dropped_results or written):
        return None
    synthesized = []
    for cid, text in written:
        issued = ledger.issued.get(cid)
        words = call_words(issued.call.name, cid, issued.call.arguments) if issued else (cid,)
        done = ledger.executed(cid)
        ran = "none" if done is None else "ok" if done.end is BodyEnd.OK else "failed"
        judged = ruling(text, ran=ran, call_words=words,
                        outputs=[b.output for b in ledger.bodies_of(cid)])  # fmt: skip
        synthesized.append((cid, text, judged.honest, judged.why))
    gone = dict.fromkeys((*dropped_calls, *dropped_results))
    silent = tuple(c for c in gone if ledger.executed(c) is not None)
    return Repair(step, layer, dropped_calls, dropped_results, tuple(synthesized), silent,
                  rejections(before))  # fmt: skip
