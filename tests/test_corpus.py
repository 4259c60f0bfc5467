"""The regression corpus: every trace under tests/corpus/ replays to exactly
the violation kinds its ``meta.expect.violations`` names."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.model.system import incidents_of
from prunecheck.model.trace import loads
from prunecheck.sim.subjects.loader import load_system

CORPUS = Path(__file__).parent / "corpus"
TRACES = sorted(CORPUS.glob("*.json"))


def test_corpus_is_not_empty() -> None:
    names = {p.name for p in TRACES}
    assert {"orphan_in_flight_batch.json", "stream_evicted_mid_append.json"} <= names
    assert len(names) >= 8


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_corpus_trace_replays_to_its_expected_violations(path: Path) -> None:
    trace = loads(path.read_text(encoding="utf-8"), str(path))
    expect = trace.meta.get("expect", {}).get("violations")
    assert isinstance(expect, list), f"{path.name}: meta.expect.violations is missing"
    assert trace.meta.get("title") and trace.meta.get("story"), f"{path.name}: title/story"
    incidents = incidents_of(trace, load_system(trace.policy))
    found = sorted({i.kind.value for i in incidents if i.is_violation})
    assert found == sorted(expect), "\n".join(
        [f"{path.name}: expected {sorted(expect)}, replay gives {found}:"]
        + [f"  step {i.step + 1}: {i.kind.value}: {i.detail}" for i in incidents]
    )
