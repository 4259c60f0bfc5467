"""``--junit FILE``: a verdict as JUnit XML, the report every CI viewer reads.

``check`` writes one ``<testsuite>`` per budget-check placement, with one
``<testcase>`` per scenario of the suite and one for the adversarial search
(``classname`` ``prunecheck.check.<placement>``; with ``--provider``, a suite
``prunecheck.check.providers`` with one case per provider named, failing
when it rejects a request of the reproduction), each timed as it ran (wall
seconds, from the result: the JSON document leaves times out so that it is the
same for the same seed; a suite's and the file's time are the sums);
``regress`` writes one
``<testcase>`` per incident class compared and per corpus trace that changed.
A case fails (``<failure>``) when it met a violation (a regression); its
message names the first violation and its text the reproduction's path, so a
CI viewer shows both beside the failing case.  Each ``check`` suite carries
its vacuity as ``<properties>``: ``vacuous`` (``true`` for a safe that never
exercised what the invariant is about) and, when true, ``vacuous_gaps`` (what
went unexercised, the ``coverage.gaps`` of the JSON document) — a passing
but vacuous placement is visible in the CI report, not only on stdout.  It is
built from the JSON document of :mod:`.documents`, so the two never
disagree; like the document it is the API's (``CheckResult.to_junit``),
:mod:`prunecheck.sim.cli.junit_output` only adds ``--junit``.

Examples
--------
>>> from xml.etree import ElementTree
>>> xml = junit_xml([("prunecheck.regress", [("spill", None, 0.0)])], name="regress")
>>> ElementTree.fromstring(xml).get("tests")
'1'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.verdict import CheckResult
from prunecheck.sim.support.outputs import output_file, write_text

__all__ = [
    "Case",
    "Properties",
    "check_cases",
    "check_properties",
    "check_times",
    "junit_xml",
    "provider_cases",
    "regress_cases",
    "write_junit",
]

#: One test case: its name, its failure (message, text) or None, its seconds.
Case = tuple[str, tuple[str, str] | None, float]
#: Properties of a suite: (name, value) pairs.
Properties = Sequence[tuple[str, str]]


def _violation_text(first: Mapping[str, Any] | None) -> str:
    if not first:
        return "a violation"
    text = f"{str(first['class']).replace('_', ' ')} at step {first['step']}"
    if first.get("ids"):
        text += f" ({', '.join(first['ids'])})"
    text += f": {first['detail']}"
    if first.get("provider_text"):
        text += f" — provider: {first['provider_text']}"
    return text


def _reproduction_text(path: str | None) -> str:
    return (
        f"reproduction: {path}"
        if path
        else "reproduction: not written (rerun with --out DIR to write the bundle)"
    )


def check_times(result: CheckResult) -> dict[str, tuple[list[float], float]]:
    """Per placement, the wall seconds of each scenario and of the search (the
    JSON document leaves them out: it is the same for the same seed)."""
    return {
        str(p.config.check_at): ([s.seconds for s in p.scenarios], p.search_seconds)
        for p in result.placements or (result,)
    }


def check_cases(
    doc: Mapping[str, Any], times: Mapping[str, tuple[Sequence[float], float]] | None = None
) -> list[tuple[str, list[Case]]]:
    """The suites of a ``check`` document: one per placement, a case per
    scenario (failing if it met a violation) and one for the search (failing
    if the placement is unsafe and no scenario of it failed), each taking
    its seconds from ``times`` (:func:`check_times`; 0 without)."""
    suites: list[tuple[str, list[Case]]] = []
    for placement in doc["placements"]:
        took, searching = (times or {}).get(placement["check_at"], ((), 0.0))
        first = placement["first_violation"]
        repro = _reproduction_text(placement["reproduction"])
        cases: list[Case] = []
        for i, run in enumerate(placement["scenarios"]):
            failure = None
            if run["violations"]:
                counts = ", ".join(
                    f"{n} {k.replace('_', ' ')}" for k, n in sorted(run["incidents"].items())
                )
                failure = (
                    f"{run['violations']} violation(s) in {run['name']}; first of the "
                    f"placement: {_violation_text(first)}",
                    f"{counts}\n{repro}",
                )
            elif run["error"]:
                failure = (f"policy error in {run['name']}", str(run["error"]))
            cases.append((run["name"], failure, took[i] if i < len(took) else 0.0))
        scenario_failed = any(c[1] is not None for c in cases)
        search = None
        if placement["verdict"] == "unsafe" and not scenario_failed:
            search = (
                f"the adversarial search found: {_violation_text(first)}",
                repro,
            )
        searched = (
            "saved failure replayed (from the failure database; no search)"
            if placement.get("from_failure_database")
            else f"adversarial search, {placement['search_examples']} runs"
        )
        cases.append((searched, search, searching))
        suites.append((f"prunecheck.check.{placement['check_at']}", cases))
    if doc.get("providers"):
        suites.append(("prunecheck.check.providers", provider_cases(doc)))
    return suites


def provider_cases(doc: Mapping[str, Any]) -> list[Case]:
    """``check --provider``: one case per provider named, failing when it
    rejects a request of the reproduction (its message the text, its body
    the step and the request location)."""
    cases: list[Case] = []
    repro = _reproduction_text(doc.get("reproduction"))
    for judged in doc["providers"]:
        failure = None
        if judged["verdict"] == "rejects":
            failure = (
                f"{judged['provider']} rejects: HTTP {judged['status']}: {judged['text']}",
                f"step {judged['step']} (checks {judged['check_at']}), at "
                f"{judged['location']}\n{repro}",
            )
        cases.append((f"provider {judged['provider']}: {judged['verdict']}", failure, 0.0))
    return cases


def check_properties(doc: Mapping[str, Any]) -> dict[str, Properties]:
    """Per ``check`` suite (placement), its vacuity: ``vacuous`` ``true`` or
    ``false`` and, when true, ``vacuous_gaps`` (the coverage's gaps, comma
    separated).  Only a safe placement is vacuous; one without coverage (a
    saved failure replayed) says ``false``."""
    found: dict[str, Properties] = {}
    for placement in doc["placements"]:
        coverage = placement.get("coverage") or {}
        vacuous = placement["verdict"] == "safe" and bool(coverage.get("vacuous"))
        props = [("vacuous", "true" if vacuous else "false")]
        if vacuous:
            props.append(("vacuous_gaps", ", ".join(coverage.get("gaps", ()))))
        found[f"prunecheck.check.{placement['check_at']}"] = props
    return found


def regress_cases(
    doc: Mapping[str, Any], times: tuple[float, Mapping[str, float]] | None = None
) -> list[tuple[str, list[Case]]]:
    """The suites of a ``regress`` document: the suite re-run (its wall
    seconds, ``times[0]``), a case per incident class compared (failing on a
    regression; a comparison takes no measurable time) and a case per corpus
    trace (failing when it now shows a violation its baseline did not; its
    replay's seconds from ``times[1]``)."""
    details = doc["details"]
    suite_seconds, corpus_seconds = times or (0.0, {})
    runs = doc["exercised"]["runs"]
    classes: list[Case] = [(f"suite re-run, {runs} runs compared", None, suite_seconds)]
    for c in details["classes"]:
        failure = None
        if c["change"] == "REGRESSION":
            base, now = c["baseline"], c["current"]
            failure = (
                f"{c['class'].replace('_', ' ')} regressed: {base['sessions_met']} of "
                f"{base['sessions']} sessions in the baseline, {now['sessions_met']} of "
                f"{now['sessions']} now (p = {c['p_value']:.3g})",
                f"baseline: {details['baseline']}",
            )
        classes.append((c["class"], failure, 0.0))
    corpus: list[Case] = []
    for c in details["corpus"]:
        failure = None
        if c["regressed"]:
            failure = (f"corpus trace regressed: {c['change']}", _reproduction_text(c["path"]))
        elif c["error"]:
            failure = (f"corpus trace not replayed: {c['error']}", _reproduction_text(c["path"]))
        corpus.append((c["path"], failure, corpus_seconds.get(c["path"], 0.0)))
    suites = [("prunecheck.regress.classes", classes)]
    if corpus:
        suites.append(("prunecheck.regress.corpus", corpus))
    return suites


def junit_xml(
    suites: Sequence[tuple[str, Sequence[Case]]],
    *,
    name: str,
    properties: Mapping[str, Properties] | None = None,
) -> str:
    """The JUnit XML text of ``suites`` (``<testsuites>`` of ``<testsuite>``),
    each with its ``properties`` (by suite name) if any."""
    root = ElementTree.Element("testsuites", name=f"prunecheck {name}")
    total = failed = 0
    seconds_in_all = 0.0
    for suite_name, cases in suites:
        seconds_in_suite = sum(c[2] for c in cases)
        seconds_in_all += seconds_in_suite
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=suite_name,
            tests=str(len(cases)),
            failures=str(sum(1 for c in cases if c[1] is not None)),
            errors="0",
            skipped="0",
            time=f"{seconds_in_suite:.6f}",
        )
        props = (properties or {}).get(suite_name)
        if props:
            holder = ElementTree.SubElement(suite, "properties")
            for key, value in props:
                ElementTree.SubElement(holder, "property", name=key, value=value)
        for case_name, failure, seconds in cases:
            case = ElementTree.SubElement(
                suite, "testcase", name=case_name, classname=suite_name, time=f"{seconds:.6f}"
            )
            if failure is not None:
                node = ElementTree.SubElement(case, "failure", message=failure[0], type="violation")
                node.text = failure[1]
        total += len(cases)
        failed += sum(1 for c in cases if c[1] is not None)
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    root.set("time", f"{seconds_in_all:.6f}")
    ElementTree.indent(root)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        + ElementTree.tostring(root, encoding="unicode")
        + "\n"
    )


def write_junit(
    path: str,
    suites: Sequence[tuple[str, Sequence[Case]]],
    *,
    name: str,
    properties: Mapping[str, Properties] | None = None,
) -> Path:
    """Write the JUnit XML to ``path``; an unwritable path is bad input."""
    target = output_file(path, "--junit", force=True)  # checked by check_junit
    try:
        write_text(target, junit_xml(suites, name=name, properties=properties))
    except OSError as exc:
        raise ConfigError(
            f"--junit {path}",
            f"cannot be written: {exc.strerror}.",
            "pass a file in an existing, writable folder.",
        ) from None
    return target
