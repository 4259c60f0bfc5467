"""``--json`` and ``--junit`` of an agent loop: what they carry for a policy.

A loop's "placement" is its scenario class: the document of ``check
loop:…`` has one ``placements`` entry per class (in the table's order), of
``search loop:…`` one for the class searched.  Each entry holds the class's
verdict (``unsafe``, ``safe``, ``vacuous``, ``not_applicable``,
``out_of_time``), every violation kind of its minimal schedule, the first
violation (step, kind, detail, provider text), the reproduction bundle's
folder when ``--out`` wrote one, what the search covered (its ``figures``:
schedules in which the user's code changed the history, the widest batch,
the largest history against the budget when known; ``null`` for a class not
searched), and every finding of the class with whose it is (``findings``:
the framework's or the configuration's); ``details`` lists the classes the
configuration's findings make unsafe and counts the framework's.  The JUnit
report of ``check`` has one test case per scenario class, named by the class
(a class that does not apply passes, its name saying n/a and why; the
suite's ``vacuous`` property lists the classes whose own step never ran).
The shape is ``schemas/verdict-3.json``'s ``loop_placement``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prunecheck.sim.api.documents import document, first_violation, violation_json
from prunecheck.sim.api.junit import Case, provider_cases
from prunecheck.sim.api.loop_verdict import Cell, CellVerdict, LoopCheck

__all__ = [
    "VERDICT_JSON",
    "cell_json",
    "loop_cases",
    "loop_check_document",
    "loop_explore_document",
    "loop_properties",
    "loop_search_document",
]

#: The JUnit suite of a loop check.
SUITE = "prunecheck.check.loop"

#: A cell's verdict as the document writes it.
VERDICT_JSON: Mapping[CellVerdict, str] = {
    CellVerdict.UNSAFE: "unsafe",
    CellVerdict.SAFE: "safe",
    CellVerdict.VACUOUS: "vacuous",
    CellVerdict.NOT_APPLICABLE: "not_applicable",
    CellVerdict.OUT_OF_TIME: "out_of_time",
}


def cell_json(cell: Cell, bundle: Path | None) -> dict[str, Any]:
    """One scenario class as a ``placements`` entry (see the module's docs)."""
    found = cell.found
    first = first_violation(found.incidents) if found is not None else None
    return {
        "scenario_class": cell.scenario.name.value,
        "title": cell.scenario.title,
        "verdict": VERDICT_JSON[cell.verdict],
        "violations": sorted({k for k in cell.kinds.split(", ") if k}),
        "incidents": (
            dict(sorted(Counter(i.kind.value for i in found.incidents).items()))
            if found is not None
            else {}
        ),
        "first_violation": None if first is None else violation_json(first),
        "reproduction": None if bundle is None else str(bundle),
        "reproduction_steps": None if found is None else len(found.steps),
        "search_examples": cell.examples,
        "schedules": cell.schedules,
        "key_step": cell.scenario.key,
        "key_steps_applied": cell.exercised,
        "note": cell.note,
        "from_failure_database": cell.saved is not None,
        "findings": [
            {
                "violations": sorted(f.kinds),
                "owner": f.owner.value,
                "why": f.why,
                "reproduction_steps": len(f.outcome.steps),
            }
            for f in cell.findings
        ],
        "figures": None if cell.figures is None else cell.figures.to_json(),
    }


def _exercised(cells: tuple[Cell, ...]) -> dict[str, int]:
    live = [c for c in cells if c.verdict is not CellVerdict.NOT_APPLICABLE]
    return {
        "scenario_classes": len(live),
        "search_examples": sum(c.examples for c in cells),
        "schedules": sum(c.schedules for c in cells),
    }


def _details(result: LoopCheck, **more: Any) -> dict[str, Any]:
    return {
        "subject": "loop",
        "framework": result.target.framework,
        "agent": result.target.reference,
        "seed": result.seed,
        "verdict_line": result.verdict_line(),
        "provider_rules": result.rules,
        "vacuous": result.verdict is CellVerdict.VACUOUS,
        "unsafe_by_configuration": [c.scenario.name.value for c in result.configuration_unsafe],
        "framework_findings": len(result.framework_findings),
        **more,
    }


def _document(
    command: str, result: LoopCheck, bundles: Mapping[str, Path], status: int, **more: Any
) -> dict[str, Any]:
    entries = [cell_json(c, bundles.get(c.scenario.name.value)) for c in result.cells]
    lead = next((e for e in entries if e["verdict"] == "unsafe"), None)
    doc = document(
        command,
        policy=result.target.spec,
        verdict=VERDICT_JSON[result.verdict],  # vacuous: exit 0, or 4 under --fail-vacuous
        exit_status=status,
        placements=entries,
        exercised=_exercised(result.cells),
        reproduction=None if lead is None else lead["reproduction"],
        details=_details(result, **more),
    )
    doc["first_violation"] = None if lead is None else lead["first_violation"]
    return doc


def loop_check_document(
    result: LoopCheck, bundles: Mapping[str, Path], status: int, **more: Any
) -> dict[str, Any]:
    """The document of ``check loop:…``: a placement per scenario class;
    ``bundles`` by class name; ``more`` goes to ``details``."""
    return _document("check", result, bundles, status, **more)


def loop_search_document(
    result: LoopCheck, bundle: Path | None, status: int, **more: Any
) -> dict[str, Any]:
    """The document of ``search loop:…``: its one class as the one placement."""
    bundles = {} if bundle is None else {result.cells[0].scenario.name.value: bundle}
    return _document("search", result, bundles, status, **more)


def _failure(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    if entry["verdict"] != "unsafe":
        return None
    first = entry["first_violation"] or {}
    where = (
        f"{str(first.get('class', 'a violation')).replace('_', ' ')} at step "
        f"{first.get('step', '?')}: {first.get('detail', '')}"
    )
    if first.get("provider_text"):
        where += f" — provider: {first['provider_text']}"
    repro = entry["reproduction"]
    text = (
        f"violations: {', '.join(entry['violations'])}; minimal schedule of "
        f"{entry['reproduction_steps']} steps\n"
        + (
            f"reproduction: {repro}"
            if repro
            else "reproduction: not written (rerun with --out DIR to write the bundle)"
        )
    )
    return (f"{entry['title']}: {where}", text)


def loop_cases(
    doc: Mapping[str, Any], seconds: Mapping[str, float]
) -> list[tuple[str, list[Case]]]:
    """The JUnit suite of ``check loop:…``: a case per scenario class, failing
    when the class is unsafe (message: the first violation; text: the kinds and
    the reproduction's path), each timed by ``seconds`` (by class name)."""
    cases: list[Case] = []
    for entry in doc["placements"]:
        name = f"{entry['scenario_class']}: {entry['title']}"
        if entry["verdict"] == "not_applicable":
            name += f" (n/a: {entry['note']})"
        cases.append((name, _failure(entry), seconds.get(entry["scenario_class"], 0.0)))
    if doc.get("providers"):  # check loop:… --provider: a case per provider named
        return [(SUITE, cases), ("prunecheck.check.providers", provider_cases(doc))]
    return [(SUITE, cases)]


def loop_properties(doc: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """The suite's properties: ``vacuous`` (``true`` when no class's own
    step ever ran) and ``vacuous_classes`` (the classes whose own step never
    ran, comma separated), as ``check``'s suites of a policy carry theirs."""
    classes = [e["scenario_class"] for e in doc["placements"] if e["verdict"] == "vacuous"]
    props = [("vacuous", "true" if doc["details"]["vacuous"] else "false")]
    if classes:
        props.append(("vacuous_classes", ", ".join(classes)))
    return {SUITE: props}


def loop_explore_document(
    result: LoopCheck, bundle: Path | None, status: int, **more: Any
) -> dict[str, Any]:
    """The document of ``explore loop:…``: its one class as the one placement."""
    bundles = {} if bundle is None else {result.cells[0].scenario.name.value: bundle}
    return _document("explore", result, bundles, status, **more)
