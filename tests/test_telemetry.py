"""The telemetry readers and the request differ (sim/ingest/), and
the observed policy that replays a log's removals (model/observed.py):
partial logs import with their gaps named, never guessed at."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.context import Role
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import IssueBatch, ResultChunk, SystemPrompt, UserMessage
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.observed import ObservedPolicy, parse_observed
from prunecheck.model.provider import Provider
from prunecheck.model.system import incidents_of
from prunecheck.sim.ingest.bodies import provider_message, read_body
from prunecheck.sim.ingest.differ import diff_requests
from prunecheck.sim.ingest.incident import import_conversation
from prunecheck.sim.ingest.reading import read_log
from prunecheck.sim.ingest.records import (
    LogFormat,
    LoggedCall,
    LoggedMessage,
    LoggedRequest,
    Source,
)
from prunecheck.sim.subjects.loader import load_policy, load_system

DATA = Path(__file__).resolve().parent / "data" / "telemetry"


def _request(n: int, *messages: LoggedMessage, rejection: str | None = None) -> LoggedRequest:
    return LoggedRequest(
        "c", float(n), Source("log", f"line {n}"), Provider.OPENAI, LogFormat.OPENAI_CHAT,
        messages, rejection=rejection,
    )  # fmt: skip


SYS = LoggedMessage(Role.SYSTEM, "system prompt")
USER = LoggedMessage(Role.USER, "read three files")
BATCH = LoggedMessage(
    Role.ASSISTANT, "", tuple(LoggedCall(f"call_{i}", "read_file", "{}") for i in (1, 2, 3))
)
RESULTS = tuple(LoggedMessage(Role.TOOL, f"file {i} " * 40, answers=f"call_{i}") for i in (1, 2, 3))
MORE = LoggedMessage(Role.USER, "and the fourth?")


def _import(*requests: LoggedRequest) -> Any:
    return import_conversation("c", requests)


def _replayed(trace: Any) -> list[Any]:
    return incidents_of(trace, load_system(trace.policy))


# ------------------------------------------------------------------ differ
def test_a_removed_assistant_message_whose_results_stay_is_a_cut() -> None:
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, USER, *RESULTS, MORE))
    cut, unlogged = done.findings
    assert cut.bad and "removed the assistant message holding calls call_1, call_2, call_3" in (
        cut.text
    )
    assert unlogged.bad and "but the log holds no error for it" in unlogged.text
    assert "between request 1 (00:00:01) and request 2 (00:00:02)" in done.findings[0].text
    kinds = [i.kind for i in _replayed(done.trace)]
    assert IncidentKind.INVALID_PRUNE in kinds and IncidentKind.ORPHANED_RESULT in kinds


def test_a_whole_unit_removed_is_named_whole_and_replays_clean() -> None:
    later = LoggedMessage(Role.USER, "and now?")
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, later))
    assert not any(f.bad for f in done.findings)
    assert any("a whole closed unit" in f.text for f in done.findings)
    assert not [i for i in _replayed(done.trace) if i.is_violation]


def test_calls_known_only_from_their_results_are_inferred_and_said_so() -> None:
    done = _import(_request(1, SYS, USER), _request(2, SYS, USER, *RESULTS))
    assert any("known only from their results" in g for g in done.gaps)
    batches = [e for e in done.trace.events if isinstance(e, IssueBatch)]
    assert [c.path for c in batches[0].calls] == ["#call_1", "#call_2", "#call_3"]
    assert any(i.kind is IncidentKind.ORPHANED_RESULT for i in _replayed(done.trace))


def test_a_result_that_never_appears_is_delivered_and_removed_with_the_gap_named() -> None:
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS[:2]))
    assert any("it never arrived or the runtime dropped it" in g for g in done.gaps)
    results = [e for e in done.trace.events if isinstance(e, ResultChunk)]
    assert results[-1].tokens == 1
    assert any(i.kind is IncidentKind.UNANSWERED_CALL for i in _replayed(done.trace))


def test_a_rewritten_result_is_a_clear_and_a_summary_replaces_what_it_stands_for() -> None:
    short = LoggedMessage(Role.TOOL, "[cleared]", answers="call_1")
    cleared = diff_requests(
        [
            _request(1, SYS, USER, BATCH, *RESULTS),
            _request(2, SYS, USER, BATCH, short, *RESULTS[1:]),
        ]
    )
    assert [(i.label, n) for i, n in cleared.steps[1].cleared] == [("#call_1", 3)]
    summary = LoggedMessage(Role.USER, "summary: three files read")
    later = LoggedMessage(Role.USER, "next")
    steps = diff_requests(
        [_request(1, SYS, USER, BATCH, *RESULTS, later), _request(2, SYS, summary, later)]
    ).steps
    ((written, group),) = steps[1].summaries
    assert written.message is summary
    assert [i.message for i in group] == [USER, BATCH, *RESULTS]


def test_a_message_sent_again_after_its_removal_is_a_gap() -> None:
    again = _import(
        _request(1, SYS, USER),
        _request(2, SYS),
        _request(3, SYS, USER, LoggedMessage(Role.USER, "x")),
    )
    assert any("the trace cannot put it back" in g for g in again.gaps)


def test_the_budget_is_the_largest_request_unless_a_removal_came_earlier() -> None:
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, USER, *RESULTS))
    assert done.trace.config.budget == max(
        r.tokens
        for r in (_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, USER, *RESULTS))
    )
    assert done.trace.config.check_at == "before_invoke"


# ----------------------------------------------------------------- readers
def _spans(edit: Any) -> str:
    data = json.loads((DATA / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8"))
    scope = data["resourceSpans"][0]["scopeSpans"][0]
    scope["spans"] = [s for s in (edit(i, s) for i, s in enumerate(scope["spans"])) if s]
    return json.dumps(data)


def _chat_spans(data: str) -> list[int]:
    return [i for i, s in enumerate(json.loads(data)["resourceSpans"][0]["scopeSpans"][0]["spans"])
            if s["name"].startswith("chat")]  # fmt: skip


def test_a_missing_span_imports_with_the_missing_call_named(tmp_path: Path) -> None:
    chats = _chat_spans((DATA / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8"))
    path = tmp_path / "spans.jsonl"
    path.write_text(_spans(lambda i, s: None if i == chats[1] else s))
    ((name, requests),) = read_log([path]).conversations.items()
    done = import_conversation(name, requests)
    assert done.imported == 2
    assert any(
        "a model call between request 1 and 2 is missing from the log" in g for g in done.gaps
    )
    assert any(i.kind is IncidentKind.PROVIDER_REJECTION for i in _replayed(done.trace))


def test_a_truncated_span_is_left_out_with_its_gap_and_the_rest_imports(tmp_path: Path) -> None:
    chats = _chat_spans((DATA / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8"))

    def cut(i: int, span: dict[str, Any]) -> dict[str, Any]:
        if i == chats[1]:
            for a in span["attributes"]:
                if a["key"] == "gen_ai.input.messages":
                    a["value"]["stringValue"] = a["value"]["stringValue"][:300]
        return span

    path = tmp_path / "spans.jsonl"
    path.write_text(_spans(cut))
    log = read_log([path])
    assert "cut off or not JSON" in log.gaps["conv-cut-batch"][0]
    assert len(log.conversations["conv-cut-batch"]) == 2


def test_a_conversation_split_over_files_imports_as_one_in_time_order(tmp_path: Path) -> None:
    lines = (DATA / "raw_chat_cut.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "b.jsonl").write_text("".join(lines[:2]))  # the earlier half, in the later name
    (tmp_path / "a.jsonl").write_text("".join(lines[2:]))
    split = read_log([tmp_path / "a.jsonl", tmp_path / "b.jsonl"]).conversations
    whole = read_log([DATA / "raw_chat_cut.jsonl"]).conversations
    assert [r.messages for r in split["conv-cut-batch"]] == [
        r.messages for r in whole["conv-cut-batch"]
    ]


def test_what_a_body_cannot_tell_is_named() -> None:
    *_, blind = read_body(
        {"input": [{"type": "compaction", "encrypted_content": "gAAA"},
                   {"role": "user", "content": "go on"}], "previous_response_id": "resp_1"},
        "request",
    )  # fmt: skip
    assert any("previous_response_id" in b for b in blind)
    assert any("encrypted compaction item" in b for b in blind)
    *_, blind = read_body(
        {"system": "s", "messages": [{"role": "user", "content": "hi"}],
         "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}},
        "request",
    )  # fmt: skip
    assert any("context_management" in b for b in blind)
    _, _, messages, blind = read_body(
        {"system": "s", "messages": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "they met"}]},
            {"role": "user", "content": "again"}]},
        "request",
    )  # fmt: skip
    assert "messages[2] holds a compaction block: Anthropic ignores the 2 message(s)" in blind[0]
    assert [m.text for m in messages][-2:] == ["they met", "again"]  # its summary is read


def test_sdk_error_strings_give_the_providers_own_words() -> None:
    text = (
        "Error code: 400 - {'type': 'error', 'error': {'type': 'invalid_request_error', "
        "'message': 'messages.1: `tool_use` ids were found without `tool_result` blocks'}}"
    )
    assert provider_message(text) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks",
        400,
    )


# --------------------------------------------------------- observed policy
def test_the_observed_spec_round_trips_and_bad_entries_are_refused() -> None:
    spec = "observed:@#u2 evict #calls.c_1 #c_2; @#u3 clear #c_3=8; @#u4 summarize #a #b as #s=20"
    assert parse_observed(spec).spec() == spec
    assert load_policy(spec).name == "observed"
    for bad in ("observed:evict #a", "observed:@#t nuke #a", "observed:@#t summarize #a #b"):
        with pytest.raises(PolicyError, match="observed policy entry 1"):
            parse_observed(bad)


def test_a_request_that_adds_nothing_has_its_removals_named_not_replayed() -> None:
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, USER, *RESULTS))
    assert any("adds nothing to request 1" in g for g in done.gaps)
    assert done.trace.policy == "observed:"


def test_the_observed_policy_removes_by_label_so_a_shorter_trace_removes_the_same() -> None:
    done = _import(_request(1, SYS, USER, BATCH, *RESULTS), _request(2, SYS, USER, *RESULTS, MORE))
    policy = load_policy(done.trace.policy)
    assert isinstance(policy, ObservedPolicy)
    # Without the system prompt (its tokens moved to the user message, so the check
    # is as far over budget) every message id shifts by one; the same message goes.
    system = next(e for e in done.trace.events if isinstance(e, SystemPrompt))
    shorter = done.trace.with_events(
        [
            replace(e, tokens=e.tokens + system.tokens) if isinstance(e, UserMessage) else e
            for e in done.trace.events
            if e is not system
        ]
    )
    kinds = [i.kind for i in incidents_of(shorter, ModelSystem(policy))]
    assert IncidentKind.ORPHANED_RESULT in kinds
    users = [e for e in done.trace.events if isinstance(e, UserMessage)]
    assert users[0].text.startswith("#")


def test_odd_orders_import_to_possible_events() -> None:
    """Found by mutating logged requests: a result logged after the model's next
    message, and results sent twice before their call, still give a trace the
    runtime can replay (every call answered before the model speaks)."""
    text = LoggedMessage(Role.ASSISTANT, "done")
    late = _import(_request(1, SYS, USER, BATCH, RESULTS[0], text, *RESULTS[1:]))
    twice = _import(_request(1, SYS, USER, RESULTS[2], RESULTS[2], RESULTS[0], BATCH))
    for done in (late, twice):
        _replayed(done.trace)  # raises TraceError on an impossible event
    assert any("second assistant message" in g for g in twice.gaps)


def _objects(text: str) -> list[Any]:
    """JSON values one after another (JSON lines, or the SDK's pretty objects)."""
    decoder, at = json.JSONDecoder(), 0
    out: list[Any] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return out
        value, at = decoder.raw_decode(text, at)
        out.append(value)


def test_mutated_logs_give_an_import_or_one_paragraph_never_a_crash(tmp_path: Path) -> None:
    """Seeded mutations of the generated logs (a field set to another JSON type)
    import, or raise prunecheck's own error; nothing else escapes."""
    import random

    from prunecheck.model.errors import PrunecheckError

    rng = random.Random(7)
    files = sorted(p for p in DATA.iterdir() if p.suffix in (".json", ".jsonl"))
    values: list[object] = [None, 1, "x", [], {}, [1], {"a": 1}, True, '[{"role": 1}]']
    for trial in range(60):
        source = files[trial % len(files)]
        records = _objects(source.read_text())
        for _ in range(2):
            node: Any = rng.choice(records)
            while isinstance(node, dict | list) and node and rng.random() < 0.8:
                keys = list(node) if isinstance(node, dict) else list(range(len(node)))
                key = rng.choice(keys)
                if not isinstance(node[key], dict | list) or rng.random() < 0.3:
                    node[key] = rng.choice(values)
                    break
                node = node[key]
        path = tmp_path / f"m{trial}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        try:
            for name, requests in read_log([path]).conversations.items():
                done = import_conversation(name, requests)
                _replayed(done.trace)
        except PrunecheckError as exc:
            assert "events[" not in exc.subject, (source.name, exc.paragraph())
