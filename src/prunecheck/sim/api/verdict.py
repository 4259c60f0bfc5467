"""A check's verdict: its records (:class:`CheckResult`, one per budget-check
placement and one combining them), and how it reads — the table and the
verdict line of ``prunecheck check``.

``prunecheck check``.

A verdict holds for a runtime.  Where a runtime fires its budget check —
after every append, after a batch completes, or only before each model call
— decides which histories a policy ever sees: a trimmer that assumes a
complete history is safe in a runtime that trims only before model calls and
unsafe in one that trims after every append.  ``check`` therefore checks
each placement (unless told one) and says, in one line, which runtime its
verdict holds for.

Examples
--------
>>> words(CheckAt.BEFORE_INVOKE)
'only before model calls'
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import Policy
from prunecheck.model.system import System
from prunecheck.model.trace import Trace, dumps
from prunecheck.sim.api.providers import ProviderJudgment
from prunecheck.sim.api.repairs import RepairJudgment
from prunecheck.sim.api.suite import Scenario
from prunecheck.sim.api.vacuity import vacuous_clause
from prunecheck.sim.drivers.coverage import Coverage
from prunecheck.sim.support.outputs import make_folder, write_text

__all__ = [
    "FROM_DATABASE",
    "CheckResult",
    "ScenarioResult",
    "Verdict",
    "VerdictRecord",
    "combine",
    "is_saved",
    "provider_lines",
    "summary",
    "verdict_line",
    "verdict_record",
    "words",
]


class Verdict(StrEnum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    ERROR = "error"
    #: The time limit came before a verdict: no violation in what was covered.
    OUT_OF_TIME = "out_of_time"


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """What one scenario produced: incidents per kind, and invocations that
    met each kind (``exposed``, with ``any_violation``), non-zero only;
    ``seconds``: the wall time it took (a report's, never a verdict's)."""

    scenario: Scenario
    incidents: Mapping[str, int]
    invocations: int
    events: int
    error: str | None = None
    exposed: Mapping[str, int] = field(default_factory=dict)
    capped: bool = False
    seconds: float = field(default=0.0, compare=False)

    @property
    def violations(self) -> int:
        return sum(n for k, n in self.incidents.items() if IncidentKind(k).is_violation)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on one policy in one runtime.

    Attributes
    ----------
    policy: the policy's spec (or name).
    config: the runtime it was checked in.
    verdict: safe, unsafe, or error (the policy raised, hung, returned garbage).
    scenarios: the suite's runs that finished, in order.
    incidents: every incident kind seen in the suite and the reproduction,
        with counts (costs included; see :attr:`violations`).
    reproduction: the shortest failing trace found (None when safe).
    narrative: the reproduction replayed step by step (or the error).
    error: the policy error, as one paragraph, or None.
    search_examples: runs the adversarial search tried.
    placements: one result per budget-check placement checked (each with
        its own verdict and reproduction), in ``CheckAt`` order; this
        result combines them: unsafe if any is, and its reproduction is
        that of the first unsafe placement.
    timed_out: the time limit stopped the check; what it covered is in
        ``scenarios`` and ``search_examples``.
    policy_object: the policy checked, loaded (None for a runtime under test).
    system_object: what was driven (the model runtime with the policy, or
        the runtime under test); see :attr:`system`.
    coverage: what the suite and the search exercised (:mod:`.coverage`
        of the drivers), summed over placements; None when neither ran.
    providers: one judgment per provider named (``providers=``, ``check
        --provider``): its first rejection of the reproductions' requests, or
        that it accepts them (:mod:`.providers`); () when none was named.
    repairs: with providers named, each invocation of the reproductions
        that the runtime's repair layer rewrote: what it repaired, whether
        honestly, and which providers would have rejected the unrepaired
        history (:mod:`.repairs`).
    search_seconds: wall seconds the search took (or the replay of the
        saved failure that answered instead), summed over placements.
    """

    policy: str
    config: RuntimeConfig
    verdict: Verdict
    scenarios: tuple[ScenarioResult, ...]
    incidents: Mapping[str, int]
    reproduction: Trace | None
    narrative: str
    error: str | None = None
    search_examples: int = 0
    policy_object: Policy | None = field(default=None, repr=False, compare=False)
    placements: tuple[CheckResult, ...] = ()
    timed_out: bool = False
    system_object: System[Any] | None = field(default=None, repr=False, compare=False)
    coverage: Coverage | None = None
    search_seconds: float = field(default=0.0, compare=False)
    providers: tuple[ProviderJudgment, ...] = ()
    repairs: tuple[RepairJudgment, ...] = ()

    @property
    def safe(self) -> bool:
        return self.verdict is Verdict.SAFE

    @property
    def system(self) -> System[Any] | None:
        """What the reproduction replays with: the system checked, else the
        model runtime with :attr:`policy_object`; None if neither is kept."""
        if self.system_object is not None:
            return self.system_object
        loaded = self.policy_object
        return None if loaded is None else ModelSystem(loaded, self.policy)

    @property
    def vacuous(self) -> bool:
        """Safe, but something the invariant is about was never exercised
        (:func:`~prunecheck.sim.api.vacuity.vacuous_clause` says what)."""
        return self.safe and self.coverage is not None and self.coverage.vacuous

    def placement(self, check_at: CheckAt | str) -> CheckResult | None:
        """The result for one placement, or None if it was not checked."""
        return next((p for p in self.placements if p.config.check_at == CheckAt(check_at)), None)

    @property
    def violations(self) -> dict[str, int]:
        return {k: n for k, n in self.incidents.items() if IncidentKind(k).is_violation}

    def summary(self, *, verdict: bool = True) -> str:
        """A plain-text table of the scenarios, one row per placement with
        its verdict, and the verdict line (see :mod:`.verdict`)."""
        return summary(self, verdict=verdict)

    def verdict_line(self, bundles: Mapping[str, Path] | None = None) -> str:
        """One line: the verdict and, when placements disagree, which
        runtime it holds for; ``bundles`` names where reproductions went."""
        return verdict_line(self, bundles)

    def bundle(self, out_dir: str | Path, *, force: bool = False) -> Path:
        """Write the reproduction bundle (trace, narrative, …) to ``out_dir``.

        Raises
        ------
        TraceError
            if there is no reproduction (the policy was found safe).
        """
        if self.reproduction is None:
            raise TraceError(
                f"check of {self.policy!r}",
                "has no reproduction to write.",
                "only an unsafe verdict comes with a reproduction.",
            )
        out = Path(out_dir)
        try:
            bundles = importlib.import_module("prunecheck.sim.evidence.bundle")
        except ImportError:  # the bundle writer of the search issue is not installed
            make_folder(out, private=True)
            write_text(out / "trace.json", dumps(self.reproduction), private=True)
            write_text(out / "narrative.md", self.narrative, private=True)
            return out
        system = self.system
        return Path(bundles.write_bundle(self.reproduction, out, system=system, force=force))


