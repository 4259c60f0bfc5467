"""Labels of imported incidents read as the conversation's own words and
ids (issue 36): an observed policy was ``observed:@#2e5f5079 evict #b2ab4565
…`` and the digest stood at the head of every quoted user message."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prunecheck.model.events import AssistantChunk, IssueBatch, SystemPrompt, UserMessage
from prunecheck.model.observed import parse_observed
from prunecheck.model.system import replay
from prunecheck.sim.evidence.narrative import narrate
from prunecheck.sim.ingest.incident import import_conversation
from prunecheck.sim.ingest.reading import read_log
from prunecheck.sim.subjects.loader import load_system

ROOT = Path(__file__).resolve().parent.parent
LOGS = [
    *sorted((ROOT / "tests" / "data" / "telemetry").glob("*.json*")),
    ROOT / "examples" / "incident" / "spans.otlp.jsonl",
]
DIGEST = re.compile(r"#[0-9a-f]{8}")
#: A label: a logged call id (its result), #calls.ID (its batch), #ROLE-N.
OWN = re.compile(r"#(calls\.)?(?P<id>[A-Za-z0-9_.\-]+?)(\.\d+)?")
ROLE_N = re.compile(r"#(system|user|assistant)-\d+(\.\d+)?")


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_labels_are_the_conversations_own_ids_and_quoted_text_has_no_digest(log: Path) -> None:
    imported = False
    for name, requests in read_log([log]).conversations.items():
        done = import_conversation(name, requests)
        trace = done.trace
        calls = {c.id for r in requests for m in r.messages for c in m.calls}
        calls |= {m.answers for r in requests for m in r.messages if m.answers}
        policy = parse_observed(trace.policy)
        labels = {e.trigger for e in policy.entries} | {
            t.split("=")[0] for e in policy.entries for t in e.targets
        }
        for label in labels:
            assert not DIGEST.fullmatch(label), (log.name, trace.policy)
            match = OWN.fullmatch(label)
            assert ROLE_N.fullmatch(label) or (match and match["id"] in calls), label
        assert not DIGEST.search(trace.policy), trace.policy
        texts = [
            e.text
            for e in trace.events
            if isinstance(e, SystemPrompt | UserMessage | AssistantChunk | IssueBatch)
        ]
        assert not [t for t in texts if DIGEST.search(t)], texts
        story = narrate(trace, [s for s, _ in replay(trace, load_system(trace.policy))]).text()
        assert not DIGEST.search(story), story
        imported = True
    assert imported
