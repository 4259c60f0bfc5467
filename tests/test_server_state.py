"""Server-side state is part of the trace (issue 34): Anthropic's
``clear_tool_uses`` is an event and the judge reads the context the model
really sees; traces without server events stay version 1; a runtime under
test refuses server events.  The OpenAI Responses chain and compaction are
in ``tests/test_server_responses.py``, which reuses the helpers here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.errors import TraceError
from prunecheck.model.events import (
    CallSpec,
    ClearToolUses,
    Compaction,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.incidents import Incident
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import as_policy, builtin_policy
from prunecheck.model.server import SERVER_PLACEHOLDER, tool_uses_to_clear
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import replay
from prunecheck.model.trace import Trace, TraceStep, dumps, has_server_events, loads

CORPUS = Path(__file__).parent / "corpus"


def run(trace: Trace, policy: object = None) -> tuple[list[TraceStep], RuntimeState]:
    chosen = builtin_policy(trace.policy) if policy is None else as_policy(policy, "mine")
    assert chosen is not None
    steps: list[TraceStep] = []
    final: RuntimeState | None = None
    for item, final in replay(trace, ModelSystem(chosen)):  # noqa: B007 (the last state is kept)
        steps.append(item)
    assert final is not None
    return steps, final


def incidents(steps: list[TraceStep]) -> list[Incident]:
    return [i for s in steps for i in s.result.incidents]


def notes(item: TraceStep, kind: NoteKind) -> list[str]:
    return [n.text for n in item.result.notes if n.kind is kind]


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_traces_without_server_events_stay_version_1(path: Path) -> None:
    trace = loads(path.read_text(encoding="utf-8"), str(path))
    assert not has_server_events(trace.events)
    assert json.loads(dumps(trace))["version"] == 1


def test_a_runtime_under_test_refuses_server_events() -> None:
    from prunecheck.model.state import initial_state
    from prunecheck.sim.subjects.runtimes.rendering import render

    shadow = initial_state(RuntimeConfig(), as_policy(lambda view, need: [], "mine"))
    for event in (Compaction(5), ClearToolUses(), Invoke(chained=True)):
        with pytest.raises(TraceError, match="a server-side event"):
            render(shadow, event, rejected=False)


def _tools(keep: int = 1, **edit: object) -> Trace:
    calls = (CallSpec("read_file", "a.py"), CallSpec("memory"), CallSpec("read_file", "b.py"))
    events: list[Event] = [
        SystemPrompt(50),
        ClearToolUses(keep=keep, **edit),  # type: ignore[arg-type]
        UserMessage(40),
        Invoke(),
        IssueBatch(calls, 30),
        ResultChunk("c1", 300),
        ResultChunk("c2", 200),
        ResultChunk("c3", 250),
        Invoke(),
    ]
    return Trace("recency", RuntimeConfig(budget=5000, hard_ceiling=6000), tuple(events))


def test_clear_tool_uses_clears_old_results_on_the_server_only() -> None:
    steps, state = run(_tools(keep=1, trigger=500, exclude_tools=("memory",)))
    assert incidents(steps) == []  # an honest placeholder: nothing to report
    assert notes(steps[8], NoteKind.SERVER) == [
        "server clears m4 to a placeholder (clear_tool_uses: 292 tokens freed, the model sees "
        "578); the client's copy is unchanged"
    ]
    assert notes(steps[8], NoteKind.INVOKE) == ["model invoked with 6 messages, 578 tokens"]
    assert not any(m.cleared for m in state.context)  # the client's copy stays whole
    assert state.context.used == 870


@pytest.mark.parametrize(
    "edit, cleared",
    [
        ({"trigger": 870}, []),  # at the trigger, not over it
        ({"trigger": 500}, ["m4", "m5"]),  # keep 1: c3's result stays
        ({"trigger": 500, "keep": 0}, ["m4", "m5", "m6"]),
        ({"trigger": 500, "exclude_tools": ("memory",)}, ["m4"]),
        ({"trigger": 500, "clear_at_least": 493}, []),  # frees 484: not applied
        ({"trigger": 500, "clear_at_least": 484}, ["m4", "m5"]),
        ({"trigger": 500, "keep": 0, "clear_tool_inputs": True}, ["m4", "m5", "m6", "m3"]),
    ],
)
def test_clear_tool_uses_settings(edit: dict[str, object], cleared: list[str]) -> None:
    settings = {"keep": 1, **edit}
    view = _context()
    tools = {"c1": "read_file", "c2": "memory", "c3": "read_file"}
    out, freed = tool_uses_to_clear(view, ClearToolUses(**settings), tools.__getitem__)  # type: ignore[arg-type]
    assert [m.id for m in out] == cleared
    assert freed == sum(view[m.id].tokens - m.tokens for m in out)
    assert all(m.cleared and m.text == SERVER_PLACEHOLDER for m in out)


def _context() -> Context:
    ctx = Context()
    ctx.append(Message("m1", Role.SYSTEM, 50, 0, 0.0, unit_id="m1"))
    ctx.append(Message("m2", Role.USER, 40, 1, 0.0, unit_id="m2"))
    ctx.append(
        Message("m3", Role.ASSISTANT, 30, 1, 0.0, tool_calls=("c1", "c2", "c3"), unit_id="m3")
    )
    for mid, cid, tokens in (("m4", "c1", 300), ("m5", "c2", 200), ("m6", "c3", 250)):
        ctx.append(Message(mid, Role.TOOL, tokens, 1, 0.0, call_id=cid, unit_id="m3"))
    return ctx


def test_the_server_placeholder_is_honest_by_the_projects_rule() -> None:
    from prunecheck.sim.subjects.loops.placeholder import ruling

    said = ruling(SERVER_PLACEHOLDER, ran="ok", call_words=())
    assert (said.honest, said.rule) == (True, "cleared")