_WORDS = {
    CheckAt.AFTER_APPEND: "after every append",
    CheckAt.AFTER_BATCH: "after each batch completes",
    CheckAt.BEFORE_INVOKE: "only before model calls",
}


def words(check_at: CheckAt) -> str:
    """How the verdict line names a placement: '… if your runtime trims <words>'."""
    return _WORDS[check_at]


def _either(placements: Sequence[CheckAt]) -> str:
    return " or ".join(words(p) for p in placements)


def _repro_text(result: CheckResult) -> str:
    repro = result.reproduction
    if repro is None:
        return "-"
    expect = repro.meta.get("expect")
    named = expect.get("violations") if isinstance(expect, dict) else None
    kinds = ", ".join(k.replace("_", " ") for k in (named or result.violations))
    saved = f" {FROM_DATABASE}" if is_saved(result) else ""
    return f"{_length(repro)}: {kinds}{saved}"


#: How the table marks a placement a saved failure answered (its search not run).
FROM_DATABASE = "(from the failure database)"


def is_saved(result: CheckResult) -> bool:
    """Whether ``result``'s reproduction is a saved failure replayed (the
    failure database answered its placement; the search did not run)."""
    repro = result.reproduction
    found = repro.meta.get("found_by") if repro is not None else None
    return isinstance(found, dict) and found.get("driver") == "failure database"


def _length(repro: Trace) -> str:
    """'8 events', or '8 events (+4 to the harm)' when it runs past the violation."""
    harm = repro.meta.get("harm")
    added = harm.get("added") if isinstance(harm, dict) else None
    if isinstance(added, int) and 0 < added < len(repro.events):
        return f"{len(repro.events) - added} events (+{added} to the harm)"
    return f"{len(repro.events)} events"


def _covered(result: CheckResult) -> str:
    runs = sum(1 for p in (result.placements or (result,)) for _ in p.scenarios)
    return f"{runs} scenario(s) and {result.search_examples} search run(s) covered"


