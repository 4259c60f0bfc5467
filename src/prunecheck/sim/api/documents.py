"""The verdict documents: what ``--json`` prints, built by the API.

Every checking command's ``--json`` document (schema
``schemas/verdict-3.json``) is built here, in the orchestrator, from the
API's results, so the command line, the Python API (``CheckResult.to_json``,
``LoopCheck.to_json``) and the pytest plugin write the same document for the
same subject and seed; :mod:`prunecheck.sim.cli.json_output` only adds the
``--json`` argument and prints.  Version 2 of the schema added an agent
loop's scenario classes as placements (:mod:`.loop_documents`); version 3
says ``vacuous``, not ``safe``, when nothing the verdict is about was
exercised.

Examples
--------
>>> doc = document("validate", verdict="safe", exit_status=0)
>>> doc["schema"], doc["schema_version"], doc["verdict"]
('prunecheck/verdict', 3, 'safe')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.incidents import Incident
from prunecheck.sim.api.baseline_file import Baseline
from prunecheck.sim.api.compare import Comparison
from prunecheck.sim.api.verdict import (
    CheckResult,
    ScenarioResult,
    is_saved,
    verdict_record,
)
from prunecheck.sim.drivers.coverage import Coverage

__all__ = [
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "VERDICT_OF_STATUS",
    "check_document",
    "document",
    "driver_document",
    "first_violation",
    "placement_json",
    "regress_document",
    "status_of",
    "violation_json",
]

#: The schema's name and version: a document holds both; version N is
#: ``schemas/verdict-N.json``.  A field removed or changed in meaning, or a
#: new shape of a field (version 2: a loop's scenario classes as placements;
#: version 3: ``vacuous`` as a top-level verdict), bumps it.
SCHEMA_NAME = "prunecheck/verdict"
SCHEMA_VERSION = 3

#: The verdict a command's exit status stands for (4: vacuous, under
#: ``--fail-vacuous``; without it a vacuous verdict exits 0 and
#: :func:`document` reads it from the coverage or the details).
VERDICT_OF_STATUS = {0: "safe", 1: "unsafe", 2: "error", 3: "out_of_time", 4: "vacuous"}


def document(
    command: str,
    *,
    verdict: str,
    exit_status: int,
    policy: str | None = None,
    runtime: RuntimeConfig | None = None,
    placements: Sequence[Mapping[str, Any]] = (),
    exercised: Mapping[str, int] | None = None,
    first: Incident | None = None,
    reproduction: str | Path | None = None,
    error: str | None = None,
    details: Mapping[str, Any] | None = None,
    coverage: Coverage | None = None,
) -> dict[str, Any]:
    """One document of the schema: the fields every command fills.

    Parameters
    ----------
    command : str
        The command's name (``check``, ``search``, …).
    verdict : str
        ``safe``, ``unsafe``, ``error`` or ``out_of_time`` (``vacuous``
        too): a ``safe`` whose coverage is vacuous, or whose details say
        ``vacuous`` (an agent loop), is written ``vacuous`` — "safe" means
        the runs exercised what the verdict is about.
    exit_status : int
        The command's exit status (overwritten by :func:`run_as_json`).
    policy : str or None
        The policy spec checked, if any.
    runtime : RuntimeConfig or None
        The runtime the verdict holds for (gate, placement, provider, retry…).
    placements : sequence of mapping
        One entry per placement checked (see :func:`check_document`).
    exercised : mapping of str to int or None
        What was exercised: counts the command computed.
    first : Incident or None
        The first violation.
    reproduction : str or Path or None
        The reproduction bundle's folder (or trace file) if one was written.
    error : str or None
        The error paragraph of a policy that failed.
    details : mapping or None
        Command-specific fields.
    coverage : Coverage or None
        What the command exercised (check, search, explore): the optional
        ``coverage`` field, with its gaps and whether the verdict is vacuous.
    """
    said_vacuous = (coverage is not None and coverage.vacuous) or (
        details is not None and details.get("vacuous") is True
    )
    if verdict == "safe" and said_vacuous:
        verdict = "vacuous"
    doc: dict[str, Any] = {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "policy": policy,
        "verdict": verdict,
        "exit_status": exit_status,
        "runtime": None if runtime is None else runtime.to_json(),
        "placements": [dict(p) for p in placements],
        "exercised": dict(exercised or {}),
        "first_violation": None if first is None else violation_json(first),
        "reproduction": None if reproduction is None else str(reproduction),
        "error": error,
        "details": dict(details or {}),
    }
    if coverage is not None:
        doc["coverage"] = coverage.to_json()
    return doc


def violation_json(incident: Incident) -> dict[str, Any]:
    """An incident in the schema's form: ``step`` 1-based, as narratives number steps."""
    return {
        "class": incident.kind.value,
        "reason": incident.reason or None,
        "step": incident.step + 1,
        "ids": list(incident.ids),
        "detail": incident.detail,
        "provider_text": incident.text or None,
    }


def first_violation(incidents: Iterable[Incident]) -> Incident | None:
    """The earliest violation among ``incidents`` (by step), or None."""
    found = [i for i in incidents if i.is_violation]
    return min(found, key=lambda i: i.step) if found else None


def _incidents_of(result: CheckResult) -> list[Incident]:
    """The incidents of a placement's reproduction, replayed (none when safe)."""
    system = result.system
    if result.reproduction is None or system is None:
        return []
    from prunecheck.model.system import incidents_of

    return incidents_of(result.reproduction, system)


