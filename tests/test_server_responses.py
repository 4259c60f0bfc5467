"""Server-side state is part of the trace (issue 34), OpenAI Responses:
a request chained by ``previous_response_id`` sends only what the server
does not hold, and a server compaction replaces what it holds; the judge
reads the context the model really sees, and a client-side trim the
server's copy makes ineffective is reported.  The example trace is
``tests/data/server/responses_chain_compaction.json``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from test_json_output import validator
from test_server_state import incidents, notes, run

from prunecheck.model.actions import Clear, Summarize
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import TraceError
from prunecheck.model.events import (
    CallSpec,
    Compaction,
    Event,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import RESULT_WITHOUT_CALL, Provider, first_rule
from prunecheck.model.runtime import step
from prunecheck.model.trace import Trace, dumps, has_server_events, loads
from prunecheck.sim.cli.app import main

EXAMPLE = Path(__file__).parent / "data" / "server" / "responses_chain_compaction.json"
RESPONSES = Provider("openai-responses")


def example() -> Trace:
    return loads(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE))


def test_the_example_is_deterministic_and_written_as_version_2() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    trace = loads(text, str(EXAMPLE))
    assert dumps(trace) == text
    assert json.loads(text)["version"] == 2 and has_server_events(trace.events)
    assert trace.config.provider == "openai-responses"
    assert trace.meta["title"] and trace.meta["story"]


def test_the_example_is_judged_on_the_context_the_model_sees() -> None:
    trace = example()
    steps, state = run(trace)
    found = incidents(steps)
    assert [i for i in found if i.is_violation] == []
    assert sorted({i.kind.value for i in found}) == trace.meta["expect"]["costs"]
    # Step 8: the client's recency trimmer evicts the first tool round from its copy ...
    assert "client evicted m3, m4" in notes(steps[7], NoteKind.EVICT)
    # ... step 9 chains to r2, which holds it: the trim had no effect.
    (trim,) = [i for i in found if i.kind is IncidentKind.INEFFECTIVE_TRIM]
    assert (trim.step, trim.ids, trim.reason) == (8, ("m3", "m4"), "server_holds")
    assert trim.detail.startswith(
        "this trim had no effect: the server holds those items (m3, m4), trimmed from the "
        "client's copy, in response r2"
    )
    assert not trim.is_violation
    assert notes(steps[8], NoteKind.INVOKE) == ["model invoked with 6 messages, 990 tokens"]
    assert state.context.used < 990  # what the client's copy counts is not what is judged
    (over,) = [i for i in found if i.kind is IncidentKind.HARD_CEILING_OVERRUN]
    assert over.step == 8 and over.detail.startswith("990 tokens in context at invocation")
    # Step 10: the server compacts what it holds; the model sees the compaction item.
    assert notes(steps[9], NoteKind.SERVER) == [
        "server compaction of response r3: m3, m4, m5, m6 replaced by compaction item m7 "
        "(830 → 120 tokens); the client's copy is unchanged"
    ]
    assert notes(steps[12], NoteKind.INVOKE) == ["model invoked with 5 messages, 410 tokens"]
    assert state.server is not None
    assert [m.id for m in state.server.held] == ["m1", "m2", "m7", "m8", "m9"]
    assert state.server.held["m7"].summary_of == ("m3", "m4", "m5", "m6")


def test_the_same_trim_without_previous_response_id_takes_effect() -> None:
    """The trim the server's copy makes ineffective, against the same events
    sent whole each time: then it frees what it meant to."""
    trace = example()
    unchained = [replace(e, chained=False) if isinstance(e, Invoke) else e for e in trace.events]
    steps, _ = run(trace.with_events(unchained))
    kinds = {i.kind for i in incidents(steps)}
    assert IncidentKind.INEFFECTIVE_TRIM not in kinds
    assert IncidentKind.HARD_CEILING_OVERRUN not in kinds
    assert notes(steps[8], NoteKind.INVOKE) == ["model invoked with 4 messages, 550 tokens"]
    chained_steps, _ = run(trace)
    assert IncidentKind.INEFFECTIVE_TRIM in {i.kind for i in incidents(chained_steps)}


def test_replay_reports_the_ineffective_trim_in_the_narrative_and_the_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert (
        "      !! cost: ineffective trim: this trim had no effect: the server holds those "
        "items (m3, m4)"
    ) in out
    assert "      request names previous_response_id r2: the server holds 5 item(s)" in out
    assert out.rstrip().endswith(
        "verdict: no violation; costs: 1 ineffective trim, 1 hard ceiling overrun."
    )
    assert main(["replay", str(EXAMPLE), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validator().validate(doc)  # the verdict schema its "schema_version" names
    assert doc["verdict"] == "safe"
    assert doc["details"]["incidents"] == {"hard_ceiling_overrun": 1, "ineffective_trim": 1}


def _split_call(view: ContextView, need: int) -> list[str]:
    """A trimmer that evicts the oldest call and keeps its result."""
    return [next(m.id for m in view.messages if m.tool_calls)]


def _split_trace(chained: bool) -> Trace:
    events: list[Event] = [
        SystemPrompt(10),
        UserMessage(10),
        Invoke(),
        IssueBatch((CallSpec("read_file", "a.py"),), 30),
        Invoke(chained=chained),  # blocked: the call is pending (nothing is sent)
        ResultChunk("c1", 80),
        Invoke(chained=chained),
    ]
    return Trace(
        "mine", RuntimeConfig(budget=100, hard_ceiling=400, provider=RESPONSES), tuple(events)
    )


def test_a_call_the_client_evicted_but_the_server_holds_is_not_rejected() -> None:
    """The client's copy is broken (its own incidents stand: they are the
    history it would send without the chain); the chained request is not."""
    steps, _ = run(_split_trace(chained=True), _split_call)
    kinds = [i.kind for i in incidents(steps)]
    assert IncidentKind.INVALID_PRUNE in kinds and IncidentKind.ORPHANED_RESULT in kinds
    assert IncidentKind.PROVIDER_REJECTION not in kinds
    assert [
        (i.step, i.ids) for i in incidents(steps) if i.kind is IncidentKind.INEFFECTIVE_TRIM
    ] == [(6, ("m3",))]
    steps, _ = run(_split_trace(chained=False), _split_call)
    (rejected,) = [i for i in incidents(steps) if i.kind is IncidentKind.PROVIDER_REJECTION]
    assert rejected.step == 6 and rejected.reason == "result_without_call"


def test_a_compaction_that_takes_a_pending_call_is_judged_as_a_summary() -> None:
    events: list[Event] = [
        SystemPrompt(50),
        UserMessage(40),
        Invoke(),
        IssueBatch((CallSpec("read_file", "a.py"),), 20),
        Compaction(30),
        ResultChunk("c1", 300),
        Invoke(chained=True),
    ]
    trace = Trace(
        "recency", RuntimeConfig(budget=5000, hard_ceiling=6000, provider=RESPONSES), tuple(events)
    )
    steps, state = run(trace)
    (cut,) = [i for i in incidents(steps) if i.kind is IncidentKind.INVALID_PRUNE]
    assert (cut.step, cut.reason, cut.ids) == (4, "pending_unit", ("m3", "c1"))
    assert cut.detail == "server compaction of response r1 touches unit m3 while call c1 is pending"
    (rejected,) = [i for i in incidents(steps) if i.kind is IncidentKind.PROVIDER_REJECTION]
    assert (rejected.step, rejected.reason, rejected.ids) == (6, "result_without_call", ("c1",))
    # Rules' text for a function_call_output whose call is gone, verbatim.
    assert rejected.text == first_rule(RESPONSES, RESULT_WITHOUT_CALL).text("", ("c1",))
    assert rejected.text == "No tool call found for function call output with call_id c1."
    assert (
        state.server is not None and state.server.response == 1
    )  # a rejected request stores nothing


def test_a_new_session_drops_the_chain() -> None:
    events: list[Event] = [SystemPrompt(5), UserMessage(5), Invoke(), NewSession(), UserMessage(5)]
    _, state = run(Trace("recency", RuntimeConfig(provider=RESPONSES), tuple(events)))
    assert state.server is None
    with pytest.raises(TraceError, match="no stored response before it"):
        run(Trace("recency", RuntimeConfig(provider=RESPONSES), (*events, Invoke(chained=True))))


def test_step_is_pure_with_server_state() -> None:
    trace = example()
    _, state = run(trace.with_events(trace.events[:8]))
    assert state.server is not None
    held = [m.id for m in state.server.held]
    after, _ = step(state, Invoke(chained=True))
    assert [m.id for m in state.server.held] == held and state.server.response == 2
    assert after.server is not None and after.server.response == 3


@pytest.mark.parametrize(
    "action, trimmed, seen",
    [
        (Clear("m4"), ("m4",), ["m1", "m2", "m3", "m4", "m5", "m6"]),
        (
            Summarize(("m3", "m4"), tokens=20),
            ("m3", "m4"),
            ["m1", "m2", "m3", "m4", "m5", "m6", "m7"],
        ),
    ],
    ids=["clear", "summarize"],
)
def test_a_clear_or_a_summary_of_held_items_has_no_effect_either(
    action: Clear | Summarize, trimmed: tuple[str, ...], seen: list[str]
) -> None:
    """A client that clears a result the server holds sends nothing for it
    (the server keeps it whole); a client summary is sent, beside the
    originals the server still holds."""
    done: list[bool] = []

    def once(view: ContextView, need: int) -> list[Clear | Summarize]:
        if done:
            return []
        done.append(True)
        return [action]

    events: list[Event] = [
        SystemPrompt(10),
        UserMessage(10),
        Invoke(),
        IssueBatch((CallSpec("read_file", "a.py"),), 30),
        ResultChunk("c1", 80),
        Invoke(chained=True),
        IssueBatch((CallSpec("grep", "src"),), 30),
        ResultChunk("c2", 80),
        Invoke(chained=True),
    ]
    config = RuntimeConfig(budget=200, hard_ceiling=400, provider=RESPONSES)
    steps, state = run(Trace("mine", config, tuple(events)), once)
    (trim,) = [i for i in incidents(steps) if i.kind is IncidentKind.INEFFECTIVE_TRIM]
    assert (trim.step, trim.ids) == (8, trimmed)
    assert state.server is not None
    assert [m.id for m in state.server.held] == seen
    assert not any(m.cleared for m in state.server.held)


def test_the_verdict_schema_knows_every_provider_a_runtime_may_name() -> None:
    """A replay under openai-responses (or any provider) writes a document its
    own schema accepts."""
    from test_json_output import SCHEMA

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    provider = schema["$defs"]["runtime"]["properties"]["provider"]
    assert provider["enum"] == [p.value for p in Provider]
