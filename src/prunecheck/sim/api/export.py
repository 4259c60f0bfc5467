"""A verdict as the documents the command line writes: ``--json`` and ``--junit``.

:func:`verdict_json` and :func:`verdict_junit` take what the Python API
returns (``check_policy``'s :class:`~.verdict.CheckResult`, ``check_loop``'s
:class:`~.loop_verdict.LoopCheck`) and give the document ``prunecheck check
--json`` prints and the JUnit report ``--junit`` writes, byte for byte for the
same subject and seed: the documents are built here, in the orchestrator
(:mod:`.documents`, :mod:`.loop_documents`, :mod:`.junit`), so a script, the
pytest plugin and the command line write the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prunecheck.sim.api.documents import check_document, status_of
from prunecheck.sim.api.junit import check_cases, check_properties, check_times, junit_xml
from prunecheck.sim.api.loop_documents import (
    VERDICT_JSON,
    loop_cases,
    loop_check_document,
    loop_properties,
)
from prunecheck.sim.api.loop_verdict import LoopCheck
from prunecheck.sim.api.verdict import CheckResult

__all__ = ["verdict_json", "verdict_junit"]


def verdict_json(
    result: CheckResult | LoopCheck,
    bundles: Mapping[str, str | Path] | None = None,
    **details: Any,
) -> dict[str, Any]:
    """The ``--json`` document of ``result`` (schema ``prunecheck/verdict``).

    Parameters
    ----------
    result : CheckResult or LoopCheck
        A policy's verdict (``check_policy``) or an agent loop's (``check_loop``).
    bundles : mapping or None
        The reproduction bundles written, by placement (``"after_append"``) or
        scenario class (``"cancel"``): the document names them.
    **details
        More ``details`` fields of a loop's document (the command line adds
        ``max_steps`` and ``offline``).

    Its ``exit_status`` is the one ``prunecheck check`` gives without
    ``--fail-vacuous``.
    """
    folders = {k: Path(v) for k, v in (bundles or {}).items()}
    if isinstance(result, LoopCheck):
        status = status_of(VERDICT_JSON[result.verdict])
        return loop_check_document(result, folders, status, **details)
    return check_document(result, folders, status_of(str(result.verdict)))


def verdict_junit(
    result: CheckResult | LoopCheck, bundles: Mapping[str, str | Path] | None = None
) -> str:
    """The ``--junit`` report of ``result`` (JUnit XML), built from
    :func:`verdict_json` as the command line builds it, timed as it ran."""
    doc = verdict_json(result, bundles)
    if isinstance(result, LoopCheck):
        seconds = {c.scenario.name.value: c.seconds for c in result.cells}
        return junit_xml(loop_cases(doc, seconds), name="check", properties=loop_properties(doc))
    return junit_xml(
        check_cases(doc, check_times(result)), name="check", properties=check_properties(doc)
    )
