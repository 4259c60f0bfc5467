"""Shrinking any failing trace (sim/api/minimal.py): suite traces with
times, sessions, external writes and stream chunks shrink to ≤ 15 events of
the same incident class, and run on to the harm."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import TraceError
from prunecheck.model.events import ExternalWrite, SystemPrompt, UserMessage
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.system import incidents_of, replay
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.api.minimal import AIM, incident_class, shrink_trace
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.simulator import simulate
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.loader import load_system

POLICIES = Path(__file__).resolve().parent / "policies"
GIANT = f"{POLICIES}/size_hidden.py:giant_output"


def _suite_prefix(spec: str, check_at: CheckAt) -> Trace:
    """What check showed before shrinking: the shortest prefix, over the
    default suite's runs and agents, that ends at a first violation."""
    policy = load_system(spec)
    config = RuntimeConfig(check_at=check_at)
    best: Trace | None = None
    for level in (0.2, 0.6, 1.0):
        for seed in (1, 2, 3):
            run = simulate(policy, config, load_at(level), seed, horizon=300.0)
            for trace in run.traces:
                at = next(
                    (
                        step.index
                        for step, _ in replay(trace, policy, record=False)
                        if any(i.is_violation for i in step.result.incidents)
                    ),
                    None,
                )
                if at is not None and (best is None or at + 1 < len(best.events)):
                    assert trace.times is not None
                    best = Trace(
                        trace.policy,
                        config,
                        trace.events[: at + 1],
                        trace.seed,
                        trace.times[: at + 1],
                        dict(trace.meta),
                    )
    assert best is not None
    return best


@pytest.fixture(scope="module")
def long_suite_trace() -> Trace:
    trace = _suite_prefix(GIANT, CheckAt.BEFORE_INVOKE)
    assert len(trace.events) >= 200  # a suite trace as check used to show it
    assert any(isinstance(e, ExternalWrite) for e in trace.events)
    return trace


def test_a_200_event_suite_trace_shrinks_to_the_aim_with_the_same_class(
    long_suite_trace: Trace,
) -> None:
    policy = load_system(GIANT)
    kind = incident_class(long_suite_trace, policy)
    shrunk = shrink_trace(long_suite_trace, policy)
    assert shrunk.original == len(long_suite_trace.events)
    assert shrunk.events <= AIM and shrunk.fixpoint
    assert incident_class(shrunk.trace, policy) == kind
    assert shrunk.kinds == (str(kind),)
    # it ends at the step of the class, opens as a session does, keeps times
    last = [i for i in incidents_of(shrunk.trace, policy) if i.is_violation]
    assert last[0].step == len(shrunk.trace.events) - 1
    events = shrunk.trace.events
    assert isinstance(events[0], SystemPrompt)
    assert isinstance(next(e for e in events[1:] if not isinstance(e, ExternalWrite)), UserMessage)
    times = shrunk.trace.times
    assert times is not None and len(times) == len(events) and list(times) == sorted(times)
    assert set(times) <= set(long_suite_trace.times or ())
    # the same trace shrinks the same
    assert dumps(shrink_trace(long_suite_trace, policy).trace) == dumps(shrunk.trace)


def test_prunecheck_shrink_on_a_suite_trace(
    long_suite_trace: Trace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "suite.json"
    source.write_text(dumps(long_suite_trace), encoding="utf-8")
    out = tmp_path / "bundle"
    status = main(["shrink", str(source), "--trust-policy", "--out", str(out)])
    text = capsys.readouterr().out
    assert status == 1
    assert f"shrunk from {len(long_suite_trace.events)} to " in text
    assert "1-minimal" in text and "VIOLATION: invalid prune" in text
    trace = loads((out / "trace.json").read_text(encoding="utf-8"))
    shrunk = trace.meta["shrunk"]
    assert shrunk["to"] <= AIM and shrunk["kinds"] == ["invalid_prune"]
    assert len(trace.events) >= shrunk["to"]  # the harm may follow
    assert (out / "narrative.md").is_file()


def test_a_trace_without_a_violation_is_refused() -> None:
    trace = Trace("unit_safe", RuntimeConfig(), (SystemPrompt(10), UserMessage(10)))
    policy = builtin_policy("unit_safe")
    assert policy is not None
    with pytest.raises(TraceError, match="no violation"):
        shrink_trace(trace, ModelSystem(policy))


def test_shrink_refuses_code_it_was_not_told_to_trust(
    long_suite_trace: Trace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "suite.json"
    source.write_text(dumps(long_suite_trace), encoding="utf-8")
    assert main(["shrink", str(source)]) == 2
    assert "does not run a trace's code without your consent" in capsys.readouterr().err
    assert main(["shrink", str(source), "--trust-policy", "--target", "nonsense"]) == 2
    assert "is not an incident class" in capsys.readouterr().err


def test_a_target_class_keeps_the_harm_after_the_prune(long_suite_trace: Trace) -> None:
    from prunecheck.sim.evidence.harm import extend_to_harm

    policy = load_system(GIANT)
    extended = extend_to_harm(long_suite_trace, policy)
    harm = extended.meta["harm"]
    assert harm["violation_at"] == len(long_suite_trace.events) and harm["added"] >= 1
    kind = harm["kinds"][0]  # here: the retry re-runs a read whose file changed since
    shrunk = shrink_trace(extended, policy, target=[kind])
    assert shrunk.kinds == (kind,) and shrunk.events <= AIM
    met = incidents_of(shrunk.trace, policy)
    assert any(i.kind == kind and i.step == len(shrunk.trace.events) - 1 for i in met)


@pytest.mark.parametrize(
    ("spec", "placement", "examples"),
    [
        # the suite's reproductions (make test), and the search's (make test-all)
        ("turn_window", "before_invoke", 0),
        ("recency", "after_batch", 30),  # found by the search, then run on to the harm
        (f"{POLICIES}/size_hidden.py:long_context", "after_append", 0),
        pytest.param("turn_window", "before_invoke", 30, marks=pytest.mark.slow),
        pytest.param(
            f"{POLICIES}/size_hidden.py:long_context", "after_append", 30, marks=pytest.mark.slow
        ),
    ],
)
def test_check_reproductions_are_within_the_aim_or_say_why(
    spec: str, placement: str, examples: int
) -> None:
    """Every reproduction check shows is shrunk to at most AIM events up to
    its violation, or its report says which bound it reached and why."""
    from prunecheck.sim.api.check import check_policy, failure_report
    from prunecheck.sim.api.minimal import shrink_note

    result = check_policy(
        spec,
        levels=(0.6,),
        seeds=(1,),
        max_examples=examples,
        placements=(placement,),
        failures=False,
    )
    repro = result.reproduction
    assert repro is not None, result.summary()
    harm = repro.meta.get("harm") or {}
    to_violation = len(repro.events) - int(harm.get("added") or 0)
    note = shrink_note(repro)
    assert note and note in failure_report(result)  # the report names the bound reached
    assert repro.meta["shrunk"]["to"] == to_violation
    assert to_violation <= AIM or "above the aim" in note or "not shrunk" in note


def test_a_reproduction_that_cannot_be_shrunk_says_why() -> None:
    from prunecheck.sim.api.minimal import minimal_reproduction, shrink_note

    policy = builtin_policy("unit_safe")
    assert policy is not None
    trace = Trace("unit_safe", RuntimeConfig(), (SystemPrompt(10), UserMessage(10)))
    note = shrink_note(minimal_reproduction(trace, ModelSystem(policy)))
    assert note.startswith("not shrunk: trace: shows no violation")