def combine(results: Sequence[CheckResult]) -> CheckResult:
    """One result over placements: an error if one stopped on an error,
    unsafe if any is unsafe (the reproduction of the first unsafe one),
    out of time if any ran out without a violation, else safe."""
    if len(results) == 1:
        return replace(results[0], placements=tuple(results))
    first = results[0]
    verdicts = [r.verdict for r in results]
    for verdict in (Verdict.ERROR, Verdict.UNSAFE, Verdict.OUT_OF_TIME, Verdict.SAFE):
        if verdict in verdicts:
            lead = results[verdicts.index(verdict)]
            break
    totals: Counter[str] = Counter()
    coverage: Coverage | None = None
    for r in results:
        totals.update(r.incidents)
        if r.coverage is not None:
            coverage = r.coverage if coverage is None else coverage.merge(r.coverage)
    return CheckResult(
        first.policy,
        lead.config,
        lead.verdict,
        tuple(s for r in results for s in r.scenarios),
        dict(sorted(totals.items())),
        lead.reproduction,
        lead.narrative,
        lead.error,
        sum(r.search_examples for r in results),
        first.policy_object,
        tuple(results),
        any(r.timed_out for r in results),
        first.system_object,
        coverage,
        sum(r.search_seconds for r in results),
    )


def summary(result: CheckResult, *, verdict: bool = True) -> str:
    """The scenarios, one row per placement with its verdict, the verdict line."""
    cfg = result.config
    several = len(result.placements) > 1
    checks = ", ".join(p.config.check_at for p in result.placements) or cfg.check_at
    lines = [
        f"policy {result.policy} · gate {cfg.gate} · checks {checks} · provider "
        f"{cfg.provider} · retries {cfg.max_retries} ({cfg.retry})"
    ]
    lead = f"{'checks at':<14} " if several else ""
    lines.append(f"{lead}{'scenario':<22} {'invocations':>11} {'violations':>10}  incidents")
    for run in result.scenarios:
        at = f"{run.scenario.check_at or '':<14} " if several else ""
        shown = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in run.incidents.items())
        note = (
            "  [stopped by policy error]"
            if run.error
            else f"  [capped at {run.events} events]"
            if run.capped
            else ""
        )
        lines.append(
            f"{at}{run.scenario.name:<22} {run.invocations:>11} {run.violations:>10}  "
            f"{shown or '-'}{note}"
        )
    placements = result.placements or (result,)
    if several:
        lines.append("")
        lines.append(
            f"{'checks at':<14} {'scenarios':>9} {'violations':>10} {'search runs':>11}"
            f"  {'verdict':<12} reproduction"
        )
        for p in placements:
            state = {
                Verdict.SAFE: "safe",
                Verdict.UNSAFE: "UNSAFE",
                Verdict.ERROR: "ERROR",
                Verdict.OUT_OF_TIME: "out of time",
            }[p.verdict]
            violations = sum(r.violations for r in p.scenarios)
            lines.append(
                f"{p.config.check_at:<14} {len(p.scenarios):>9} {violations:>10} "
                f"{p.search_examples:>11}  {state:<12} {_repro_text(p)}"
            )
    else:
        for p in placements:
            if is_saved(p):
                lines.append(f"adversarial search: not run, counterexample {FROM_DATABASE}")
            elif p.search_examples:
                found = (
                    "found"
                    if p.reproduction is not None
                    and p.reproduction.meta.get("found_by", {}).get("driver") == "search"
                    else "none"
                )
                lines.append(
                    f"adversarial search: {p.search_examples} runs, counterexample {found}"
                )
    if result.timed_out:
        lines.append(f"stopped at the time limit: {_covered(result)}")
    if result.coverage is not None and result.verdict is not Verdict.ERROR:
        lines.extend(result.coverage.lines())
    if verdict:
        lines.append(verdict_line(result))
        lines.extend(provider_lines(result))
    return "\n".join(lines) + "\n"


def provider_lines(result: CheckResult) -> list[str]:
    """Each provider named and its judgment (none when no provider was named)."""
    if not result.providers:
        return []
    judged = "the reproduction's requests" if result.reproduction is not None else "the check"
    lines = [f"providers (judged on {judged}):"] + [f"  {j.line()}" for j in result.providers]
    for repair in result.repairs:
        lines.extend(repair.lines())
    return lines


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """A check's verdict as one record: the human verdict line and the
    ``--json`` document both read it (:func:`verdict_record`).

    Attributes
    ----------
    verdict: the combined verdict.
    safe_at, unsafe_at, out_of_time_at: the placements of each verdict.
    violations: the violation classes met (suite and search, or a saved
        failure), with counts, in the order the line names them.
    costs: every other incident met (costs and outcomes such as
        ``session_abort``), with counts; the line does not name them.
    reproduction: the lead reproduction's length (``4 events (+3 to the
        harm)``), or None.
    vacuous: the vacuous clause of a safe verdict, or None.
    timed_out: the time limit stopped the check.
    line: the verdict line, as ``prunecheck check`` prints it.
    """

    verdict: Verdict
    safe_at: tuple[str, ...]
    unsafe_at: tuple[str, ...]
    out_of_time_at: tuple[str, ...]
    violations: Mapping[str, int]
    costs: Mapping[str, int]
    reproduction: str | None
    vacuous: str | None
    timed_out: bool
    line: str

    def to_json(self) -> dict[str, Any]:
        """The record as ``check --json``'s ``details`` hold it."""
        return {
            "verdict_line": self.line,
            "violations": dict(self.violations),
            "costs": dict(self.costs),
            "incidents": dict(sorted({**self.violations, **self.costs}.items())),
            "timed_out": self.timed_out,
            "safe_at": list(self.safe_at),
            "unsafe_at": list(self.unsafe_at),
            "out_of_time_at": list(self.out_of_time_at),
            "vacuous": self.vacuous,
        }