def _scenario_json(run: ScenarioResult) -> dict[str, Any]:
    return {
        "name": run.scenario.name,
        "level": run.scenario.level,
        "seed": run.scenario.seed,
        "slow_calls": run.scenario.slow_calls,
        "invocations": run.invocations,
        "events": run.events,
        "violations": run.violations,
        "incidents": dict(run.incidents),
        "capped": run.capped,
        "error": run.error,
    }


def placement_json(result: CheckResult, bundle: Path | None) -> dict[str, Any]:
    """One placement of ``check``: its verdict, scenarios, first violation, bundle."""
    first = first_violation(_incidents_of(result))
    return {
        "check_at": str(result.config.check_at),
        "verdict": str(result.verdict),
        "scenarios": [_scenario_json(s) for s in result.scenarios],
        "search_examples": result.search_examples,
        "incidents": dict(result.incidents),
        "first_violation": None if first is None else violation_json(first),
        "reproduction": None if bundle is None else str(bundle),
        "reproduction_events": (
            None if result.reproduction is None else len(result.reproduction.events)
        ),
        "coverage": None if result.coverage is None else result.coverage.to_json(),
        "from_failure_database": is_saved(result),
    }


def check_document(result: CheckResult, bundles: Mapping[str, Path], status: int) -> dict[str, Any]:
    """The document of ``prunecheck check``: one entry per placement checked.
    ``details`` is the :class:`~prunecheck.sim.api.verdict.VerdictRecord`
    the human verdict line is rendered from (``details.verdict_line`` is that
    line; ``details.violations`` the classes it names)."""
    placements = result.placements or (result,)
    entries = [placement_json(p, bundles.get(str(p.config.check_at))) for p in placements]
    lead = next((e for e in entries if e["verdict"] == "unsafe"), None)
    scenarios = [s for p in placements for s in p.scenarios]
    exercised = {
        "placements": len(placements),
        "scenarios": len(scenarios),
        "invocations": sum(s.invocations for s in scenarios),
        "events": sum(s.events for s in scenarios),
        "search_examples": result.search_examples,
    }
    doc = document(
        "check",
        policy=result.policy,
        verdict=str(result.verdict),
        exit_status=status,
        runtime=result.config,
        placements=entries,
        exercised=exercised,
        reproduction=None if lead is None else lead["reproduction"],
        error=result.error,
        coverage=result.coverage,
        details=verdict_record(result, bundles).to_json(),  # what the verdict line reads
    )
    doc["first_violation"] = None if lead is None else lead["first_violation"]
    if result.providers:  # check --provider: each provider named and its judgment
        doc["providers"] = [j.to_json() for j in result.providers]
        doc["repairs"] = [r.to_json() for r in result.repairs]
    return doc


def driver_document(
    command: str,
    *,
    status: int,
    spec: str | None,
    config: RuntimeConfig | None,
    exercised: Mapping[str, int],
    incidents: Iterable[Incident] = (),
    reproduction: str | Path | None = None,
    details: Mapping[str, Any] | None = None,
    coverage: Coverage | None = None,
) -> dict[str, Any]:
    """The document of a command that is not ``check`` (search, explore, replay, …):
    its verdict read from its exit status, its first violation from ``incidents``,
    and (search, explore) what it exercised."""
    doc = document(
        command,
        policy=spec,
        verdict=VERDICT_OF_STATUS.get(status, "error"),
        exit_status=status,
        runtime=config,
        exercised=exercised,
        first=first_violation(incidents),
        reproduction=reproduction,
        details=details,
        coverage=coverage,
    )
    return doc


def regress_document(
    comparison: Comparison,
    current: Baseline,
    *,
    baseline: str,
    status: int,
    error: str | None = None,
) -> dict[str, Any]:
    """The document of ``prunecheck regress``: each class compared (sessions
    that met it, baseline and now, its p-value and change) and each corpus trace."""
    changed = dict(comparison.corpus)
    regressed = next((c.path for c in current.corpus if c.path in changed), None)
    corpus: list[dict[str, Any]] = [
        {
            "path": c.path,
            "violations": dict(c.violations),
            "error": c.error,
            "regressed": c.path in changed,
            "change": changed.get(c.path),
        }
        for c in current.corpus
    ]
    classes = [
        {
            "class": c.kind,
            "baseline": {"sessions_met": c.base[0], "sessions": c.base[1]},
            "current": {"sessions_met": c.current[0], "sessions": c.current[1]},
            "p_value": c.p_value,
            "change": str(c.change),
        }
        for c in comparison.classes
    ]
    return document(
        "regress",
        policy=current.policy,
        verdict=VERDICT_OF_STATUS.get(status, "error"),
        exit_status=status,
        runtime=current.config,
        exercised={
            "runs": comparison.runs,
            "sessions": sum(len(r.sessions) for r in current.runs),
            "classes": len(classes),
            "corpus": len(corpus),
        },
        reproduction=regressed,
        error=error,
        details={
            "baseline": baseline,
            "alpha": comparison.alpha,
            "classes": classes,
            "corpus": corpus,
            "notes": list(comparison.notes),
            "regressions": [c["class"] for c in classes if c["change"] == "REGRESSION"]
            + [c["path"] for c in corpus if c["regressed"]],
        },
    )


def status_of(verdict: str) -> int:
    """The exit status a command gives for ``verdict`` (a vacuous safe exits 0
    unless ``--fail-vacuous``; the Python API's documents say what it would)."""
    return {"unsafe": 1, "error": 2, "out_of_time": 3}.get(verdict, 0)
