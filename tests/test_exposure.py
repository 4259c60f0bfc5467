"""Exposure keys are named once (prunecheck.model.exposure); every key a
report, table or baseline looks up is one the simulator emits, so a typo can
no longer silently empty a plot or a column."""

from __future__ import annotations

from functools import cache

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.exposure import (
    ANY_VIOLATION,
    EXPOSURE_KEYS,
    ORPHAN_REJECTION,
    UNANSWERED_REJECTION,
    rejection_key,
)
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import builtin_policy
from prunecheck.model.provider import REJECTION_KINDS
from prunecheck.model.state import CounterName
from prunecheck.sim.api import compare
from prunecheck.sim.cli import sweep as sweep_command
from prunecheck.sim.drivers import shape
from prunecheck.sim.drivers.simulator import RunResult, simulate
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.reports import data, figure_parts, tables
from prunecheck.sim.stats import sessions
from prunecheck.sim.subjects.loader import model_system


def test_the_keys_spelled_out() -> None:
    assert ANY_VIOLATION == "any_violation"
    assert ORPHAN_REJECTION == "provider_rejection:result_without_call"
    assert UNANSWERED_REJECTION == "provider_rejection:call_without_result"
    assert {ORPHAN_REJECTION, UNANSWERED_REJECTION} <= {rejection_key(k) for k in REJECTION_KINDS}
    assert rejection_key("tools_undeclared") == "provider_rejection:tools_undeclared"
    every_class = {k.value for k in IncidentKind}
    every_kind = {rejection_key(k) for k in REJECTION_KINDS}
    assert every_class | every_kind | {ANY_VIOLATION} == EXPOSURE_KEYS


@cache
def _results() -> tuple[RunResult, ...]:
    """Real simulations: a policy that breaks units under no gate, the
    refusals of the reference gate and the costs of commit and spill."""
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    return tuple(
        simulate(
            model_system("lowest_salience", policy),
            RuntimeConfig(gate=gate),
            load_at(1.0),
            seed=1,
            horizon=300.0,
        )
        for gate in (Gate.NONE, Gate.REFERENCE, Gate.COMMIT, Gate.SPILL)
    )


@cache
def _emitted() -> frozenset[str]:
    """Every key counted (non-zero) by the simulations of :func:`_results`."""
    keys: set[str] = set()
    for result in _results():
        assert result.error is None
        keys.update(k for k, n in result.exposed.items() if n)
        keys.update(k for k, n in result.incidents.items() if n)
        for record in result.sessions:
            keys.update(record.first)
            keys.update(record.exposed)
    return frozenset(keys)


def test_every_key_the_simulator_emits_is_a_named_key() -> None:
    emitted = _emitted()
    assert emitted <= EXPOSURE_KEYS, emitted - EXPOSURE_KEYS
    assert {ANY_VIOLATION, ORPHAN_REJECTION, UNANSWERED_REJECTION} <= emitted


_LOOKED_UP = {
    "figure_parts.CLASSES (plots)": tuple(figure_parts.CLASSES),
    "figure_parts.TIGHT_CLASSES (plots)": figure_parts.TIGHT_CLASSES,
    "tables._CLASSES": tables._CLASSES,
    "sweep._COLUMNS": tuple(key for _, key in sweep_command._COLUMNS),
    "data.CLASS_LABELS": tuple(data.CLASS_LABELS),
    "compare.ANY": (compare.ANY,),
    "sessions.PER_INVOCATION": tuple(sessions.PER_INVOCATION),
}


@pytest.mark.parametrize("where", list(_LOOKED_UP))
def test_every_key_a_report_looks_up_is_one_the_simulator_emits(where: str) -> None:
    """A typo here would give an empty plot or a column of zeros."""
    missing = set(_LOOKED_UP[where]) - _emitted()
    assert not missing, f"{where} looks up keys no simulation emits: {sorted(missing)}"


def test_every_key_the_summary_explains_or_times_is_a_named_key() -> None:
    for keys in (data.MEANINGS, sessions.NOT_TIMED, (shape.SESSION_END,)):
        assert set(keys) <= EXPOSURE_KEYS, set(keys) - EXPOSURE_KEYS
    # the summary explains every violation class a simulation met
    violations = {k for k in _emitted() if k in {v.value for v in IncidentKind if v.is_violation}}
    assert violations - {IncidentKind.PROVIDER_REJECTION.value} <= set(data.MEANINGS)


def test_every_counter_a_runtime_keeps_is_named() -> None:
    """``RuntimeState.counters`` holds incidents (by class) and the
    :class:`CounterName` counts; readers (tables, bundles, the simulator's
    agents) name them through the enum, so none reads a counter that no
    runtime writes."""
    named = {c.value for c in CounterName} | {k.value for k in IncidentKind}
    written = {k for result in _results() for k, n in result.counters.items() if n}
    assert written <= named, written - named
    assert {
        CounterName.INVOCATIONS,
        CounterName.CHECKS,
        CounterName.PRUNES,
        CounterName.REFUSED_PRUNES,
        CounterName.SPILLS,
        CounterName.REINJECTIONS,
        CounterName.DEFERRED_CHECKS,
    } <= written
