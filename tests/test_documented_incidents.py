"""The documented incidents (the two the domain document works through),
replayed step by step from the hand-written traces in tests/corpus (the
``seed_*.json`` files, named before this test was), and the same traces
under gate ``commit`` with none of them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from prunecheck.model.gates import Gate
from prunecheck.model.incidents import VIOLATION_KINDS, Incident, IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import builtin_policy
from prunecheck.model.provider import Provider
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import replay
from prunecheck.model.trace import Trace, TraceStep, dumps, loads

CORPUS = Path(__file__).parent / "corpus"
PARALLEL = CORPUS / "seed_parallel_batch.json"
STREAMING = CORPUS / "seed_streaming_result.json"

ANTHROPIC_TEXT = (
    "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: c1. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
    "message."
)
OPENAI_TEXT = (
    "Invalid parameter: messages with role 'tool' must be a response to a "
    "preceeding message with 'tool_calls'."
)


def load(path: Path) -> Trace:
    return loads(path.read_text(encoding="utf-8"), str(path))


def run(trace: Trace) -> tuple[list[TraceStep], RuntimeState]:
    policy = builtin_policy(trace.policy)
    assert policy is not None
    steps: list[TraceStep] = []
    final: RuntimeState | None = None
    for item, final in replay(trace, ModelSystem(policy)):  # noqa: B007 (the last state is kept)
        steps.append(item)
    assert final is not None
    return steps, final


def at(steps: list[TraceStep], index: int) -> list[tuple[str, tuple[str, ...], str]]:
    return [(i.kind.value, i.ids, i.reason) for i in steps[index].result.incidents]


def violations(steps: list[TraceStep]) -> list[Incident]:
    return [i for s in steps for i in s.result.incidents if i.is_violation]


@pytest.mark.parametrize("path", [PARALLEL, STREAMING])
def test_corpus_files_are_deterministic_and_say_what_they_expect(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    trace = loads(text, str(path))
    assert dumps(trace) == text
    assert text.count('\n    {"kind": ') == len(trace.events)  # one event per line
    assert trace.meta["title"] and trace.meta["story"]
    expected = trace.meta["expect"]["violations"]
    assert expected == sorted(set(expected))
    steps, _ = run(trace)
    assert sorted({i.kind.value for i in violations(steps)}) == expected


def test_parallel_batch_incident_step_by_step() -> None:
    trace = load(PARALLEL)
    assert (trace.policy, trace.config.budget, trace.config.check_at) == (
        "lowest_salience",
        32_000,
        "after_append",
    )
    steps, state = run(trace)
    # The first result arrives; the per-append check evicts the batch turn alone.
    evicted = [n.ids for n in steps[6].result.notes if n.kind is NoteKind.EVICT]
    assert evicted == [("m5",)]
    assert at(steps, 6) == [
        ("invalid_prune", ("m5", "m6"), "split_unit"),
        ("invalid_prune", ("m5", "c2", "c3"), "pending_unit"),
        ("orphaned_result", ("m6", "c1"), ""),
    ]
    # The file changes; the other two results arrive as orphans.
    assert at(steps, 7) == []
    assert at(steps, 8) == [("orphaned_result", ("m7", "c2"), "")]
    assert at(steps, 9) == [("orphaned_result", ("m8", "c3"), "")]
    # Anthropic rejects the invocation with its exact text.
    rejection = steps[10].result.incidents
    assert [(i.kind, i.reason) for i in rejection] == [
        (IncidentKind.PROVIDER_REJECTION, "result_without_call")
    ]
    assert rejection[0].text == ANTHROPIC_TEXT
    assert rejection[0].ids == ("c1", "c2", "c3")
    # The naive retry re-runs the batch: the read sees the modified file.
    dup = [i for i in steps[11].result.incidents if i.kind is IncidentKind.DUPLICATED_SIDE_EFFECT]
    assert [(i.ids, i.reason) for i in dup] == [(("c1", "src/app.py"), "changed_state")]
    assert dup[0].detail == (
        "retry re-ran read_file(src/app.py) of call c1 against changed state: it saw v0, now v1"
    )
    assert state.calls["c4"].retry_of == "c1" and state.calls["c4"].version_seen == 1
    assert sorted({i.kind.value for i in violations(steps)}) == [
        "duplicated_side_effect",
        "invalid_prune",
        "orphaned_result",
        "provider_rejection",
    ]


def test_parallel_batch_incident_with_openai_gives_the_openai_text() -> None:
    trace = load(PARALLEL)
    trace = replace(trace, config=replace(trace.config, provider=Provider.OPENAI))
    steps, _ = run(trace)
    texts = [i.text for s in steps for i in s.result.incidents if i.text]
    assert texts == [OPENAI_TEXT]
    assert steps[10].result.incidents[0].kind is IncidentKind.PROVIDER_REJECTION


def test_streaming_result_incident_step_by_step() -> None:
    trace = load(STREAMING)
    steps, state = run(trace)
    # The first chunk opens m6 and the mid-stream check evicts it.
    evicted = [n.ids for n in steps[6].result.notes if n.kind is NoteKind.EVICT]
    assert evicted == [("m6",)]
    assert at(steps, 6) == [
        ("invalid_prune", ("m5", "m5"), "split_unit"),
        ("invalid_prune", ("m5", "m6"), "open_message"),
        ("invalid_prune", ("m5", "c1"), "pending_unit"),
    ]
    # The rest is re-appended as a new message, without its prefix.
    assert [n.kind for n in steps[7].result.notes][:2] == [NoteKind.STREAM_LOST, NoteKind.APPEND]
    assert at(steps, 7) == at(steps, 8) == []
    (truncated,) = steps[9].result.incidents
    assert truncated.kind is IncidentKind.TRUNCATED_PAYLOAD
    assert truncated.ids == ("m7", "c1")
    assert truncated.detail == (
        "result m7 holds chunks 2–4 of 4: the first 200 of 390 tokens are missing"
    )
    m7 = state.context["m7"]
    assert (m7.call_id, m7.first_chunk, m7.chunks, m7.tokens, m7.closed) == ("c1", 1, 3, 190, True)
    # The provider accepts it: the corruption is silent.
    assert at(steps, 10) == [] and state.count("invocations") == 2
    assert sorted({i.kind.value for i in violations(steps)}) == [
        "invalid_prune",
        "truncated_payload",
    ]


@pytest.mark.parametrize("path", [PARALLEL, STREAMING])
@pytest.mark.parametrize("gate", [Gate.COMMIT, Gate.SPILL])
def test_the_same_traces_under_the_commit_gate_have_no_violation(path: Path, gate: Gate) -> None:
    trace = load(path)
    trace = replace(trace, config=replace(trace.config, gate=gate))
    steps, state = run(trace)
    kinds = [i.kind.value for s in steps for i in s.result.incidents]
    assert not {k.value for k in VIOLATION_KINDS} & set(kinds), kinds
    assert "deferral" in kinds  # the price: the check waits for the batch
    assert state.pending == {} and not state.orphans and not state.unanswered
    assert state.count("invocations") == 2