def verdict_record(result: CheckResult, bundles: Mapping[str, Path] | None = None) -> VerdictRecord:
    """The one record a check's verdict line and ``--json`` are rendered from."""
    placements = result.placements or (result,)
    at = {v: tuple(str(p.config.check_at) for p in placements if p.verdict is v) for v in Verdict}
    incidents = sorted(result.incidents.items())
    violations = {k: n for k, n in incidents if n and IncidentKind(k).is_violation}
    costs = {k: n for k, n in incidents if n and not IncidentKind(k).is_violation}
    repro = _length(result.reproduction) if result.reproduction is not None else None
    clause = vacuous_clause(result.coverage, "check") if result.safe else None
    record = VerdictRecord(
        result.verdict,
        at[Verdict.SAFE],
        at[Verdict.UNSAFE],
        at[Verdict.OUT_OF_TIME],
        violations,
        costs,
        repro,
        clause,
        result.timed_out,
        "",
    )
    return replace(record, line=_line(record, result, bundles))


def verdict_line(result: CheckResult, bundles: Mapping[str, Path] | None = None) -> str:
    """The verdict and the runtime it holds for.

    With one placement: safe / UNSAFE / OUT OF TIME for that runtime.  With
    several that agree: the same, "wherever your runtime fires its budget
    check".  With several that disagree: "safe if your runtime trims … ;
    UNSAFE if it trims …: reproduction in …".  Rendered from
    :func:`verdict_record`, as ``--json`` is.
    """
    return verdict_record(result, bundles).line


def _line(record: VerdictRecord, result: CheckResult, bundles: Mapping[str, Path] | None) -> str:
    if record.verdict is Verdict.ERROR:
        return f"verdict: ERROR — {result.error}"
    placements = result.placements or (result,)
    where = _where(result, bundles)
    checked = len(record.safe_at) + len(record.unsafe_at) + len(record.out_of_time_at)
    if len(placements) == 1:
        only = f" (checks {words(placements[0].config.check_at)})"
        if record.verdict is Verdict.SAFE:
            return _safe(record, "verdict: safe — no violation in the suite or the search") + only
        if record.verdict is Verdict.OUT_OF_TIME:
            return (
                f"verdict: OUT OF TIME — no violation in what was covered "
                f"({_covered(result)}); no verdict" + only
            )
        return _unsafe(record, result) + only
    if len(record.safe_at) == checked:
        return _safe(
            record,
            "verdict: safe — no violation in the suite or the search, wherever your "
            "runtime fires its budget check",
        )
    if len(record.unsafe_at) == checked:
        return _unsafe(record, result) + ", wherever your runtime fires its budget check"
    if len(record.out_of_time_at) == checked:
        return (
            f"verdict: OUT OF TIME — no violation in what was covered "
            f"({_covered(result)}); no verdict"
        )
    parts = []
    if record.safe_at:
        parts.append(f"safe if your runtime trims {_either(_at(record.safe_at))}")
    if record.unsafe_at:
        parts.append(f"UNSAFE if it trims {_either(_at(record.unsafe_at))}: reproduction {where}")
    if record.out_of_time_at:
        parts.append(f"no verdict (out of time) if it trims {_either(_at(record.out_of_time_at))}")
    return "verdict: " + "; ".join(parts)


def _at(names: Sequence[str]) -> list[CheckAt]:
    return [CheckAt(n) for n in names]


def _safe(record: VerdictRecord, line: str) -> str:
    """A safe verdict line, or "safe, but vacuous: …" when nothing the
    invariant is about was exercised."""
    if record.vacuous is None:
        return line
    return f"verdict: {record.vacuous} — " + line.removeprefix("verdict: safe — ")


def _where(result: CheckResult, bundles: Mapping[str, Path] | None) -> str:
    if bundles:
        return "in " + ", ".join(f"{p}/" for p in bundles.values())
    return "below"


def _unsafe(record: VerdictRecord, result: CheckResult) -> str:
    kinds = ", ".join(k.replace("_", " ") for k in record.violations)
    length = record.reproduction or "0 events"
    partial = f" (stopped at the time limit: {_covered(result)})" if record.timed_out else ""
    return f"verdict: UNSAFE — {kinds}; minimal reproduction: {length}{partial}"
