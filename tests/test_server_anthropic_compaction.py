"""Anthropic's server compaction as an event (issue 34): the response's
compaction block stays in the client's history, the server ignores what it
replaced while the client sends it, the judge reads that effective context,
and a client-side trim of replaced messages is reported as having no
effect."""

from __future__ import annotations

from test_server_state import incidents, notes, run

from prunecheck.model.actions import Evict
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    CallSpec,
    Compaction,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import Provider
from prunecheck.model.trace import Trace

ANTHROPIC = RuntimeConfig(budget=5000, hard_ceiling=6000, provider=Provider.ANTHROPIC)


def _events(*tail: Event) -> tuple[Event, ...]:
    return (
        SystemPrompt(50),
        UserMessage(40),
        Invoke(),
        IssueBatch((CallSpec("read_file", "a.py"),), 20),
        ResultChunk("c1", 300),
        Invoke(),
        *tail,
    )


def test_the_block_replaces_the_history_for_the_model_not_for_the_client() -> None:
    steps, state = run(Trace("recency", ANTHROPIC, _events(Compaction(30), UserMessage(10),
                                                             Invoke())))  # fmt: skip
    assert incidents(steps) == []
    (said,) = notes(steps[6], NoteKind.SERVER)
    assert said.startswith("server compaction (Anthropic): the response carries compaction "
                           "block m5, which replaces m2, m3, m4 for the model")  # fmt: skip
    assert state.context.ids() == ["m1", "m2", "m3", "m4", "m5", "m6"]  # the client keeps all
    assert notes(steps[8], NoteKind.INVOKE) == ["model invoked with 3 messages, 90 tokens"]


def test_a_compaction_that_takes_a_pending_call_is_an_invalid_prune_and_then_a_400() -> None:
    events = (SystemPrompt(50), UserMessage(40), Invoke(),
              IssueBatch((CallSpec("read_file", "a.py"),), 20), Compaction(30),
              ResultChunk("c1", 300), Invoke())  # fmt: skip
    steps, _ = run(Trace("recency", ANTHROPIC, events))
    (cut,) = [i for i in incidents(steps) if i.kind is IncidentKind.INVALID_PRUNE]
    assert (cut.step, cut.reason, cut.ids) == (4, "pending_unit", ("m3", "c1"))
    (rejected,) = [i for i in incidents(steps) if i.kind is IncidentKind.PROVIDER_REJECTION]
    assert (rejected.step, rejected.reason, rejected.ids) == (6, "result_without_call", ("c1",))


def test_a_client_trim_of_what_the_block_replaced_has_no_effect() -> None:
    done: list[bool] = []

    def evict_the_old_unit(view: ContextView, need: int) -> list[Evict]:
        if done or "m5" not in {m.id for m in view.messages}:
            return []
        done.append(True)
        return [Evict("m3"), Evict("m4")]

    config = RuntimeConfig(budget=420, hard_ceiling=6000, provider=Provider.ANTHROPIC)
    events = _events(Compaction(30), UserMessage(10), Invoke())
    steps, state = run(Trace("mine", config, events), evict_the_old_unit)
    assert done and "m3" not in state.context
    (trim,) = [i for i in incidents(steps) if i.kind is IncidentKind.INEFFECTIVE_TRIM]
    assert trim.ids == ("m3", "m4") and trim.reason == "server_compacted"
    assert "compaction block m5 already replaced those messages" in trim.detail
    assert not [i for i in incidents(steps) if i.is_violation]


def test_without_the_block_the_server_sees_the_client_copy_again() -> None:
    done: list[bool] = []

    def evict_the_block(view: ContextView, need: int) -> list[Evict]:
        if done or "m5" not in {m.id for m in view.messages}:
            return []
        done.append(True)
        return [Evict("m5")]

    config = RuntimeConfig(budget=440, hard_ceiling=6000, provider=Provider.ANTHROPIC)
    steps, _ = run(Trace("mine", config, _events(Compaction(30), UserMessage(10), Invoke())),
                   evict_the_block)  # fmt: skip
    assert done
    assert notes(steps[-1], NoteKind.INVOKE) == ["model invoked with 5 messages, 420 tokens"]
